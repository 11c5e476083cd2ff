import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { maybeContextOf } from "../context/request-context";

/**
 * A client that stops reading must not hold an answer the gateway has finished writing (and the memory it is
 * buffered in) for long. Once the whole answer is handed to the socket ('prefinish'), what Node still buffers must
 * shrink at least once every `ms`; a client that takes none of it for that long is disconnected. Nothing is
 * timed when the kernel took the whole answer at once (the usual case): the buffer is already empty.
 */
export function boundStall(res: ServerResponse, ms: number): void {
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
}

/**
 * Resolves when the socket can take more data, or when the client is gone (then nothing more is written).
 * A client that takes nothing for `stallMs` is disconnected.
 */
export async function writable(res: ServerResponse, stallMs: number): Promise<void> {
  // Nothing buffered is nothing to wait for, whatever the flag says (it can be left set: nodejs/node#60432).
  if (!res.writableNeedDrain || res.destroyed || res.writableLength === 0) return;
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

function stalled(res: ServerResponse): void {
  const ctx = maybeContextOf(res);
  if (ctx) ctx.log.clientStalled = true;
  res.destroy();
}
