import type { Readable } from "node:stream";

/** What a chunk's handler says: go on, stop (the stream is let go), or wait for this before the next chunk. */
export type ChunkVerdict = void | "stop" | Promise<unknown>;

/**
 * Hands a stream's bytes to `onChunk` as they come: on each 'readable' event, what is buffered, in one piece (a
 * model server's events that arrived while the gateway was busy go on in one write). An async iterator reads the
 * same way but costs a promise and a microtask turn a chunk, about a microsecond, a large share of what a relayed
 * stream event costs. Ends as a for-await loop over the stream would: resolves at its end or when `onChunk` says
 * "stop" (the stream is destroyed, as leaving the loop does); rejects with its error, with what `onChunk` threw,
 * or when it closes before its end. While a promise `onChunk` returned is pending, nothing more is read.
 */
export function eachChunk(body: Readable, onChunk: (chunk: Buffer) => ChunkVerdict): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let waiting = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      body.off("readable", drain).off("end", onEnd).off("close", onClose);
      if (err === undefined) resolve();
      else reject(err instanceof Error ? err : new Error(String(err)));
    };
    const stop = (err?: unknown) => {
      settle(err);
      body.destroy();
    };
    const resume = () => {
      waiting = false;
      if (!settled) drain();
    };
    const failed = (err: unknown) => stop(err ?? new Error("chunk handler failed"));
    function drain(): void {
      let chunk: Buffer | null;
      while (!settled && !waiting && (chunk = body.read() as Buffer | null) !== null) {
        let verdict: ChunkVerdict;
        try {
          verdict = onChunk(chunk);
        } catch (err) {
          return failed(err);
        }
        if (verdict === "stop") return stop();
        if (verdict) {
          waiting = true;
          verdict.then(resume, failed);
        }
      }
    }
    const onEnd = () => settle();
    const onClose = () => settle(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    // Kept after settling: an error after the end (or after "stop") is nobody's to handle, and must not crash.
    body.on("error", (err) => settle(err));
    body.on("readable", drain).once("end", onEnd).once("close", onClose);
  });
}
