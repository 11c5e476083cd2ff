import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger };

/**
 * JSON logs on stdout (the collector ships them). Authorization and cookies are redacted at the source, in
 * case a request object is ever logged whole; request lines are built from chosen fields anyway.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "gateway" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ["req.headers.authorization", "req.headers.cookie", "headers.authorization", "authorization", "apiKey"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}
