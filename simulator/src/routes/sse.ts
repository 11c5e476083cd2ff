import type { Response } from "express";

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
