import { randomBytes } from "node:crypto";
import type Redis from "ioredis";
import type { BudgetCounters, TakeResult } from "./budget-counters";

/**
 * budget-counters.ts's rules in Redis, shared by every replica: a counter is a hash (`u` used, `d` deficit, `g` generation)
 * that expires a day after its period; each step is one script, so concurrent takes of all replicas never together
 * exceed the limit.
 */

/** KEYS: counter. ARGV: limit, want. Returns {taken, deficit, used, generation}, or {-1} when the counter does not exist. */
const TAKE = `
local s = redis.call('HMGET', KEYS[1], 'u', 'd', 'g')
if not s[1] then return {-1, 0, '0', ''} end
local used = tonumber(s[1])
local deficit = tonumber(s[2])
local want = tonumber(ARGV[2])
local left = tonumber(ARGV[1]) - used - deficit
local take = 0
if left >= want then take = want elseif left > 0 and deficit == 0 then take = left end
local short = 0
if take > 0 then
  short = want - take
  used = redis.call('HINCRBY', KEYS[1], 'u', take)
  deficit = redis.call('HINCRBY', KEYS[1], 'd', short)
end
return {take, short, tostring(used + deficit), s[3]}
`;

/** KEYS: counter. ARGV: baseline, generation, time to live (ms). Creates the counter unless one exists. */
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'u', ARGV[1], 'd', 0, 'g', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** KEYS: counter. ARGV: generation, delta, deficit. Applies to that generation only. */
const ADD = `
if redis.call('HGET', KEYS[1], 'g') ~= ARGV[1] then return false end
local d = redis.call('HINCRBY', KEYS[1], 'd', 0 - tonumber(ARGV[3]))
return redis.call('HINCRBY', KEYS[1], 'u', ARGV[2]) + d
`;

type RedisWithBudgets = Redis & {
  budgetTake(key: string, limit: number, want: number): Promise<[number, number, string, string]>;
  budgetCreate(key: string, baseline: number, generation: string, ttlMs: number): Promise<number>;
  budgetAdd(key: string, generation: string, delta: number, deficit: number): Promise<number | null>;
};

export class RedisBudgetCounters implements BudgetCounters {
  private readonly redis: RedisWithBudgets;

  constructor(
    redis: Redis,
    /** The gateway's wall clock: a counter's expiry is sent as a time to live, so Redis' own clock does not matter. */
    private readonly wallNow: () => number = Date.now,
    private readonly prefix = "gateway:budget:",
  ) {
    redis.defineCommand("budgetTake", { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand("budgetCreate", { numberOfKeys: 1, lua: CREATE });
    redis.defineCommand("budgetAdd", { numberOfKeys: 1, lua: ADD });
    this.redis = redis as RedisWithBudgets;
  }

  async take(counter: string, limit: number, want: number, expiresAtMs: number, baseline: () => Promise<number>): Promise<TakeResult> {
    const key = this.prefix + counter;
    let [taken, deficit, used, gen] = await this.redis.budgetTake(key, limit, want);
    if (Number(taken) === -1) {
      // Several replicas may read the baseline at once; the first to create the counter wins, the others take from it.
      await this.redis.budgetCreate(key, Math.max(0, Math.round(await baseline())), randomBytes(6).toString("base64url"), Math.max(1000, Math.round(expiresAtMs - this.wallNow())));
      [taken, deficit, used, gen] = await this.redis.budgetTake(key, limit, want);
      if (Number(taken) === -1) throw new Error(`budget counter ${counter} vanished as it was created`);
    }
    return { taken: Number(taken), deficit: Number(deficit), used: Number(used), generation: gen };
  }

  async add(counter: string, generation: string, delta: number, deficit: number): Promise<number | undefined> {
    const out = await this.redis.budgetAdd(this.prefix + counter, generation, Math.round(delta), deficit);
    return out === null ? undefined : Number(out);
  }
}
