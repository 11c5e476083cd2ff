import { errors, retryAfterHeaders } from "../api/errors";
import type { ApiKeyRecord } from "../auth/api-keys";
import type { Logger } from "../observability/logger";
import { LocalBuckets, type AdmitResult, type Buckets } from "./buckets";

/** Retry-After beyond this is not honoured by the SDKs (openai-node caps at 60 s): tell them not to retry. */
const MAX_CLIENT_RETRY_SECONDS = 60;

/** OpenAI's reset format: "12ms", "1s", "6m0s". */
export function formatReset(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

function limitHeaders(key: ApiKeyRecord, r: AdmitResult): Record<string, string> {
  const h: Record<string, string> = {};
  if (key.rpm && r.requestsLevel !== undefined) {
    h["x-ratelimit-limit-requests"] = String(key.rpm);
    h["x-ratelimit-remaining-requests"] = String(Math.max(0, Math.floor(r.requestsLevel)));
    h["x-ratelimit-reset-requests"] = formatReset(((key.rpm - r.requestsLevel) * 60_000) / key.rpm);
  }
  if (key.tpm && r.tokensLevel !== undefined) {
    h["x-ratelimit-limit-tokens"] = String(key.tpm);
    h["x-ratelimit-remaining-tokens"] = String(Math.max(0, Math.floor(r.tokensLevel)));
    h["x-ratelimit-reset-tokens"] = formatReset(((key.tpm - r.tokensLevel) * 60_000) / key.tpm);
  }
  return h;
}

export interface RateLimitEvents {
  refused(keyName: string, limit: "requests" | "tokens"): void;
}

/**
 * Per-key RPM and TPM. With Redis the buckets are shared by all gateway replicas; if Redis fails, the limiter
 * keeps serving on in-process buckets (each replica enforcing the limit alone) and warns, rather than failing
 * requests; it returns to Redis as soon as Redis answers again.
 */
export class RateLimiter {
  private readonly local = new LocalBuckets();
  private degraded = false;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly shared: Buckets | undefined,
    private readonly log: Logger,
    private readonly events: RateLimitEvents = { refused: () => undefined },
  ) {
    this.sweeper = setInterval(() => this.local.sweep(), 60_000);
    this.sweeper.unref();
  }

  get usingSharedStore(): boolean {
    return this.shared !== undefined && !this.degraded;
  }

  /** Resolves with the x-ratelimit-* headers to send, or throws the 429 envelope. */
  async admit(key: ApiKeyRecord): Promise<Record<string, string>> {
    if (!key.rpm && !key.tpm) return {};
    const limits = { rpm: key.rpm, tpm: key.tpm };
    const result = await this.withFallback((b) => b.admit(key.name, limits));
    const headers = limitHeaders(key, result);
    if (result.allowed) return headers;

    const which = result.refusedBy ?? "requests";
    this.events.refused(key.name, which);
    const seconds = result.waitMs / 1000;
    const limit = which === "requests" ? key.rpm : key.tpm;
    const extra: Record<string, string> = { ...headers, ...retryAfterHeaders(seconds) };
    // A wait the SDKs would not sit out is a quota-type refusal: retrying automatically only adds load.
    if (seconds > MAX_CLIENT_RETRY_SECONDS) extra["x-should-retry"] = "false";
    throw errors.rateLimited(key.name, which, limit, formatReset(result.waitMs), extra);
  }

  /** Charges real token usage; never throws (a lost charge must not fail a finished response). */
  async charge(key: ApiKeyRecord, tokens: number): Promise<void> {
    if (!key.tpm || !(tokens > 0)) return;
    const tpm = key.tpm;
    await this.withFallback((b) => b.charge(key.name, tpm, tokens)).catch(() => undefined);
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  private async withFallback<T>(op: (b: Buckets) => Promise<T>): Promise<T> {
    if (this.shared) {
      try {
        const out = await op(this.shared);
        if (this.degraded) {
          this.degraded = false;
          this.log.info("rate-limit store reachable again: limits are shared across replicas");
        }
        return out;
      } catch (err) {
        if (!this.degraded) {
          this.degraded = true;
          this.log.warn({ err: (err as Error).message }, "rate-limit store unreachable: enforcing limits per replica until it returns");
        }
      }
    }
    return op(this.local);
  }
}
