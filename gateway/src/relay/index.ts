import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { errors } from "../api/errors";
import type { EndpointSpec, Usage, UsageWanted } from "../endpoints/spec";
import type { KeyedBudget } from "../limits/keyed-budget";
import { normalizeUpstreamError, parseErrorBody } from "../upstream/normalize-error";
import { readHead } from "../upstream/read-head";
import { readFailure, relayJsonAnswer } from "./json";
import { relaySse } from "./sse";
import type { TokenTimingSink } from "../observability/metrics";
import { TokenClock } from "./token-clock";

export interface RelayOptions {
  /** Longest wait for a client that does not read its stream. */
  clientStallTimeoutMs: number;
  /** Longest wait for a client that takes none of a non-streaming answer. */
  answerStallTimeoutMs: number;
  /** Memory for the non-streaming answers the gateway holds until their clients take them. */
  answerBudget: KeyedBudget;
  /** An answer refused because its key's share, or the gateway's, of the answer memory was in use. */
  answerRefused(reason: "answer_key_memory" | "answer_gateway_memory"): void;
}

/** One answer to relay: whose it is and what the client asked for. */
export interface RelayCall {
  res: ServerResponse;
  spec: EndpointSpec;
  /** The catalog id the client asked for, and the name the model server serves it under. */
  modelId: string;
  upstreamModel: string;
  stream: boolean;
  clientWantsUsage: UsageWanted;
  /** The caller's key: whose share of the answer memory a held answer takes. */
  keyName: string;
  signal: AbortSignal;
  timings: TokenTimingSink;
}

export interface Relayed {
  status: number;
  usage?: Usage;
  /** Set when a stream had already started and then failed. */
  streamError?: string;
  /** A stream's events that carried generated output. */
  tokenEvents?: number;
}

/** Error bodies are read up to this; the rest is dropped unread. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Writes a model server's answer to the client: an error status becomes the envelope (thrown), an event stream
 * is relayed event by event, a JSON answer held or passed through. What the answer means (usage, tokens) is the
 * endpoint spec's to say.
 */
export async function relayAnswer(upstream: Dispatcher.ResponseData, call: RelayCall, opts: RelayOptions): Promise<Relayed> {
  const status = upstream.statusCode;
  const rewriteModel = call.upstreamModel !== call.modelId;
  if (status >= 300) {
    let head: Buffer;
    try {
      head = await readHead(upstream, MAX_ERROR_BODY_BYTES);
    } catch (err) {
      throw readFailure(err, { modelId: call.modelId, signal: call.signal });
    }
    throw normalizeUpstreamError(status, parseErrorBody(head.toString("utf8")), call.modelId);
  }
  const contentType = upstream.headers["content-type"];
  if (call.stream && typeof contentType === "string" && contentType.includes("text/event-stream")) {
    const tokens = new TokenClock(call.timings);
    try {
      const relayed = await relaySse(upstream, {
        res: call.res,
        spec: call.spec,
        modelId: call.modelId,
        rewriteModel,
        clientWantsUsage: call.clientWantsUsage,
        stallMs: opts.clientStallTimeoutMs,
        signal: call.signal,
        tokens,
      });
      return { status, ...relayed };
    } finally {
      tokens.flush();
    }
  }
  if (call.res.headersSent) {
    // Keep-alive already committed to an event stream; a JSON answer can only travel as an error event.
    await upstream.body.dump();
    throw errors.upstreamFailed(call.modelId, "the model server answered a streaming request without an event stream");
  }
  const answer = await relayJsonAnswer(upstream, {
    res: call.res,
    modelId: call.modelId,
    rewriteModel,
    keyName: call.keyName,
    budget: opts.answerBudget,
    stallMs: opts.answerStallTimeoutMs,
    signal: call.signal,
    refused: opts.answerRefused,
    clean: call.spec.cleanAnswer,
    fixes: call.spec.answerFixes,
  });
  return { status, usage: call.spec.usageOf(answer) };
}
