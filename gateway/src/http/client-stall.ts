import { once } from "node:events";
import type { NextFunction, Request, Response } from "express";
import { requestLog } from "./request-log";

/**
 * A client that stops reading must not hold an answer the gateway has finished writing (and the memory it is
 * buffered in) for long. Once the whole answer is handed to the socket ('prefinish'), what Node still buffers must
 * shrink at least once every `ms`; a client that takes none of it for that long is disconnected. Nothing is
 * timed when the kernel took the whole answer at once (the usual case): the buffer is already empty.
 */
export function boundClientStalls(ms: number) {
  return (_req: Request, res: Response, next: NextFunction) => {
    res.once("prefinish", () => {
      if (res.writableFinished || res.writableLength === 0) return;
      let left = res.writableLength;
      const timer = setInterval(() => {
        const now = res.writableLength;
        if (now < left) left = now;
        else stalled(res);
      }, ms);
      timer.unref();
      const clear = () => clearInterval(timer);
      res.once("finish", clear).once("close", clear);
    });
    next();
  };
}

/**
 * Resolves when the socket can take more data, or when the client is gone (then nothing more is written).
 * A client that takes nothing for `stallMs` is disconnected.
 */
export async function writable(res: Response, stallMs: number): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return;
  const ac = new AbortController();
  const timer = setTimeout(() => {
    ac.abort();
    stalled(res);
  }, stallMs);
  try {
    await Promise.race([once(res, "drain", { signal: ac.signal }), once(res, "close", { signal: ac.signal })]);
  } catch {
    /* aborted: the stall timer closed the response */
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

function stalled(res: Response): void {
  if (res.locals.log) requestLog(res).clientStalled = true;
  res.destroy();
}
