import type { IncomingMessage, ServerResponse } from "node:http";
import { errors } from "../../api/errors";
import { ClientGone } from "../../context/client-gone";

export interface BodyReadLimits {
  /** Bytes as sent (before decompression). */
  limitBytes: number;
  /** Longest pause between two chunks. */
  idleTimeoutMs: number;
  /** From the first read to the last byte. */
  totalTimeoutMs: number;
}

/** The declared `Content-Length`, if any (Node's parser has already rejected malformed values). */
export function declaredLength(req: IncomingMessage): number | undefined {
  const v = req.headers["content-length"];
  return v === undefined ? undefined : Number(v);
}

/** True when the request says a body follows (a length above zero, or chunked framing). */
export function hasBody(req: IncomingMessage): boolean {
  return (declaredLength(req) ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
}

/** Whether the client waits for "100 Continue" before sending its body. */
export function expectsContinue(req: IncomingMessage): boolean {
  return /^100-continue$/i.test(req.headers.expect ?? "");
}

/**
 * Reads the request body into one buffer, bounded in size and time: a declared length is allocated once and
 * filled in place; more bytes than the limit, a pause longer than the idle timeout or a body slower than the
 * total timeout stop the read with 413 or 408; so does `signal`, with its reason. A client waiting on `Expect: 100-continue` is told to send only
 * now, after it was admitted.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limits: BodyReadLimits, signal?: AbortSignal): Promise<Buffer> {
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limits.limitBytes) return Promise.reject(errors.bodyTooLarge(limits.limitBytes));
  if (req.complete && req.readableEnded) return Promise.resolve(Buffer.alloc(0));

  return new Promise<Buffer>((resolve, reject) => {
    const fixed = declared !== undefined ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;

    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      clearTimeout(total);
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      signal?.removeEventListener("abort", onAbort);
      if (err) {
        // Stop pulling bytes; what is left is dropped by the lingering close (see http/lingering-close.ts).
        req.pause();
        reject(err);
      } else resolve(fixed ? fixed.subarray(0, received) : Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > limits.limitBytes) return finish(errors.bodyTooLarge(limits.limitBytes));
      if (fixed) chunk.copy(fixed, received);
      else chunks.push(chunk);
      received += chunk.length;
      idle.refresh();
    };
    const onEnd = () => finish();
    const onError = () => finish(new ClientGone("before its request body arrived"));
    const onClose = () => finish(req.complete ? undefined : new ClientGone("before its request body arrived"));
    const onAbort = () => finish(signal?.reason);

    const idle = setTimeout(() => finish(errors.requestTimeout("request body")), limits.idleTimeoutMs);
    const total = setTimeout(() => finish(errors.requestTimeout("request body")), limits.totalTimeoutMs);
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (expectsContinue(req) && !res.headersSent) res.writeContinue();
  });
}
