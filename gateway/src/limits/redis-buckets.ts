import type Redis from "ioredis";
import { MAX_DEBT_MINUTES, type AdmitResult, type BucketLimits, type Buckets } from "./buckets";

/**
 * The token-bucket rules of buckets.ts as Lua, so each decision is one atomic round trip shared by every
 * gateway replica. Time comes from the Redis server (TIME), so replicas' clocks do not need to agree.
 * Levels travel as strings: Redis truncates Lua numbers to integers.
 */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local function level(key, per)
  local s = redis.call('HMGET', key, 'l', 't')
  if not s[1] then return per end
  return math.min(per, tonumber(s[1]) + (now - tonumber(s[2])) * per / 60000)
end
local tl = ''
if tpm > 0 then
  local l = level(KEYS[2], tpm)
  tl = tostring(l)
  if l < 1 then return {0, 'tokens', tostring(math.ceil((1 - l) * 60000 / tpm)), '', tl} end
end
local rl = ''
if rpm > 0 then
  local l = level(KEYS[1], rpm)
  if l < 1 then return {0, 'requests', tostring(math.ceil((1 - l) * 60000 / rpm)), tostring(l), tl} end
  redis.call('HSET', KEYS[1], 'l', tostring(l - 1), 't', tostring(now))
  redis.call('PEXPIRE', KEYS[1], ttl)
  rl = tostring(l - 1)
end
return {1, '', '0', rl, tl}
`;

const CHARGE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tpm = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local floor = -tonumber(ARGV[3]) * tpm
local s = redis.call('HMGET', KEYS[1], 'l', 't')
local l = tpm
if s[1] then l = math.min(tpm, tonumber(s[1]) + (now - tonumber(s[2])) * tpm / 60000) end
l = math.max(l - cost, floor)
redis.call('HSET', KEYS[1], 'l', tostring(l), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return tostring(l)
`;

type RedisWithScripts = Redis & {
  gatewayAdmit(rpmKey: string, tpmKey: string, rpm: number, tpm: number, ttl: number): Promise<string[]>;
  gatewayCharge(tpmKey: string, tpm: number, cost: number, maxDebtMinutes: number, ttl: number): Promise<string>;
};

/** Keys outlive the longest possible debt, then expire: a full bucket needs no state. */
const TTL_MS = 60_000 * (MAX_DEBT_MINUTES + 2);

export class RedisBuckets implements Buckets {
  private readonly redis: RedisWithScripts;

  constructor(redis: Redis, private readonly prefix = "gateway:rl:") {
    redis.defineCommand("gatewayAdmit", { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand("gatewayCharge", { numberOfKeys: 1, lua: CHARGE });
    this.redis = redis as RedisWithScripts;
  }

  async admit(name: string, limits: BucketLimits): Promise<AdmitResult> {
    const [ok, refusedBy, wait, rl, tl] = await this.redis.gatewayAdmit(
      `${this.prefix}${name}:rpm`,
      `${this.prefix}${name}:tpm`,
      limits.rpm ?? 0,
      limits.tpm ?? 0,
      TTL_MS,
    );
    return {
      allowed: Number(ok) === 1,
      refusedBy: refusedBy ? (refusedBy as "requests" | "tokens") : undefined,
      waitMs: Number(wait),
      requestsLevel: rl ? Number(rl) : undefined,
      tokensLevel: tl ? Number(tl) : undefined,
    };
  }

  async charge(name: string, tpm: number, tokens: number): Promise<void> {
    await this.redis.gatewayCharge(`${this.prefix}${name}:tpm`, tpm, tokens, MAX_DEBT_MINUTES, TTL_MS);
  }
}
