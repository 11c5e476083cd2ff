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
    destination ?? bufferedStdout(),
  );
}

/**
 * One write(2) per request line is a measurable share of the gateway's CPU under load, so lines are batched
 * (up to 4 KiB, flushed at least every 250 ms, and on exit by pino itself).
 */
function bufferedStdout(): DestinationStream {
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => dest.flush(), 250).unref();
  return dest;
}
