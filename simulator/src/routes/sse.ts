import type { Response } from "express";
import type { VllmErrorBody } from "../errors";

/** Server-sent events framed as vLLM frames them: `data: <json>\n\n`, ending with `data: [DONE]\n\n`. */

export function startEventStream(res: Response): void {
  res.status(200);
  res.setHeader("content-type", "text/event-stream; charset=utf-8");
  res.setHeader("cache-control", "no-cache");
  // Headers go out before queueing/prefill, as vLLM's StreamingResponse does.
  res.flushHeaders();
}

export function writeEvent(res: Response, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

export function writeDone(res: Response): void {
  res.write("data: [DONE]\n\n");
}

/** A named event, as the Responses API frames each one: `event: <type>\ndata: <json>\n\n` (no [DONE] at the end). */
export function writeNamedEvent(res: Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * How an error after the 200 goes into this response's stream. Chat and completions use vLLM's
 * `data: {"error": …}` then `[DONE]` (the default); an endpoint with another framing registers its own.
 */
export type StreamErrorWriter = (error: VllmErrorBody["error"]) => void;

export function setStreamErrorWriter(res: Response, writer: StreamErrorWriter): void {
  res.locals.writeStreamError = writer;
}

export function writeStreamError(res: Response, body: VllmErrorBody): void {
  const writer = res.locals.writeStreamError as StreamErrorWriter | undefined;
  if (writer) {
    writer(body.error);
    return;
  }
  writeEvent(res, body);
  writeDone(res);
}
