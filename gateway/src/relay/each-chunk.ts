import type { Readable } from "node:stream";

/** What a chunk's handler says: go on, stop (the stream is let go), or wait for this before the next chunk. */
export type ChunkVerdict = void | "stop" | Promise<unknown>;

/**
 * Hands a stream's chunks to `onChunk` as they come, from its 'data' events: an async iterator costs a promise
 * and a microtask turn a chunk, about a microsecond, a large share of what a relayed stream event costs. Ends as a
 * for-await loop over the stream would: resolves at its end or when `onChunk` says "stop" (the stream is
 * destroyed, as leaving the loop does); rejects with its error, with what `onChunk` threw, or when it closes
 * before its end. While a promise `onChunk` returned is pending, the stream is paused.
 */
export function eachChunk(body: Readable, onChunk: (chunk: Buffer) => ChunkVerdict): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      body.off("data", onData).off("end", onEnd).off("close", onClose);
      if (err === undefined) resolve();
      else reject(err instanceof Error ? err : new Error(String(err)));
    };
    const stop = (err?: unknown) => {
      settle(err);
      body.destroy();
    };
    const onData = (chunk: Buffer) => {
      let verdict: ChunkVerdict;
      try {
        verdict = onChunk(chunk);
      } catch (err) {
        return stop(err ?? new Error("chunk handler failed"));
      }
      if (verdict === "stop") return stop();
      if (verdict) {
        body.pause();
        verdict.then(
          () => void (settled || body.resume()),
          (err: unknown) => stop(err ?? new Error("chunk handler failed")),
        );
      }
    };
    const onEnd = () => settle();
    const onClose = () => settle(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    // Kept after settling: an error after the end (or after "stop") is nobody's to handle, and must not crash.
    body.on("error", (err) => settle(err));
    body.on("data", onData).once("end", onEnd).once("close", onClose);
  });
}
