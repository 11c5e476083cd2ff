import type { Response } from "express";
import { request, type Dispatcher } from "undici";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ApiError, errors } from "../api/errors";
import type { HeldBody } from "../http/body/held-body";
import { writable } from "../http/client-stall";
import type { KeyedBudget } from "../limits/keyed-budget";
import type { PickContext } from "./balancer";
import type { ModelPool } from "./model-pool";
import type { Replica } from "./replica";
import { readFailure, relayJsonAnswer } from "./answer-relay";
import { normalizeUpstreamError, parseErrorBody } from "./normalize-error";

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

export interface UpstreamCall {
  pool: ModelPool;
  path: "/v1/chat/completions" | "/v1/embeddings";
  /** Body to send, already carrying the upstream model name; released once the upstream request has it. */
  body: HeldBody;
  /** The caller's key: whose share of the answer memory a held answer takes. */
  keyName: string;
  requestId: string;
  stream: boolean;
  /** Drop the usage-only chunk the gateway asked for on the client's behalf. */
  stripUsageChunk?: boolean;
  res: Response;
  /** Aborted when the client goes away: the upstream request is cancelled at once. */
  signal: AbortSignal;
  timing?: StreamTiming;
  /** What the balancing strategy may use (prompt prefix hashes). */
  pick?: PickContext;
}

/** Observers of a streamed answer, in seconds. */
export interface StreamTiming {
  firstToken(seconds: number): void;
  interToken(seconds: number): void;
  retried(): void;
}

export interface UpstreamOutcome {
  status: number;
  usage?: Usage;
  replica?: string;
  attempts: number;
  /** Set when a stream had already started and then failed. */
  streamError?: string;
}

export interface ForwardOptions {
  dispatcher: Dispatcher;
  /** `Authorization` value the model servers require (their API key), or undefined to send none. */
  upstreamAuthorization?: string;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  retryAfterSaturatedSeconds: number;
  retryAfterNotReadySeconds: number;
  /** Streaming: after this long without an upstream response, send SSE headers and keep-alive comments. */
  sseKeepAliveMs: number;
  /** Longest wait for a client that does not read its stream. */
  clientStallTimeoutMs: number;
  /** Longest wait for a client that takes none of a non-streaming answer. */
  answerStallTimeoutMs: number;
  /** Memory for the non-streaming answers the gateway holds until their clients take them. */
  answerBudget: KeyedBudget;
  /** An answer refused because its key's share, or the gateway's, of the answer memory was in use. */
  answerRefused(reason: "answer_key_memory" | "answer_gateway_memory"): void;
}

/** Failures that happen before the model server could have answered: safe to try another replica. */
const CONNECT_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  if (typeof e?.code === "string") return e.code;
  if (typeof e?.cause?.code === "string") return e.cause.code;
  return undefined;
}

/**
 * Sends one inference request to a replica of the model and relays the answer to the client.
 * A connection refused or reset before the body was sent is retried once on another ready replica.
 * Throws ApiError for anything that should leave as an error envelope before a response started.
 */
export async function forwardInference(call: UpstreamCall, opts: ForwardOptions): Promise<UpstreamOutcome> {
  const keepAlive = call.stream ? new SseKeepAlive(call.res, opts.sseKeepAliveMs) : undefined;
  try {
    return await forwardWithRetry(call, opts, keepAlive);
  } finally {
    keepAlive?.stop();
    call.body.release();
  }
}

async function forwardWithRetry(call: UpstreamCall, opts: ForwardOptions, keepAlive?: SseKeepAlive): Promise<UpstreamOutcome> {
  const { pool } = call;
  const tried = new Set<Replica>();
  const maxAttempts = Math.min(2, Math.max(1, pool.replicas.length));

  for (let attempt = 1; ; attempt++) {
    const picked = await pool.acquire(call.pick, tried, call.signal);
    if (call.signal.aborted) {
      if (picked.ok) pool.release(picked.replica);
      return { status: 499, attempts: attempt };
    }
    if (!picked.ok) {
      throw picked.reason === "saturated" && tried.size === 0
        ? errors.saturated(pool.model.id, opts.retryAfterSaturatedSeconds)
        : errors.notReady(pool.model.id, opts.retryAfterNotReadySeconds);
    }
    const replica = picked.replica;
    tried.add(replica);
    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await request(`${replica.url}${call.path}`, {
        method: "POST",
        dispatcher: opts.dispatcher,
        headers: {
          "content-type": "application/json",
          "content-length": String(call.body.length),
          accept: call.stream ? "text/event-stream" : "application/json",
          "x-request-id": call.requestId,
          // The platform's key for the model servers; the client's own key never leaves the gateway.
          ...(opts.upstreamAuthorization ? { authorization: opts.upstreamAuthorization } : {}),
        },
        body: call.body.stream(),
        signal: call.signal,
        headersTimeout: opts.headersTimeoutMs,
        bodyTimeout: opts.idleTimeoutMs,
      });
    } catch (err) {
      pool.release(replica);
      if (call.signal.aborted) return { status: 499, attempts: attempt, replica: replica.url };
      const code = errorCode(err);
      if (code === "UND_ERR_HEADERS_TIMEOUT") throw errors.upstreamTimeout(pool.model.id);
      if (code && CONNECT_ERRORS.has(code)) {
        replica.eject(code);
        // Another replica can be tried only while the body is still held (the connection failed before the
        // body was sent); once sent, its bytes were let go (see held-body.ts) and the client retries instead.
        if (attempt < maxAttempts && call.body.held) {
          call.timing?.retried();
          continue;
        }
        throw errors.notReady(pool.model.id, opts.retryAfterNotReadySeconds);
      }
      throw errors.upstreamFailed(pool.model.id, (err as Error).message);
    }

    keepAlive?.stop();
    // A replica answered: no other attempt will need the body (if the upstream request has not let it go yet).
    call.body.release();
    try {
      return await relay(call, upstream, replica, attempt, opts);
    } finally {
      pool.release(replica);
    }
  }
}

/**
 * While a streaming request waits (queue, prefill of a long prompt behind a slow proxy), idle connections get
 * cut by proxies and by Node fetch's ~5-minute body timeout. After `afterMs` the gateway commits to a 200 event
 * stream and sends SSE comments, which clients ignore; errors after that travel as SSE error events.
 */
class SseKeepAlive {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: Response,
    private readonly afterMs: number,
  ) {
    if (afterMs > 0) this.timer = setTimeout(() => this.beat(), afterMs);
  }

  private beat(): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (!this.res.headersSent) startEventStream(this.res);
    this.res.write(": keep-alive\n\n");
    this.timer = setTimeout(() => this.beat(), this.afterMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function startEventStream(res: Response): void {
  res.status(200);
  res.setHeader("content-type", "text/event-stream; charset=utf-8");
  res.setHeader("cache-control", "no-cache");
  res.setHeader("x-accel-buffering", "no");
  res.flushHeaders();
}

async function relay(
  call: UpstreamCall,
  upstream: Dispatcher.ResponseData,
  replica: Replica,
  attempts: number,
  opts: ForwardOptions,
): Promise<UpstreamOutcome> {
  const base = { replica: replica.url, attempts };
  const status = upstream.statusCode;
  const contentType = String(upstream.headers["content-type"] ?? "");

  if (status >= 300) {
    // Only the head of an error body matters (proxies answer with whole HTML pages): the rest is not read.
    const head = await readHead(upstream, MAX_ERROR_BODY_BYTES, call);
    throw normalizeUpstreamError(status, parseErrorBody(head.toString("utf8")), call.pool.model.id);
  }
  if (call.stream && contentType.includes("text/event-stream")) {
    return { ...base, status, ...(await relaySse(call, upstream, opts.clientStallTimeoutMs)) };
  }
  if (call.res.headersSent) {
    // Keep-alive already committed to an event stream; a JSON answer can only travel as an error event.
    await upstream.body.dump();
    throw errors.upstreamFailed(call.pool.model.id, "the model server answered a streaming request without an event stream");
  }
  const usage = await relayJsonAnswer(upstream, {
    res: call.res,
    modelId: call.pool.model.id,
    rewriteModel: call.pool.upstreamModel !== call.pool.model.id,
    keyName: call.keyName,
    budget: opts.answerBudget,
    stallMs: opts.answerStallTimeoutMs,
    signal: call.signal,
    refused: opts.answerRefused,
  });
  return { ...base, status, usage: asUsage(usage) };
}

/** Error bodies are read up to this; the rest is dropped unread. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** At most the first `limit` bytes of the upstream body; the rest is not read (the connection is closed). */
async function readHead(upstream: Dispatcher.ResponseData, limit: number, call: UpstreamCall): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= limit) break; // leaving the loop destroys the body
    }
  } catch (err) {
    throw readFailure(err, { modelId: call.pool.model.id, signal: call.signal });
  }
  return Buffer.concat(chunks, received).subarray(0, limit);
}

function asUsage(v: unknown): Usage | undefined {
  return v && typeof v === "object" ? (v as Usage) : undefined;
}

export function sseErrorEvent(err: ApiError): string {
  return `data: ${JSON.stringify(err.toEnvelope())}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

/**
 * Relays an upstream SSE stream event by event, as each arrives (no buffering beyond one event).
 * Error events are normalized to the envelope; a stream that breaks off gets an error event and [DONE],
 * so the SDKs raise instead of silently returning a truncated answer.
 */
async function relaySse(call: UpstreamCall, upstream: Dispatcher.ResponseData, stallMs: number): Promise<{ usage?: Usage; streamError?: string }> {
  const { res, pool } = call;
  const rewrite = pool.upstreamModel !== pool.model.id;
  let usage: Usage | undefined;
  let done = false;
  let streamError: string | undefined;
  let idle = false;
  const started = performance.now();
  let lastTokenAt: number | undefined;
  const sawToken = () => {
    const now = performance.now();
    if (lastTokenAt === undefined) call.timing?.firstToken((now - started) / 1000);
    else call.timing?.interToken((now - lastTokenAt) / 1000);
    lastTokenAt = now;
  };

  if (!res.headersSent) startEventStream(res);

  const onEvent = (ev: EventSourceMessage) => {
    if (done) return;
    const data = ev.data;
    if (data === "[DONE]") {
      done = true;
      res.write(SSE_DONE);
      return;
    }
    // Parse only what needs looking into; plain token chunks go through as they came.
    if (rewrite || data.includes('"error"') || data.includes('"usage":{')) {
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(data) as Record<string, unknown>;
      } catch {
        res.write(`data: ${data}\n\n`);
        return;
      }
      if (obj.error) {
        const code = (obj.error as { code?: unknown }).code;
        const apiErr = normalizeUpstreamError(typeof code === "number" ? code : 500, obj, pool.model.id);
        streamError = apiErr.message;
        res.write(sseErrorEvent(apiErr));
        return;
      }
      if (obj.usage) usage = asUsage(obj.usage);
      const choices = obj.choices as unknown[] | undefined;
      if (call.stripUsageChunk && obj.usage && Array.isArray(choices) && choices.length === 0) return;
      if (rewrite) obj.model = pool.model.id;
      if (data.includes('"content":"') || data.includes('"tool_calls"')) sawToken();
      res.write(`data: ${rewrite ? JSON.stringify(obj) : data}\n\n`);
      return;
    }
    // Content deltas carry text; the role-only first chunk (content "") does not count as a token.
    if (data.includes('"content":"') && !data.includes('"content":""') || data.includes('"tool_calls"')) sawToken();
    res.write(`data: ${data}\n\n`);
  };

  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of upstream.body) {
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      if (res.destroyed) break;
      await writable(res, stallMs);
    }
  } catch (err) {
    if (call.signal.aborted || res.destroyed) return { usage };
    idle = errorCode(err) === "UND_ERR_BODY_TIMEOUT";
    streamError = idle ? "the model server stopped sending tokens (idle timeout)" : "the model server closed the connection mid-stream";
  }
  if (!res.destroyed) {
    if (!done) {
      streamError ??= "the model server ended the stream without [DONE]";
      const apiErr = idle ? errors.streamIdle(pool.model.id) : errors.streamInterrupted(pool.model.id, streamError);
      res.write(sseErrorEvent(apiErr));
      res.write(SSE_DONE);
    }
    res.end();
  }
  return { usage, streamError };
}
