/**
 * Token buckets for per-key limits: capacity = the per-minute limit, refilled continuously at limit/60 s.
 * Requests (RPM) are taken up front; tokens (TPM) are charged after the response with the real usage, so the
 * token bucket may go into debt, and a key in debt is refused until it has refilled (as Envoy AI Gateway and
 * LiteLLM do: usage is only known afterwards).
 * The same rules run in process (LocalBuckets) and atomically in Redis (redis-buckets.ts).
 */

export interface BucketLimits {
  /** Requests per minute; undefined = unlimited. */
  rpm?: number;
  /** Tokens per minute; undefined = unlimited. */
  tpm?: number;
}

export interface AdmitResult {
  allowed: boolean;
  /** Which limit refused, when one did. */
  refusedBy?: "requests" | "tokens";
  /** Until the refusing bucket allows the request again. */
  waitMs: number;
  /** Bucket levels after the decision (may be negative for tokens). */
  requestsLevel?: number;
  tokensLevel?: number;
}

export interface Buckets {
  /** Atomically: refuse if the token bucket is in debt or the request bucket is empty; else take one request. */
  admit(name: string, limits: BucketLimits): Promise<AdmitResult>;
  /** Charges real token usage after a response. */
  charge(name: string, tpm: number, tokens: number): Promise<void>;
}

/** Debt is bounded so one enormous request cannot lock a key out for hours. */
export const MAX_DEBT_MINUTES = 10;

interface BucketState {
  level: number;
  at: number;
}

export function refill(state: BucketState | undefined, perMinute: number, now: number): number {
  if (!state) return perMinute;
  return Math.min(perMinute, state.level + ((now - state.at) * perMinute) / 60_000);
}

export function waitFor(level: number, needed: number, perMinute: number): number {
  return level >= needed ? 0 : Math.ceil(((needed - level) * 60_000) / perMinute);
}

export class LocalBuckets implements Buckets {
  private readonly state = new Map<string, BucketState>();

  constructor(private readonly now: () => number = Date.now) {}

  async admit(name: string, limits: BucketLimits): Promise<AdmitResult> {
    const t = this.now();
    const result: AdmitResult = { allowed: true, waitMs: 0 };
    let tokensLevel: number | undefined;
    if (limits.tpm) {
      tokensLevel = refill(this.state.get(`${name}:tpm`), limits.tpm, t);
      result.tokensLevel = tokensLevel;
      // A bucket needs at least one token left to admit a request of unknown size.
      if (tokensLevel < 1) return { ...result, allowed: false, refusedBy: "tokens", waitMs: waitFor(tokensLevel, 1, limits.tpm) };
    }
    if (limits.rpm) {
      const level = refill(this.state.get(`${name}:rpm`), limits.rpm, t);
      if (level < 1) return { ...result, allowed: false, refusedBy: "requests", waitMs: waitFor(level, 1, limits.rpm), requestsLevel: level };
      this.state.set(`${name}:rpm`, { level: level - 1, at: t });
      result.requestsLevel = level - 1;
    }
    return result;
  }

  async charge(name: string, tpm: number, tokens: number): Promise<void> {
    const t = this.now();
    const level = refill(this.state.get(`${name}:tpm`), tpm, t);
    this.state.set(`${name}:tpm`, { level: Math.max(level - tokens, -MAX_DEBT_MINUTES * tpm), at: t });
  }

  /** Full buckets carry no information; dropping them keeps memory bounded by active keys. */
  sweep(): void {
    const t = this.now();
    for (const [k, s] of this.state) if (t - s.at > 60_000 * (MAX_DEBT_MINUTES + 1)) this.state.delete(k);
  }
}
