/**
 * Per-key limits: token buckets for RPM and TPM (capacity = the per-window limit, refilled continuously at
 * limit/window; the window is a minute outside tests) and a count of requests in progress (concurrency).
 *
 * - A request is admitted when the key holds fewer than `maxConcurrent` slots, its token bucket is not in debt
 *   and its request bucket holds one request; admission takes the request and a slot, atomically.
 * - Once the body is read, the request reserves the tokens it may use (its prompt, estimated, plus the
 *   completion it asked for at most): refused while the bucket holds fewer than that (capped at the bucket's
 *   size), so concurrent requests cannot together spend more than the bucket holds.
 * - When the response ends the reservation is settled with the real usage: the difference is refunded, or an
 *   overrun charged (the bucket may go into debt, bounded by MAX_DEBT_WINDOWS).
 * - The slot is released when the response ends, however it ends; in Redis it is a lease the holding replica
 *   renews, so the slots of a replica that died expire.
 *
 * The same rules run in process (LocalBuckets) and atomically in Redis (redis-buckets.ts).
 */

export interface KeyLimits {
  /** Requests per window; undefined = unlimited. */
  rpm?: number;
  /** Tokens per window; undefined = unlimited. */
  tpm?: number;
  /** Requests in progress at once; undefined = unlimited. */
  maxConcurrent?: number;
}

export type RefusedBy = "requests" | "tokens" | "concurrency";

export interface AdmitResult {
  allowed: boolean;
  /** Which limit refused, when one did. */
  refusedBy?: RefusedBy;
  /** Until the refusing limit may allow the request again (for concurrency, a guess). */
  waitMs: number;
  /** Bucket levels after the decision (may be negative for tokens). */
  requestsLevel?: number;
  tokensLevel?: number;
  /** Slots the key holds after the decision. */
  inFlight?: number;
}

export interface ReserveResult {
  allowed: boolean;
  waitMs: number;
  tokensLevel: number;
}

export interface Buckets {
  /** Atomically: refuse if the key is at maxConcurrent, its token bucket is in debt or its request bucket is empty; else take one request and (with maxConcurrent) the slot `slot`. */
  admit(name: string, limits: KeyLimits, slot: string): Promise<AdmitResult>;
  /** Atomically: takes `tokens` (at most `tpm`, the caller caps it) if the bucket holds them. */
  reserve(name: string, tpm: number, tokens: number): Promise<ReserveResult>;
  /** Takes `tokens` more (negative: gives them back, up to the bucket's size); may go into debt. */
  charge(name: string, tpm: number, tokens: number): Promise<void>;
  /** Gives the slot back. */
  release(name: string, slot: string): Promise<void>;
  /** Extends the leases of slots still held (a no-op in process). */
  renew(slots: readonly (readonly [name: string, slot: string])[]): Promise<void>;
  /** Resolves when the store answers (used to notice that it is back). */
  ping(): Promise<void>;
}

/** Debt is bounded so one enormous request cannot lock a key out for hours. */
export const MAX_DEBT_WINDOWS = 10;
export const MINUTE_MS = 60_000;

interface BucketState {
  level: number;
  at: number;
}

export function refill(state: BucketState | undefined, perWindow: number, now: number, windowMs = MINUTE_MS): number {
  if (!state) return perWindow;
  return Math.min(perWindow, state.level + ((now - state.at) * perWindow) / windowMs);
}

export function waitFor(level: number, needed: number, perWindow: number, windowMs = MINUTE_MS): number {
  return level >= needed ? 0 : Math.ceil(((needed - level) * windowMs) / perWindow);
}

/** What a refusal for concurrency suggests waiting: slots free when responses end, which nothing predicts. */
export const CONCURRENCY_RETRY_MS = 1000;

export class LocalBuckets implements Buckets {
  private readonly state = new Map<string, BucketState>();
  private readonly slots = new Map<string, Set<string>>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly windowMs = MINUTE_MS,
  ) {}

  async admit(name: string, limits: KeyLimits, slot: string): Promise<AdmitResult> {
    const t = this.now();
    const result: AdmitResult = { allowed: true, waitMs: 0 };
    const held = this.slots.get(name);
    if (limits.maxConcurrent) {
      result.inFlight = held?.size ?? 0;
      if (result.inFlight >= limits.maxConcurrent) return { ...result, allowed: false, refusedBy: "concurrency", waitMs: CONCURRENCY_RETRY_MS };
    }
    if (limits.tpm) {
      const tokensLevel = refill(this.state.get(`${name}:tpm`), limits.tpm, t, this.windowMs);
      result.tokensLevel = tokensLevel;
      // A bucket needs at least one token left to admit a request of yet unknown size.
      if (tokensLevel < 1) return { ...result, allowed: false, refusedBy: "tokens", waitMs: waitFor(tokensLevel, 1, limits.tpm, this.windowMs) };
    }
    if (limits.rpm) {
      const level = refill(this.state.get(`${name}:rpm`), limits.rpm, t, this.windowMs);
      if (level < 1) return { ...result, allowed: false, refusedBy: "requests", waitMs: waitFor(level, 1, limits.rpm, this.windowMs), requestsLevel: level };
      this.state.set(`${name}:rpm`, { level: level - 1, at: t });
      result.requestsLevel = level - 1;
    }
    if (limits.maxConcurrent) {
      if (held) held.add(slot);
      else this.slots.set(name, new Set([slot]));
      result.inFlight = (result.inFlight ?? 0) + 1;
    }
    return result;
  }

  async reserve(name: string, tpm: number, tokens: number): Promise<ReserveResult> {
    const t = this.now();
    const level = refill(this.state.get(`${name}:tpm`), tpm, t, this.windowMs);
    if (level < tokens) return { allowed: false, waitMs: waitFor(level, tokens, tpm, this.windowMs), tokensLevel: level };
    this.state.set(`${name}:tpm`, { level: level - tokens, at: t });
    return { allowed: true, waitMs: 0, tokensLevel: level - tokens };
  }

  async charge(name: string, tpm: number, tokens: number): Promise<void> {
    const t = this.now();
    const level = refill(this.state.get(`${name}:tpm`), tpm, t, this.windowMs);
    this.state.set(`${name}:tpm`, { level: Math.min(tpm, Math.max(level - tokens, -MAX_DEBT_WINDOWS * tpm)), at: t });
  }

  async release(name: string, slot: string): Promise<void> {
    const held = this.slots.get(name);
    if (!held) return;
    held.delete(slot);
    if (held.size === 0) this.slots.delete(name);
  }

  async renew(): Promise<void> {}

  async ping(): Promise<void> {}

  /** Full buckets carry no information; dropping them keeps memory bounded by active keys. */
  sweep(): void {
    const t = this.now();
    for (const [k, s] of this.state) if (t - s.at > this.windowMs * (MAX_DEBT_WINDOWS + 1)) this.state.delete(k);
  }
}
