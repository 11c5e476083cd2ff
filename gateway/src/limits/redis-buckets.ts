import type Redis from "ioredis";
import { CONCURRENCY_RETRY_MS, MAX_DEBT_WINDOWS, MINUTE_MS, type AdmitResult, type Buckets, type KeyLimits, type ReserveResult } from "./buckets";

/**
 * The rules of buckets.ts as Lua, so each decision is one atomic round trip shared by every gateway replica
 * (EVALSHA through ioredis' defineCommand). Time comes from the Redis server (TIME), so replicas' clocks do not
 * need to agree. Levels travel as strings: Redis truncates Lua numbers to integers.
 *
 * A key's slots are a sorted set of slot ids scored by the instant their lease ends; the replica holding a slot
 * renews it while the request lasts, and every admission first drops expired slots, so the slots of a replica
 * that died free themselves within one lease.
 */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function level(key, per, win)
  local s = redis.call('HMGET', key, 'l', 't')
  if not s[1] then return per end
  return math.min(per, tonumber(s[1]) + (now - tonumber(s[2])) * per / win)
end
`;

/** KEYS: rpm bucket, tpm bucket, slots. ARGV: rpm, tpm, maxConcurrent, ttl, window, lease, slot id. */
const ADMIT = `${PRELUDE}
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local maxc = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local win = tonumber(ARGV[5])
local lease = tonumber(ARGV[6])
local held = ''
if maxc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  local n = redis.call('ZCARD', KEYS[3])
  held = tostring(n)
  if n >= maxc then return {0, 'concurrency', '${CONCURRENCY_RETRY_MS}', '', '', held} end
end
local tl = ''
if tpm > 0 then
  local l = level(KEYS[2], tpm, win)
  tl = tostring(l)
  if l < 1 then return {0, 'tokens', tostring(math.ceil((1 - l) * win / tpm)), '', tl, held} end
end
local rl = ''
if rpm > 0 then
  local l = level(KEYS[1], rpm, win)
  if l < 1 then return {0, 'requests', tostring(math.ceil((1 - l) * win / rpm)), tostring(l), tl, held} end
  redis.call('HSET', KEYS[1], 'l', tostring(l - 1), 't', tostring(now))
  redis.call('PEXPIRE', KEYS[1], ttl)
  rl = tostring(l - 1)
end
if maxc > 0 then
  redis.call('ZADD', KEYS[3], now + lease, ARGV[7])
  redis.call('PEXPIRE', KEYS[3], lease * 2)
  held = tostring(tonumber(held) + 1)
end
return {1, '', '0', rl, tl, held}
`;

/** KEYS: tpm bucket. ARGV: tpm, tokens, ttl, window. */
const RESERVE = `${PRELUDE}
local tpm = tonumber(ARGV[1])
local want = tonumber(ARGV[2])
local win = tonumber(ARGV[4])
local l = level(KEYS[1], tpm, win)
if l < want then return {0, tostring(math.ceil((want - l) * win / tpm)), tostring(l)} end
l = l - want
redis.call('HSET', KEYS[1], 'l', tostring(l), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return {1, '0', tostring(l)}
`;

/** KEYS: tpm bucket. ARGV: tpm, tokens (negative: a refund), max debt in windows, ttl, window. */
const CHARGE = `${PRELUDE}
local tpm = tonumber(ARGV[1])
local l = level(KEYS[1], tpm, tonumber(ARGV[5]))
l = math.min(tpm, math.max(l - tonumber(ARGV[2]), -tonumber(ARGV[3]) * tpm))
redis.call('HSET', KEYS[1], 'l', tostring(l), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return tostring(l)
`;

/** KEYS: slot sets. ARGV: lease, then one slot id per key. Only slots still held are extended (XX). */
const RENEW = `${PRELUDE}
local lease = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now + lease, ARGV[i + 1])
  redis.call('PEXPIRE', key, lease * 2)
end
return #KEYS
`;

type RedisWithScripts = Redis & {
  gatewayAdmit(rpmKey: string, tpmKey: string, slotsKey: string, rpm: number, tpm: number, maxc: number, ttl: number, win: number, lease: number, slot: string): Promise<string[]>;
  gatewayReserve(tpmKey: string, tpm: number, tokens: number, ttl: number, win: number): Promise<string[]>;
  gatewayCharge(tpmKey: string, tpm: number, tokens: number, maxDebt: number, ttl: number, win: number): Promise<string>;
  gatewayRenew(...args: (string | number)[]): Promise<number>;
};

/** Renewals are sent in batches of this many slots (one script call each). */
const RENEW_BATCH = 256;

export interface RedisBucketsOptions {
  prefix?: string;
  windowMs?: number;
  /** How long a slot lives without renewal. */
  leaseMs?: number;
}

export class RedisBuckets implements Buckets {
  private readonly redis: RedisWithScripts;
  private readonly prefix: string;
  private readonly windowMs: number;
  readonly leaseMs: number;
  /** Buckets outlive the longest possible debt, then expire: a full bucket needs no state. */
  private readonly ttlMs: number;

  constructor(redis: Redis, options: RedisBucketsOptions = {}) {
    redis.defineCommand("gatewayAdmit", { numberOfKeys: 3, lua: ADMIT });
    redis.defineCommand("gatewayReserve", { numberOfKeys: 1, lua: RESERVE });
    redis.defineCommand("gatewayCharge", { numberOfKeys: 1, lua: CHARGE });
    redis.defineCommand("gatewayRenew", { lua: RENEW });
    this.redis = redis as RedisWithScripts;
    this.prefix = options.prefix ?? "gateway:rl:";
    this.windowMs = options.windowMs ?? MINUTE_MS;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.ttlMs = this.windowMs * (MAX_DEBT_WINDOWS + 2);
  }

  private key(name: string, what: "rpm" | "tpm" | "slots"): string {
    return `${this.prefix}${name}:${what}`;
  }

  async admit(name: string, limits: KeyLimits, slot: string): Promise<AdmitResult> {
    const [ok, refusedBy, wait, rl, tl, held] = await this.redis.gatewayAdmit(
      this.key(name, "rpm"),
      this.key(name, "tpm"),
      this.key(name, "slots"),
      limits.rpm ?? 0,
      limits.tpm ?? 0,
      limits.maxConcurrent ?? 0,
      this.ttlMs,
      this.windowMs,
      this.leaseMs,
      slot,
    );
    return {
      allowed: Number(ok) === 1,
      refusedBy: refusedBy ? (refusedBy as AdmitResult["refusedBy"]) : undefined,
      waitMs: Number(wait),
      requestsLevel: rl ? Number(rl) : undefined,
      tokensLevel: tl ? Number(tl) : undefined,
      inFlight: held ? Number(held) : undefined,
    };
  }

  async reserve(name: string, tpm: number, tokens: number): Promise<ReserveResult> {
    const [ok, wait, level] = await this.redis.gatewayReserve(this.key(name, "tpm"), tpm, tokens, this.ttlMs, this.windowMs);
    return { allowed: Number(ok) === 1, waitMs: Number(wait), tokensLevel: Number(level) };
  }

  async charge(name: string, tpm: number, tokens: number): Promise<void> {
    await this.redis.gatewayCharge(this.key(name, "tpm"), tpm, tokens, MAX_DEBT_WINDOWS, this.ttlMs, this.windowMs);
  }

  async release(name: string, slot: string): Promise<void> {
    await this.redis.zrem(this.key(name, "slots"), slot);
  }

  async renew(slots: readonly (readonly [string, string])[]): Promise<void> {
    for (let i = 0; i < slots.length; i += RENEW_BATCH) {
      const batch = slots.slice(i, i + RENEW_BATCH);
      await this.redis.gatewayRenew(batch.length, ...batch.map(([name]) => this.key(name, "slots")), this.leaseMs, ...batch.map(([, slot]) => slot));
    }
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }
}
