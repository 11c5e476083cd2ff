import { Readable } from "node:stream";
import { request, type Dispatcher } from "undici";
import { errors } from "../api/errors";
import { systemClock, type Clock } from "../context/clock";
import type { HeldBody } from "../http/body/held-body";
import type { PickContext } from "./balancer";
import type { ModelPool } from "./model-pool";
import { extractUpstreamError, parseErrorBody } from "./normalize-error";
import { readHead } from "./read-head";
import type { Replica } from "./replica";
import type { ReplicaSlot } from "./replica-slot";
import type { Exclusion } from "./routing/filters";
import type { HoldHooks } from "./scheduler/model-scheduler";
import { ANONYMOUS, type Tenant } from "./scheduler/tenant";

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
  /** What the routing may use (prompt prefix hashes, the adapter). */
  pick: PickContext;
  /** Whose request it is: its order among waiting requests (scheduler/). */
  tenant?: Tenant;
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

/** How a request reaches a model server: undici's `request` in production, simulated servers in gateway/test/sim/. */
export type UpstreamTransport = (
  url: string,
  options: { method: "POST"; headers: Record<string, string>; body: Readable; signal: AbortSignal; headersTimeout: number; bodyTimeout: number },
) => Promise<Dispatcher.ResponseData>;

export interface SendOptions {
  dispatcher: Dispatcher;
  /** Replaces undici's `request` on `dispatcher` (the simulation). */
  transport?: UpstreamTransport;
  /** Time and timers (the simulation's virtual clock). */
  clock?: Clock;
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

/** Of those, the ones a server that is there says: it refused or closed the connection (stopping, restarting). */
const REFUSALS: ReadonlySet<string> = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

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

/**
 * How long an adapter request's bytes are kept after they were sent, ms, in case the model server answers 404 for the
 * adapter (vLLM checks the model name as soon as the body is in): then it is reloaded and the request sent again.
 */
export const ADAPTER_RETRY_WINDOW_MS = 2000;

/** Error bodies read to tell an adapter's 404 from another: vLLM's are a few hundred bytes. */
const MAX_404_BODY_BYTES = 16 * 1024;

/** A placement the adapter state was reset under (its replica restarted meanwhile) is made again, this many times at most. */
const MAX_REPLACEMENTS = 3;

/**
 * After a connection failed before the body went, other replicas are tried for this long, ms, from the first failure:
 * a refused connection fails in a millisecond, so only connect timeouts (a node gone, 5 s each) meet the bound.
 */
export const REFUSED_RETRY_BUDGET_MS = 2000;

export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  if (typeof e?.code === "string") return e.code;
  if (typeof e?.cause?.code === "string") return e.cause.code;
  return undefined;
}

/**
 * A model server's answer body may be destroyed by whoever relays it (a client gone, an answer refused), and a
 * destroyed body that had not ended emits 'error': a listener here, where the body is created, keeps that from
 * ever ending the process. Readers still see the error through their own iteration.
 */
export function guardBody(upstream: Dispatcher.ResponseData): Dispatcher.ResponseData {
  upstream.body.on("error", ignore);
  return upstream;
}

const ignore = (): void => undefined;

/**
 * The attempt level of a request: a slot on a replica (waiting in the model's scheduler while none can take it),
 * then the body sent. A connection refused or reset before the body was sent ejects that replica (for every request)
 * and tries the next replica not yet tried, within a short budget; a 404 for an adapter the replica was believed to hold marks it gone there and tries again (where it is
 * loaded anew, or held), once per replica that answered so. Resolves when a model server answered (its headers are
 * in) or the client left; throws ApiError for what should leave as an error envelope.
 */
export async function send(call: UpstreamCall, opts: SendOptions): Promise<Answered | Abandoned> {
  const { pool } = call;
  const clock = opts.clock ?? systemClock;
  const transport = opts.transport ?? ((url, o) => request(url, { ...o, dispatcher: opts.dispatcher }));
  const target = call.pick.adapter ?? pool.model.id;
  // Replicas this request may not use: a pinned one may use only its replica (whatever discovery adds meanwhile); any
  // other, none it tried already.
  const tried = new Set<Replica>();
  const pinned = call.pinned;
  const exclude: Exclusion = pinned ? { has: (r) => r !== pinned || tried.has(r) } : tried;
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

  /** Requests sent to a model server (the log line's `attempts`). */
  let attempts = 0;
  /** Connections that failed before the body was sent, when the first did, and whether every one was refused. */
  let refused = 0;
  let firstRefusalAt = 0;
  let onlyRefusals = true;
  /** Replicas that answered 404 for the adapter: each was believed to hold it, and is retried once after a reload. */
  let gone: Set<Replica> | undefined;
  /** Placements made again because the adapter's entry left the replica's state while the request waited. */
  let replaced = 0;
  const unreachable = (why: "none left" | "budget") =>
    errors.replicasUnreachable(pool.model.id, { tried: refused, refused: onlyRefusals, why, pool: pool.model.upstream.mode === "pool" }, opts.retryAfterNotReadySeconds);
  for (let first = true; ; first = false) {
    // Only the first wait, of a request that may go to any replica, may be held while the model wakes.
    const placed = await pool.acquire({
      tenant: call.tenant ?? ANONYMOUS,
      ctx: call.pick,
      exclude,
      signal: call.signal,
      hold: first && !pinned ? call.hold : undefined,
      park: () => call.body.park(),
    });
    if (!placed.ok) {
      if (placed.reason === "abandoned" || call.signal.aborted) return { answered: false, attempts };
      if (placed.reason === "saturated") {
        // A model still waking takes as long as its load: a client retrying every second would only queue again.
        const waking = pool.wakes && !pool.isReady;
        throw waking ? errors.wakeSaturated(target, opts.retryAfterNotReadySeconds) : errors.saturated(target, opts.retryAfterSaturatedSeconds);
      }
      throw call.unavailable?.() ?? (refused > 0 ? unreachable("none left") : errors.notReady(pool.model.id, opts.retryAfterNotReadySeconds));
    }
    const slot = placed.slot;
    const replica = slot.replica;
    // Placed: its body no longer counts among waiting requests' (unless it waits for an adapter's load, below).
    call.body.unpark();
    if (call.signal.aborted) {
      slot.release();
      return { answered: false, attempts };
    }
    if (slot.claim) {
      const adapter = await adapterReady(slot, call, () => errors.adapterLoadFailed(target, pool.model.id, opts.retryAfterNotReadySeconds));
      if (adapter === "abandoned") return { answered: false, attempts, replica };
      if (adapter === "again") {
        if (++replaced > MAX_REPLACEMENTS) throw call.unavailable?.() ?? errors.notReady(pool.model.id, opts.retryAfterNotReadySeconds);
        continue;
      }
    }
    tried.add(replica);
    attempts += 1;
    call.beforeAttempt?.(replica);
    // An adapter request keeps its bytes a moment after they are sent, for the 404 retry below.
    const keepForRetry = slot.claim !== undefined && !gone?.has(replica);
    let sent = false;
    let answered = false;
    let keeper: ReturnType<Clock["after"]> | undefined;
    const body = call.body.stream(() => {
      sent = true;
      if (keepForRetry && !answered) keeper = clock.after(ADAPTER_RETRY_WINDOW_MS, () => call.body.release());
      else if (!keepForRetry) call.body.release();
    });
    try {
      const upstream = guardBody(
        await transport(replica.url + call.path, {
          method: "POST",
          headers,
          body,
          signal: call.signal,
          headersTimeout: opts.headersTimeoutMs,
          bodyTimeout: opts.idleTimeoutMs,
        }),
      );
      answered = true;
      clock.cancel(keeper);
      if (keepForRetry && upstream.statusCode === 404 && call.body.held) {
        const answer = await adapterGone(upstream, call.signal);
        if (answer === "gone") {
          // Not on that replica after all (another gateway pod unloaded it, or it restarted): reload and send again.
          slot.claim!.notLoaded();
          slot.release();
          tried.delete(replica);
          (gone ??= new Set()).add(replica);
          call.retried?.();
          continue;
        }
        if (answer === "aborted") {
          slot.release();
          return { answered: false, attempts, replica };
        }
        upstream.body = answer as unknown as Dispatcher.ResponseData["body"];
      }
      // A replica answered: no other attempt will need the body (if the upstream request has not let it go yet).
      call.body.release();
      return { answered: true, upstream, replica, attempts, done: () => slot.release() };
    } catch (err) {
      answered = true;
      clock.cancel(keeper);
      slot.release();
      if (call.signal.aborted) return { answered: false, attempts, replica };
      const code = errorCode(err);
      if (code === "UND_ERR_HEADERS_TIMEOUT") throw errors.upstreamTimeout(pool.model.id);
      if (code && CONNECT_ERRORS.has(code)) {
        // Out of every request's pick until a health check sees it again: it is leaving, restarting or gone.
        replica.eject(code);
        // Once the body went, the model server may have it: the client decides (the SDKs retry a 503).
        if (sent || !call.body.held) throw call.unavailable?.() ?? errors.connectionLost(pool.model.id, opts.retryAfterNotReadySeconds);
        if (refused++ === 0) firstRefusalAt = clock.now();
        onlyRefusals &&= REFUSALS.has(code);
        // The next replica not yet tried, within the budget: `tried` keeps each to one attempt, and placing finds none
        // (not_ready, above) once no ready one is left, whatever discovery did to the set meanwhile.
        if (pinned) throw call.unavailable?.() ?? unreachable("none left");
        if (clock.now() - firstRefusalAt < REFUSED_RETRY_BUDGET_MS) {
          call.retried?.();
          continue;
        }
        throw call.unavailable?.() ?? unreachable("budget");
      }
      throw errors.upstreamFailed(pool.model.id, (err as Error).message);
    }
  }
}

/**
 * Waits until the slot's adapter is usable on its replica (the load under way for it, this request's or an earlier
 * one's): "ready"; "again" when its entry left the replica's state meanwhile (a restart, a 404, a listing: the slot
 * is given back, to be placed again); "abandoned" when the client left (slot given back). A failed load gives the slot
 * back and throws `failed()`.
 */
async function adapterReady(slot: ReplicaSlot, call: UpstreamCall, failed: () => Error): Promise<"ready" | "again" | "abandoned"> {
  const claim = slot.claim!;
  try {
    // Waiting for a load, its body counts among waiting requests' again, as far as there is room.
    if (claim.loading) call.body.park();
    await untilAborted(claim.ready(), call.signal);
  } catch {
    slot.release();
    if (call.signal.aborted) return "abandoned";
    throw failed();
  }
  call.body.unpark();
  if (claim.current) return "ready";
  slot.release();
  return "again";
}

/**
 * Reads a 404's error body (bounded): "gone" when it says the model (the adapter) does not exist, "aborted" when the
 * client left meanwhile, else the bytes read as a fresh body for the relay to turn into the envelope.
 */
async function adapterGone(upstream: Dispatcher.ResponseData, signal: AbortSignal): Promise<"gone" | "aborted" | AsyncIterable<Buffer>> {
  let head: Buffer;
  try {
    head = await readHead(upstream, MAX_404_BODY_BYTES);
  } catch {
    if (signal.aborted) return "aborted";
    head = Buffer.alloc(0);
  }
  const { message, param } = extractUpstreamError(parseErrorBody(head.toString("utf8")));
  if (param === "model" || /model/i.test(message ?? "")) return "gone";
  const replay = Readable.from([head]);
  replay.on("error", ignore);
  return replay;
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
