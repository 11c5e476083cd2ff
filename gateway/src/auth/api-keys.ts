import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { ApiKeyRecord } from "../context/api-key-record";

/**
 * API keys. The gateway never stores a key: only its SHA-256 digest, next to a name used in logs and metrics.
 * A presented key is hashed first and compared digest-to-digest with timingSafeEqual, so response timing
 * can reveal nothing about stored keys (at most about a digest, which is useless to an attacker).
 */

export const KEY_PREFIX = "sk-";

export const BudgetSchema = z
  .strictObject({
    tokens: z.number().int().positive().optional(),
    requests: z.number().int().positive().optional(),
    period: z.enum(["day", "month"]),
  })
  .refine((b) => b.tokens !== undefined || b.requests !== undefined, { error: "budget: set tokens, requests or both" });
export type Budget = z.infer<typeof BudgetSchema>;

const KeyNameSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "key name: lowercase letters, digits, . _ -");

export const ApiKeyEntrySchema = z.strictObject({
  name: KeyNameSchema,
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "sha256: 64 lowercase hex characters"),
  /** Model ids this key may use; absent = all models. */
  models: z.array(z.string().min(1)).optional(),
  /** ISO 8601 instant after which the key is refused. */
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  rpm: z.number().int().positive().optional(),
  tpm: z.number().int().positive().optional(),
  /** Requests of this key in progress at once, across all gateway replicas; absent = GATEWAY_KEY_MAX_CONCURRENT (unset: unlimited). */
  maxConcurrent: z.number().int().positive().optional(),
  /** How its requests are served when a model is busy: `batch` waits behind `interactive` and is refused first. */
  priority: z.enum(["interactive", "batch"]).optional(),
  /** Its share of a busy model's slots relative to other keys of its priority (default 1). */
  weight: z.number().positive().max(1000).optional(),
  /** Tokens (prompt and completion) and/or requests the key may use per UTC day or month, across all replicas. */
  budget: BudgetSchema.optional(),
});

export const ApiKeysFileSchema = z.strictObject({ keys: z.array(ApiKeyEntrySchema) });

export type ApiKeyEntry = z.infer<typeof ApiKeyEntrySchema>;

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** 256 bits of randomness, URL-safe, with a recognisable prefix (secret scanners match `sk-`). */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString("base64url");
}

/** Keys remembered after a successful check, so a client's every request does not hash its key again. */
const AUTHENTICATED_CACHE_SIZE = 4096;

export class ApiKeyStore {
  private byDigest = new Map<string, { digest: Buffer; record: ApiKeyRecord }>();
  /**
   * Presented key -> its record, for keys that authenticated: bounded (least recently used first out), emptied on
   * every reload, expiry still checked on each use. Only keys that passed the digest check enter it, so unknown
   * keys cannot fill it, and every miss still goes through the hash and the constant-time comparison.
   */
  private authenticated = new Map<string, ApiKeyRecord>();

  constructor(entries: readonly ApiKeyEntry[] = []) {
    this.replace(entries);
  }

  /** Swaps the whole key set at once (used for hot reloads); a request sees either the old or the new set. */
  replace(entries: readonly ApiKeyEntry[]): void {
    const next = new Map<string, { digest: Buffer; record: ApiKeyRecord }>();
    for (const e of entries) {
      const parsed = ApiKeyEntrySchema.parse(e);
      next.set(parsed.sha256, {
        digest: Buffer.from(parsed.sha256, "hex"),
        record: {
          name: parsed.name,
          models: parsed.models ? new Set(parsed.models) : undefined,
          expiresAt: parsed.expiresAt ? new Date(parsed.expiresAt) : undefined,
          rpm: parsed.rpm,
          tpm: parsed.tpm,
          maxConcurrent: parsed.maxConcurrent,
          // Filled in, so the record itself is the scheduler's tenant (upstream/scheduler/tenant.ts).
          priority: parsed.priority ?? "interactive",
          weight: parsed.weight ?? 1,
          budget: parsed.budget,
        },
      });
    }
    this.byDigest = next;
    this.authenticated = new Map();
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Every key's record (the budget gauges). */
  *records(): IterableIterator<ApiKeyRecord> {
    for (const { record } of this.byDigest.values()) yield record;
  }

  /** The key's record, or undefined when it is unknown or expired. */
  authenticate(presented: string, now: number | Date = Date.now()): ApiKeyRecord | undefined {
    const at = typeof now === "number" ? now : now.getTime();
    let record = this.authenticated.get(presented);
    if (record) {
      // Most recently used last: re-insert.
      this.authenticated.delete(presented);
    } else {
      const digest = createHash("sha256").update(presented, "utf8").digest();
      const hit = this.byDigest.get(digest.toString("hex"));
      if (!hit || !timingSafeEqual(hit.digest, digest)) return undefined;
      record = hit.record;
    }
    if (record.expiresAt && record.expiresAt.getTime() <= at) return undefined;
    this.authenticated.set(presented, record);
    if (this.authenticated.size > AUTHENTICATED_CACHE_SIZE) this.authenticated.delete(this.authenticated.keys().next().value!);
    return record;
  }
}

/** Reads `Authorization: Bearer <key>`; the scheme is case-insensitive as in RFC 6750. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
