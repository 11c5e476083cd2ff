import type { ServerResponse } from "node:http";

/** Commits the response to a 200 event stream and sends its head now. */
export function startEventStream(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader("content-type", "text/event-stream; charset=utf-8");
  res.setHeader("cache-control", "no-cache");
  res.setHeader("x-accel-buffering", "no");
  res.flushHeaders();
}
