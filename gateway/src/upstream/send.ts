import { request, type Dispatcher } from "undici";
import { errors } from "../api/errors";
import type { HeldBody } from "../http/body/held-body";
import type { PickContext } from "./balancer";
import type { ModelPool } from "./model-pool";
import type { Replica } from "./replica";
import type { HoldHooks } from "./wake-queue";

/** One inference request on its way to a model server. */
export interface UpstreamCall {
  pool: ModelPool;
  /** The endpoint's path, the same at the model server. */
  path: string;
  /** Body to send, already carrying the upstream model name; released once the upstream request has it. */
  body: HeldBody;
  requestId: string;
  stream: boolean;
  /** Aborted when the client goes away: the wait for a replica, or the upstream request, is cancelled at once. */
  signal: AbortSignal;
  /** What the routing may use (prompt prefix hashes). */
  pick: PickContext;
  /** Told when a request is retried on another replica. */
  retried?(): void;
  /** Only this replica may serve it (a follow-up of a response it stores): no other is tried. */
  pinned?: Replica;
  /** The error when no replica can take it (default: 503 `model_not_ready`). */
  unavailable?(): Error;
  /** Called with the replica each attempt goes to, before the body is sent (e.g. to stamp the response id). */
  beforeAttempt?(replica: Replica): void;
  /** Trace context headers (traceparent) to send with it, when traces are on. */
  traceHeaders?: Record<string, string>;
  /** Told when the request is held for its model to wake, and how long it was (a pinned request is never held). */
  hold?: HoldHooks;
}

export interface SendOptions {
  dispatcher: Dispatcher;
  /** `Authorization` value the model servers require (their API key), or undefined to send none. */
  upstreamAuthorization?: string;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  retryAfterSaturatedSeconds: number;
  retryAfterNotReadySeconds: number;
}

/** A model server answered (headers in); `done()` gives its replica slot back once the answer is relayed. */
export interface Answered {
  answered: true;
  upstream: Dispatcher.ResponseData;
  replica: Replica;
  attempts: number;
  done(): void;
}

/** The client left before a model server answered. */
export interface Abandoned {
  answered: false;
  replica?: Replica;
  attempts: number;
}

/** Failures that happen before the model server could have answered: safe to try another replica. */
export const CONNECT_ERRORS: ReadonlySet<string> = new Set([
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

export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  if (typeof e?.code === "string") return e.code;
  if (typeof e?.cause?.code === "string") return e.cause.code;
  return undefined;
}

/**
 * The attempt level of a request: pick a replica (waiting in the model's queue if all are busy), send the body,
 * and on a connection refused or reset before the body was sent, eject that replica and try once more on
 * another. Resolves when a model server answered (its headers are in) or the client left; throws ApiError for
 * what should leave as an error envelope.
 */
export async function send(call: UpstreamCall, opts: SendOptions): Promise<Answered | Abandoned> {
  const { pool } = call;
  // A pinned request counts every other replica as tried already: the pick can only be the pinned one.
  const tried = new Set<Replica>(call.pinned ? pool.replicas.filter((r) => r !== call.pinned) : []);
  // Counted when needed: a model that woke from zero had no replica when the request arrived.
  const maxAttempts = () => (call.pinned ? 1 : Math.min(2, Math.max(1, pool.replicas.length)));
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "content-length": String(call.body.length),
    accept: call.stream ? "text/event-stream" : "application/json",
    "x-request-id": call.requestId,
  };
  // The platform's key for the model servers; the client's own key never leaves the gateway.
  if (opts.upstreamAuthorization) headers.authorization = opts.upstreamAuthorization;
  // The request's span (traceparent), so the model server's spans join its trace.
  if (call.traceHeaders) Object.assign(headers, call.traceHeaders);

  const adapter = call.pick.adapter;
  for (let attempt = 1; ; attempt++) {
    // Only a first attempt that may go to any replica is held: a retry or a pinned request wants a replica it knows.
    const picked = await pool.acquire(call.pick, tried, call.signal, attempt === 1 && !call.pinned ? call.hold : undefined);
    if (call.signal.aborted) {
      if (picked.ok) pool.release(picked.replica, adapter);
      return { answered: false, attempts: attempt };
    }
    if (!picked.ok) {
      if (picked.reason === "saturated" && attempt === 1) {
        // A model still waking takes as long as its load: a client retrying every second would only queue again.
        const waking = pool.wakeQueue && !pool.isReady;
        throw waking ? errors.wakeSaturated(pool.model.id, opts.retryAfterNotReadySeconds) : errors.saturated(pool.model.id, opts.retryAfterSaturatedSeconds);
      }
      throw call.unavailable?.() ?? errors.notReady(pool.model.id, opts.retryAfterNotReadySeconds);
    }
    const replica = picked.replica;
    tried.add(replica);
    if (adapter !== undefined && pool.adapters) {
      // The adapter may be loading on that replica (for this request or an earlier one): the request waits for it.
      try {
        await untilAborted(pool.adapters.ready(replica, adapter), call.signal);
      } catch {
        pool.release(replica, adapter);
        if (call.signal.aborted) return { answered: false, attempts: attempt, replica };
        throw errors.adapterLoadFailed(adapter, pool.model.id, opts.retryAfterNotReadySeconds);
      }
    }
    call.beforeAttempt?.(replica);
    try {
      const upstream = await request(replica.url + call.path, {
        method: "POST",
        dispatcher: opts.dispatcher,
        headers,
        body: call.body.stream(),
        signal: call.signal,
        headersTimeout: opts.headersTimeoutMs,
        bodyTimeout: opts.idleTimeoutMs,
      });
      // A replica answered: no other attempt will need the body (if the upstream request has not let it go yet).
      call.body.release();
      return { answered: true, upstream, replica, attempts: attempt, done: () => pool.release(replica, adapter) };
    } catch (err) {
      pool.release(replica, adapter);
      if (call.signal.aborted) return { answered: false, attempts: attempt, replica };
      const code = errorCode(err);
      if (code === "UND_ERR_HEADERS_TIMEOUT") throw errors.upstreamTimeout(pool.model.id);
      if (code && CONNECT_ERRORS.has(code)) {
        replica.eject(code);
        // Another replica can be tried only while the body is still held (the connection failed before the
        // body was sent); once sent, its bytes were let go (see held-body.ts) and the client retries instead.
        if (attempt < maxAttempts() && call.body.held) {
          call.retried?.();
          continue;
        }
        throw call.unavailable?.() ?? errors.notReady(pool.model.id, opts.retryAfterNotReadySeconds);
      }
      throw errors.upstreamFailed(pool.model.id, (err as Error).message);
    }
  }
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error("aborted"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener("abort", onAbort), resolve(value)),
      (err: unknown) => (signal.removeEventListener("abort", onAbort), reject(err as Error)),
    );
  });
}
