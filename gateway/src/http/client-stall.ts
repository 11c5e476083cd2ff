import { once } from "node:events";
import type { NextFunction, Request, Response } from "express";
import { requestLog } from "./request-log";

/**
 * A client that stops reading must not hold a response (and the memory it is buffered in, and for a stream a
 * model slot) forever. While a response waits for the client to accept bytes, at most `ms` pass; then the
 * connection is closed, which also cancels the upstream request.
 */
export function boundClientStalls(ms: number) {
  return (_req: Request, res: Response, next: NextFunction) => {
    // 'prefinish': the whole answer is handed to the socket; 'finish': the client has taken it.
    res.once("prefinish", () => {
      if (res.writableFinished) return;
      const timer = setTimeout(() => stalled(res), ms);
      timer.unref();
      const clear = () => clearTimeout(timer);
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
