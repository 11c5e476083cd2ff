import { randomBytes } from "node:crypto";
import { ApiError, errors, retryAfterHeaders } from "../api/errors";
import { systemClock, type Clock, type ClockTimer } from "../context/clock";
import type { ApiKeyRecord } from "../context/api-key-record";
import type { LimitTicket, Usage } from "../context/limit-ticket";
import type { Logger } from "../observability/logger";
import { LocalBuckets, MINUTE_MS, type Buckets, type KeyLimits, type RefusedBy } from "./buckets";

/** Retry-After beyond this is not honoured by the SDKs (openai-node caps at 60 s): tell them not to retry. */
const MAX_CLIENT_RETRY_SECONDS = 60;

/** OpenAI's reset format: "12ms", "1s", "6m0s". */
export function formatReset(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

export type LimitsFailureMode = "open" | "closed";

/** How the per-key limits are enforced right now (the readiness detail and the metric say it too). */
export type LimitsState = "shared" | "per-replica" | "unavailable";

export interface RateLimitEvents {
  refused(keyName: string, limit: RefusedBy | "store_unavailable"): void;
  /** The shared store answered again (true) or stopped answering (false). */
  storeUp?(up: boolean): void;
}

export interface RateLimiterOptions {
  /** The length of the "minute" of rpm/tpm: 60,000 outside tests. */
  windowMs?: number;
  /** With the shared store unreachable: `open` goes on with per-replica buckets, `closed` refuses with 503. */
  failureMode?: LimitsFailureMode;
  /** maxConcurrent of keys that set none (undefined: unlimited). */
  defaultMaxConcurrent?: number;
  /** Completion tokens reserved for a request that sets no max_tokens. */
  reserveCeiling?: number;
  /** How long a shared slot lives without renewal (renewed every third of it). */
  leaseMs?: number;
  /** How often an unreachable store is probed. */
  probeIntervalMs?: number;
  /** Whether the shared store was reachable at start. */
  startUp?: boolean;
  /** Time and timers (the simulation's virtual clock in tests). */
  clock?: Clock;
}

/** `max_tokens` of a legacy completion that sets none. */
const LEGACY_DEFAULT_MAX_TOKENS = 16;

/** Bytes of request JSON per token, for the prompt estimate: about 4 characters per token, JSON syntax included, errs high. */
const BYTES_PER_TOKEN = 4;

/**
 * Tokens a request may use, reserved at admission: its prompt (estimated from the body's size) plus the
 * completion it asked for at most (`max_completion_tokens`, `max_tokens` or `max_output_tokens` of the Responses
 * API, times `n`, times the prompts of a legacy batch), or `ceiling` when it set none (16 for a legacy completion,
 * its default). A Responses turn that continues a stored one (`previous_response_id`) also reserves `ceiling` for
 * the stored conversation the model server adds to its prompt, which its small body does not show. Embeddings
 * generate nothing.
 */
export function tokensToReserve(json: unknown, bodyBytes: number, path: string, ceiling: number): number {
  const prompt = promptEstimate(bodyBytes);
  if (path.endsWith("/embeddings")) return prompt;
  const o = (json && typeof json === "object" ? json : {}) as Record<string, unknown>;
  const asked = [o.max_completion_tokens, o.max_tokens, o.max_output_tokens].find((v): v is number => typeof v === "number" && Number.isFinite(v) && v > 0);
  const n = typeof o.n === "number" && Number.isInteger(o.n) && o.n > 1 ? Math.min(o.n, 128) : 1;
  const legacy = path.endsWith("/v1/completions");
  // vLLM answers one choice (or n) per prompt of a batch: a string array or an array of token-id arrays.
  const prompts = legacy && Array.isArray(o.prompt) && o.prompt.length > 0 && typeof o.prompt[0] !== "number" ? Math.min(o.prompt.length, 2048) : 1;
  // Legacy completions default to 16 tokens when max_tokens is absent (OpenAI's and vLLM's default; null is unbounded).
  const fallback = legacy && !("max_tokens" in o) ? LEGACY_DEFAULT_MAX_TOKENS : ceiling;
  const stored = path.endsWith("/v1/responses") && typeof o.previous_response_id === "string" ? ceiling : 0;
  return prompt + stored + Math.ceil(asked ?? fallback) * n * prompts;
}

/** The prompt tokens a body of this size may hold, erring high (the reservation's estimate). */
export function promptEstimate(bodyBytes: number): number {
  return Math.ceil(bodyBytes / BYTES_PER_TOKEN);
}

function limitHeaders(key: KeyLimits, r: { requestsLevel?: number; tokensLevel?: number }, windowMs: number): Record<string, string> {
  const h: Record<string, string> = {};
  if (key.rpm && r.requestsLevel !== undefined) {
    h["x-ratelimit-limit-requests"] = String(key.rpm);
    h["x-ratelimit-remaining-requests"] = String(Math.max(0, Math.floor(r.requestsLevel)));
    h["x-ratelimit-reset-requests"] = formatReset(((key.rpm - r.requestsLevel) * windowMs) / key.rpm);
  }
  if (key.tpm && r.tokensLevel !== undefined) {
    h["x-ratelimit-limit-tokens"] = String(key.tpm);
    h["x-ratelimit-remaining-tokens"] = String(Math.max(0, Math.floor(r.tokensLevel)));
    h["x-ratelimit-reset-tokens"] = formatReset(((key.tpm - Math.min(key.tpm, r.tokensLevel)) * windowMs) / key.tpm);
  }
  return h;
}

/**
 * Per-key RPM, TPM and requests in progress. With Redis, the buckets and slots are shared by all gateway
 * replicas. When Redis stops answering (an error or a command timeout), the limiter says so once (a warning, the
 * `gateway_rate_limit_store_up` metric, the readiness detail) and, by `failureMode`, goes on with per-replica
 * buckets (`open`: each replica enforces every limit alone) or refuses limited keys with 503 (`closed`); it probes
 * Redis every `probeIntervalMs` and returns to it as soon as it answers, saying so once again.
 */
export class RateLimiter {
  private readonly local: LocalBuckets;
  private up: boolean;
  private readonly sweeper: ClockTimer;
  private readonly renewer: ClockTimer | undefined;
  private prober: ClockTimer | undefined;
  /** Slots held in the shared store by this replica's requests: slot id -> key name. */
  private readonly heldShared = new Map<string, string>();
  private readonly replicaId = randomBytes(6).toString("base64url");
  private seq = 0;
  readonly windowMs: number;
  readonly failureMode: LimitsFailureMode;
  readonly reserveCeiling: number;
  /** @internal */
  readonly clock: Clock;
  private readonly defaultMaxConcurrent: number | undefined;
  private readonly probeIntervalMs: number;

  constructor(
    private readonly shared: Buckets | undefined,
    private readonly log: Logger,
    private readonly events: RateLimitEvents = { refused: () => undefined },
    options: RateLimiterOptions = {},
  ) {
    this.windowMs = options.windowMs ?? MINUTE_MS;
    this.failureMode = options.failureMode ?? "open";
    this.reserveCeiling = options.reserveCeiling ?? 4096;
    this.defaultMaxConcurrent = options.defaultMaxConcurrent;
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
    this.clock = options.clock ?? systemClock;
    this.local = new LocalBuckets(() => this.clock.now(), this.windowMs);
    this.sweeper = this.clock.every(this.windowMs, () => this.local.sweep());
    this.up = shared !== undefined;
    if (shared) {
      const leaseMs = options.leaseMs ?? 30_000;
      this.renewer = this.clock.every(Math.max(50, Math.floor(leaseMs / 3)), () => void this.renew());
      this.events.storeUp?.(true);
      if (options.startUp === false) this.markDown(new Error("not reachable at start"));
    }
  }

  /** True while limits are enforced in the shared store. */
  get usingSharedStore(): boolean {
    return this.shared !== undefined && this.up;
  }

  get state(): LimitsState {
    if (this.usingSharedStore || !this.shared) return this.shared ? "shared" : "per-replica";
    return this.failureMode === "open" ? "per-replica" : "unavailable";
  }

  /** The limits in force for `key`. */
  limitsOf(key: ApiKeyRecord): KeyLimits {
    return { rpm: key.rpm, tpm: key.tpm, maxConcurrent: key.maxConcurrent ?? this.defaultMaxConcurrent };
  }

  /**
   * Admits a request of `key` (taking one request and a slot) or throws the 429 (or, failing closed, 503)
   * envelope. The ticket, if any, must be released when the response ends (see request-limits.ts).
   */
  async admit(key: ApiKeyRecord): Promise<LimitTicket | undefined> {
    const limits = this.limitsOf(key);
    if (!limits.rpm && !limits.tpm && !limits.maxConcurrent) return undefined;
    const slot = limits.maxConcurrent ? `${this.replicaId}:${++this.seq}` : "";
    const { out: result, store } = await this.run(key, (b) => b.admit(key.name, limits, slot));
    const headers = limitHeaders(limits, result, this.windowMs);
    if (!result.allowed) throw this.refusal(key, limits, result.refusedBy ?? "requests", result.waitMs, headers);
    if (limits.maxConcurrent && store === this.shared) this.heldShared.set(slot, key.name);
    return new StoreTicket(this, key, limits, store, limits.maxConcurrent ? slot : undefined, headers);
  }

  /**
   * The response's usage (undefined when the model server reported none) settles the request's token
   * reservation (see request-limits.ts). Never throws: a lost charge must not fail a finished response.
   */
  async settle(ticket: LimitTicket | undefined, res: { statusCode: number; headersSent: boolean }, usage: Usage | undefined): Promise<void> {
    await ticket?.settle(usage, res.statusCode === 200 && res.headersSent);
  }

  /** @internal The envelope for a refusal. */
  refusal(key: ApiKeyRecord, limits: KeyLimits, which: RefusedBy, waitMs: number, headers: Record<string, string>) {
    this.events.refused(key.name, which);
    const seconds = waitMs / 1000;
    const extra: Record<string, string> = { ...headers, ...retryAfterHeaders(seconds) };
    if (which === "concurrency") return errors.keyConcurrencyLimited(key.name, limits.maxConcurrent!, extra);
    // A wait the SDKs would not sit out is a quota-type refusal: retrying automatically only adds load.
    if (seconds > MAX_CLIENT_RETRY_SECONDS) extra["x-should-retry"] = "false";
    return errors.rateLimited(key.name, which, which === "requests" ? limits.rpm : limits.tpm, formatReset(waitMs), extra);
  }

  /** @internal Runs `op` on the shared store while it answers, else as failureMode says. */
  async run<T>(key: ApiKeyRecord, op: (b: Buckets) => Promise<T>): Promise<{ out: T; store: Buckets }> {
    const { out, onShared } = await this.route(key.name, this.shared && (() => op(this.shared!)), () => op(this.local));
    return { out, store: onShared ? this.shared! : this.local };
  }

  /**
   * Runs `shared` while the shared store answers, else `local` (failing open) or refuses with 503 (failing closed).
   * A failure of `shared` marks the store down, unless it is an answer for the client (an ApiError), which passes
   * through. The budgets (key-budgets.ts) keep their counters beside the buckets and follow the same store.
   */
  async route<T>(keyName: string, shared: (() => Promise<T>) | undefined, local: () => Promise<T>): Promise<{ out: T; onShared: boolean }> {
    if (shared && this.up) {
      try {
        return { out: await shared(), onShared: true };
      } catch (err) {
        if (err instanceof ApiError) throw err;
        this.markDown(err as Error);
      }
    }
    if (this.shared && this.failureMode === "closed") {
      this.events.refused(keyName, "store_unavailable");
      throw errors.limitsUnavailable();
    }
    return { out: await local(), onShared: false };
  }

  /** @internal Runs `op` on the store that holds a ticket's state; a failure is noted, never thrown. */
  async onStore(store: Buckets, op: (b: Buckets) => Promise<void>): Promise<void> {
    if (store === this.shared && !this.up) return; // lost: the slot's lease expires, a charge is forgotten
    try {
      await op(store);
    } catch (err) {
      if (store === this.shared) this.markDown(err as Error);
    }
  }

  /** A command on the shared store failed outside `route` (a settlement): the store counts as down, as there. */
  storeFailed(err: Error): void {
    if (this.shared) this.markDown(err);
  }

  /** @internal */
  forgetSlot(slot: string): void {
    this.heldShared.delete(slot);
  }

  private async renew(): Promise<void> {
    if (!this.shared || !this.up || this.heldShared.size === 0) return;
    try {
      await this.shared.renew([...this.heldShared].map(([slot, name]) => [name, slot] as const));
    } catch (err) {
      this.markDown(err as Error);
    }
  }

  private markDown(err: Error): void {
    if (!this.up) return;
    this.up = false;
    this.events.storeUp?.(false);
    this.log.warn(
      { err: err.message, failureMode: this.failureMode },
      this.failureMode === "open"
        ? "rate-limit store unreachable: enforcing limits per replica until it returns"
        : "rate-limit store unreachable: refusing requests of limited keys (503) until it returns",
    );
    this.prober = this.clock.every(this.probeIntervalMs, () => void this.probe());
  }

  private async probe(): Promise<void> {
    try {
      await this.shared!.ping();
    } catch {
      return;
    }
    if (this.up) return;
    this.up = true;
    this.clock.cancel(this.prober);
    this.prober = undefined;
    this.events.storeUp?.(true);
    this.log.info("rate-limit store reachable again: limits are shared across replicas");
  }

  stop(): void {
    this.clock.cancel(this.sweeper);
    this.clock.cancel(this.renewer);
    this.clock.cancel(this.prober);
  }
}

/**
 * What one admitted request holds, in the store (shared or local) that admitted it: its slot and, once its body
 * is read, its token reservation. `end()` (the response closed) releases the slot; `settle()` (the handler
 * learned the usage) settles the tokens. A request whose handler never settles (refused by validation, by
 * routing, or failed upstream before answering) is refunded when the response has closed and SETTLE_GRACE_MS
 * passed without a settlement.
 */
class StoreTicket implements LimitTicket {
  private reserved = 0;
  private tokenStore: Buckets;
  private settled = false;
  private ended = false;
  private timer: ClockTimer | undefined;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly key: ApiKeyRecord,
    private readonly limits: KeyLimits,
    private readonly store: Buckets,
    private slot: string | undefined,
    /** The x-ratelimit-* headers for the response. */
    readonly headers: Record<string, string>,
  ) {
    this.tokenStore = store;
  }

  /** Reserves `tokens` (capped at the bucket's size) or throws the 429 envelope; updates `headers`. */
  async reserve(tokens: number): Promise<void> {
    const tpm = this.limits.tpm;
    if (!tpm || this.ended) return;
    const want = Math.max(1, Math.min(Math.ceil(tokens), tpm));
    const { out, store } = await this.limiter.run(this.key, (b) => b.reserve(this.key.name, tpm, want));
    const headers = limitHeaders({ tpm }, out, this.limiter.windowMs);
    Object.assign(this.headers, headers);
    if (!out.allowed) throw this.limiter.refusal(this.key, this.limits, "tokens", out.waitMs, { ...this.headers });
    this.reserved = want;
    this.tokenStore = store;
    // The response closed while the store answered: nothing will settle this reservation, so it goes back now.
    if (this.ended) await this.settle(undefined, false);
  }

  /**
   * The response's usage: charges the difference from the reservation. Without usage, a response that began
   * (status 200) keeps its reservation as its charge (a stream cut before its usage chunk: what it used is
   * unknown), any other is refunded.
   */
  async settle(usage: Usage | undefined, began: boolean): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    this.limiter.clock.cancel(this.timer);
    const tpm = this.limits.tpm;
    if (!tpm) return;
    const used = usage ? (usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)) : began ? this.reserved : 0;
    const delta = used - this.reserved;
    if (delta !== 0) await this.limiter.onStore(this.tokenStore, (b) => b.charge(this.key.name, tpm, delta));
  }

  /** The response closed, however: the slot goes back at once; unsettled tokens after a grace. */
  release(): void {
    if (this.ended) return;
    this.ended = true;
    const slot = this.slot;
    if (slot) {
      this.slot = undefined;
      this.limiter.forgetSlot(slot);
      void this.limiter.onStore(this.store, (b) => b.release(this.key.name, slot));
    }
    if (!this.settled && this.reserved > 0) {
      this.timer = this.limiter.clock.after(SETTLE_GRACE_MS, () => void this.settle(undefined, false));
    }
  }
}

/** After the response closed, how long the handler has to report the usage before the reservation is refunded. */
export const SETTLE_GRACE_MS = 2000;
