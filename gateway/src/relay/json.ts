import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { ApiError, errors } from "../api/errors";
import { HELD_ANSWER_MAX_BYTES } from "../config/settings";
import { ClientGone } from "../context/client-gone";
import { writable } from "../http/client-stall";
import type { KeyedBudget, BudgetLease } from "../limits/keyed-budget";
import { normalizeUpstreamError } from "../upstream/normalize-error";
import { applyFixes, type TextFix } from "../endpoints/form-fixes";
import { AnswerScanner, rewriteAnswer } from "./answer-scanner";

export interface AnswerRelay {
  res: ServerResponse;
  /** The catalog id the client asked for. */
  modelId: string;
  /** Set when the model server knows the model by another name: `model` is rewritten back in the answer. */
  rewriteModel: boolean;
  /** Who the answer is held for: its key's share of the answer memory. */
  keyName: string;
  budget: KeyedBudget;
  /** Longest wait for a client that takes none of the answer. */
  stallMs: number;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  refused(reason: "answer_key_memory" | "answer_gateway_memory"): void;
  /** The endpoint's cleaning of a held answer (see EndpointSpec.cleanAnswer); true when it changed it. */
  clean?(answer: Record<string, unknown>): boolean;
  /** The endpoint's form fixes of a held answer's text (see EndpointSpec.answerFixes). */
  fixes?: readonly TextFix[];
}

/** What every JSON answer is sent as (the value Express's `res.json` would set). */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Relays a model server's non-streaming JSON answer (status below 300). A small answer (declared, or found, at
 * most HELD_ANSWER_MAX_BYTES, 1 MiB; chat completions are a few KiB) is held whole: its memory is reserved from
 * the answer budget (the key's share and the gateway's) before it is read, and given back once the client has
 * taken it; when the budget is full the client gets 429 or 503 with Retry-After. A larger answer is streamed
 * through with backpressure, `model` rewritten in place and `usage` picked up on the way; of it only the part
 * read before it proved large (when its length was not declared) is ever held. Returns the answer's top level
 * (a held answer, parsed) or its captured `usage` member (a passed-through one), for the endpoint's accounting.
 *
 * The answer's life, in the order of this module: memory reserved until the response closes, the answer read,
 * passed through with the scanner if it proves large, or resized to what arrived and sent whole.
 */
export async function relayJsonAnswer(upstream: Dispatcher.ResponseData, relay: AnswerRelay): Promise<Record<string, unknown>> {
  const declared = Number(upstream.headers["content-length"] ?? NaN);
  const known = Number.isInteger(declared) && declared >= 0;
  // Declared larger than a held answer may be: passed through from its first byte, nothing reserved.
  if (known && declared > HELD_ANSWER_MAX_BYTES) return streamAnswer(upstream, relay, [], declared);

  const lease = reserveUntilClosed(relay, known ? declared : HELD_ANSWER_MAX_BYTES, upstream);
  // Read whole, up to what a held answer may be.
  const head: Buffer[] = [];
  let received = 0;
  const body = upstream.body as AsyncIterable<Buffer>;
  const iterator = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      head.push(next.value);
      received += next.value.length;
      if (received > HELD_ANSWER_MAX_BYTES) {
        // Larger than it looked: passed through from here; the head goes first and gives its memory back once sent.
        return await streamAnswer(upstream, relay, head, undefined, iterator, lease);
      }
    }
  } catch (err) {
    throw readFailure(err, relay);
  }
  // Held: its memory is what arrived, until the response closes.
  lease.resize(received);
  return sendHeldAnswer(head.length === 1 ? head[0]! : Buffer.concat(head, received), relay);
}

/**
 * Memory for the answer from the key's share and the gateway's, before a byte of it is read (or 429 / 503), held
 * until the response closes: until the client has the answer, or is gone.
 */
function reserveUntilClosed(relay: AnswerRelay, bytes: number, upstream: Dispatcher.ResponseData): BudgetLease {
  const lease = relay.budget.reserve(relay.keyName, bytes);
  if (lease === "key" || lease === "gateway") {
    upstream.body.destroy();
    relay.refused(lease === "key" ? "answer_key_memory" : "answer_gateway_memory");
    throw lease === "key" ? errors.inflightBytesExceeded(relay.keyName, relay.budget.perKey, "unread answers") : errors.gatewayOverloaded("answer memory");
  }
  relay.res.once("close", () => lease.release());
  if (relay.res.closed) {
    // Gone already: 'close' will not come again.
    lease.release();
    upstream.body.destroy();
    throw new ClientGone("before its answer arrived");
  }
  return lease;
}

/**
 * A large answer, chunk by chunk: each chunk is written once the client has taken the previous ones (the
 * model server's connection holds the rest), so the gateway holds at most a chunk or two of it however slowly
 * the client reads; a client that takes nothing for `stallMs` is disconnected.
 */
async function streamAnswer(
  upstream: Dispatcher.ResponseData,
  relay: AnswerRelay,
  head: Buffer[],
  declared: number | undefined,
  iterator: AsyncIterator<Buffer> = (upstream.body as AsyncIterable<Buffer>)[Symbol.asyncIterator](),
  headLease?: BudgetLease,
): Promise<Record<string, unknown>> {
  const { res } = relay;
  const scanner = new AnswerScanner({ replace: relay.rewriteModel ? { model: JSON.stringify(relay.modelId) } : {}, capture: ["usage", "error"] });
  let pending = head.flatMap((chunk) => scanner.feed(chunk));
  if (pending.length === 0) {
    try {
      const next = await iterator.next();
      if (!next.done) pending = scanner.feed(next.value);
    } catch (err) {
      throw readFailure(err, relay);
    }
  }
  // Before committing to a 200: the answer must start as an object and must not be an error.
  if (scanner.notAnObject) {
    upstream.body.destroy();
    throw errors.upstreamFailed(relay.modelId, "the model server sent a body that is not a JSON object");
  }
  const error = scanner.member("error");
  if (error) {
    upstream.body.destroy();
    throw normalizeUpstreamError(500, { error }, relay.modelId);
  }
  res.statusCode = 200;
  res.setHeader("content-type", JSON_TYPE);
  // The bytes are the model server's own unless `model` is rewritten: then their length changes.
  if (declared !== undefined && !relay.rewriteModel) res.setHeader("content-length", String(declared));
  try {
    for (;;) {
      // The pieces of one upstream chunk (split around a rewritten `model`) leave as one write. Not cork/uncork:
      // Node 24.17's ServerResponse can miss the 'drain' after an uncork that flushed (nodejs/node#60432).
      if (pending.length > 0) res.write(pending.length === 1 ? pending[0]! : Buffer.concat(pending));
      pending = [];
      await writable(res, relay.stallMs);
      // The head is out of the gateway's memory now.
      headLease?.release();
      if (res.destroyed) {
        upstream.body.destroy();
        throw new ClientGone("while its answer was being sent");
      }
      const next = await iterator.next();
      if (next.done) break;
      pending = scanner.feed(next.value);
    }
  } catch (err) {
    throw readFailure(err, relay);
  }
  // Cut short or malformed after the status was sent: the error handler closes the connection rather than
  // ending the answer, so the client sees a failure instead of a truncated body.
  if (!scanner.complete) throw errors.upstreamFailed(relay.modelId, "the answer ended before it was complete");
  res.end();
  return { usage: scanner.member("usage") };
}

/** A small answer, whole: parsed once to check it, then sent as the model server's bytes (form fixed, `model` rewritten). */
function sendHeldAnswer(held: Buffer, relay: AnswerRelay): Record<string, unknown> {
  let answer: unknown;
  let bytes = held;
  try {
    const text = held.toString("utf8");
    answer = JSON.parse(text);
    // In the published schema's form: the fixed text, when a fix applied (no re-serialization).
    const fixed = relay.fixes ? applyFixes(text, relay.fixes) : text;
    if (fixed !== text) bytes = Buffer.from(fixed);
  } catch {
    answer = undefined;
  }
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
    throw errors.upstreamFailed(relay.modelId, "the model server sent a body that is not a JSON object");
  }
  const { error } = answer as { error?: unknown };
  // A 200 carrying an error would make LangChain raise a confusing ValueError; send a real error status.
  if (error) throw normalizeUpstreamError(500, { error }, relay.modelId);
  let out: Buffer;
  if (relay.clean?.(answer as Record<string, unknown>)) {
    // Cleaned: the parsed answer is what goes out (`model` rewritten in it).
    if (relay.rewriteModel) (answer as Record<string, unknown>).model = relay.modelId;
    out = Buffer.from(JSON.stringify(answer));
  } else out = relay.rewriteModel ? rewriteAnswer(bytes, { model: JSON.stringify(relay.modelId) }) : bytes;
  const { res } = relay;
  res.statusCode = 200;
  res.setHeader("content-type", JSON_TYPE);
  res.setHeader("content-length", out.length);
  res.end(out);
  return answer as Record<string, unknown>;
}

/** Maps a failure while reading the model server's answer to what the client gets (or nothing, if it left). */
export function readFailure(err: unknown, relay: Pick<AnswerRelay, "modelId" | "signal">): Error {
  if (err instanceof ApiError || err instanceof ClientGone) return err;
  if ((err as { code?: string }).code === "UND_ERR_BODY_TIMEOUT") return errors.upstreamTimeout(relay.modelId);
  if (relay.signal.aborted) return new ClientGone("while the model server was answering");
  return errors.upstreamFailed(relay.modelId, "the model server closed the connection mid-response");
}
