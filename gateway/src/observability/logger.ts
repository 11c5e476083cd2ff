import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger };

/**
 * Longest log line written, in bytes. Container runtimes split lines over 16 KiB into partial records and the
 * log store (Loki) refuses lines over 256 KB, so a longer line would be mangled or lost, with the evidence of
 * whatever produced it. Fields that clients control are bounded at the source; this is the backstop.
 */
export const MAX_LOG_LINE_BYTES = 8 * 1024;
/** How much of an over-long line is kept, as a string inside the replacement line. */
const KEPT_HEAD_CHARS = 1024;

/** An over-long line becomes a short, valid JSON line that says so and keeps its beginning. */
export function capLine(line: string): string {
  // A line's UTF-8 size is at most 3 bytes per UTF-16 unit: only measure when it could be over.
  if (line.length * 3 <= MAX_LOG_LINE_BYTES || Buffer.byteLength(line) <= MAX_LOG_LINE_BYTES) return line;
  const level = /^\{"level":(\d+)/.exec(line)?.[1] ?? "40";
  return `${JSON.stringify({
    level: Number(level),
    time: new Date().toISOString(),
    service: "gateway",
    msg: "log line over the line limit, cut",
    lineBytes: Buffer.byteLength(line),
    head: line.slice(0, KEPT_HEAD_CHARS),
  })}\n`;
}

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
      hooks: { streamWrite: capLine },
    },
    destination ?? bufferedStdout(),
  );
}

/** Most log bytes waiting for stdout: a stdout that stops taking them (a stuck collector) costs at most this. */
export const MAX_PENDING_LOG_BYTES = 8 * 1024 * 1024;

/**
 * Logging never blocks a request: lines are written asynchronously, batched (one write(2) per line was a
 * measurable share of the gateway's CPU under load; up to 4 KiB a write, flushed at least every 250 ms, and on
 * exit by pino itself), and the buffer is bounded: past MAX_PENDING_LOG_BYTES, lines are dropped, not queued.
 */
function bufferedStdout(): DestinationStream {
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096, maxLength: MAX_PENDING_LOG_BYTES });
  setInterval(() => dest.flush(), 250).unref();
  return dest;
}
