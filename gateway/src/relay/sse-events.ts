import type { ServerResponse } from "node:http";
import type { ApiError } from "../api/errors";

/** An error as an SSE event, in the envelope (as vLLM sends errors once a stream started). */
export function sseErrorEvent(err: ApiError): string {
  return `data: ${JSON.stringify(err.toEnvelope())}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

/** Commits the response to a 200 event stream and sends its head now. */
export function startEventStream(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader("content-type", "text/event-stream; charset=utf-8");
  res.setHeader("cache-control", "no-cache");
  res.setHeader("x-accel-buffering", "no");
  res.flushHeaders();
}
