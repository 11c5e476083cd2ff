import Redis from "ioredis";
import { LocalBudgetCounters, type BudgetCounters } from "../../src/limits/budget-counters";
import { RedisBudgetCounters } from "../../src/limits/redis-budget-counters";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";

/**
 * The budget counters' rules, the same in process and in Redis (one Lua script per step, on a real redis-server):
 * a take gets all it asks when that much is left, else the rest if no other request runs short, else nothing; a
 * settlement applies to the counter's own generation only; a missing counter starts at its baseline, read once.
 */
const DAY = 86_400_000;
let seq = 0;

function contract(name: string, make: () => { counters: BudgetCounters; restart(): Promise<void> }) {
  describe(name, () => {
    const baseline = (n: number) => async () => n;

    it("takes what is asked while it fits, then the rest for one request at a time, then nothing", async () => {
      const { counters } = make();
      const c = `k${++seq}:tokens:2026-11`;
      const expires = Date.now() + DAY;
      expect(await counters.take(c, 1000, 600, expires, baseline(0))).toMatchObject({ taken: 600, deficit: 0, used: 600 });
      // 400 left, 500 asked: the rest, and the shortfall held.
      const short = await counters.take(c, 1000, 500, expires, baseline(0));
      expect(short).toMatchObject({ taken: 400, deficit: 100, used: 1100 });
      // The first settles using 300 of its 600: 300 come back, but the shortfall keeps them from a second short take.
      expect(await counters.add(c, short.generation, -300, 0)).toBe(800);
      expect(await counters.take(c, 1000, 250, expires, baseline(0))).toMatchObject({ taken: 0 });
      // ...while a take that fits whole still may.
      expect(await counters.take(c, 1000, 150, expires, baseline(0))).toMatchObject({ taken: 150, deficit: 0, used: 950 });
      // The short one settles at 480 of its 400 taken: the shortfall clears, the overrun is charged.
      expect(await counters.add(c, short.generation, 80, 100)).toBe(930);
      expect(await counters.take(c, 1000, 500, expires, baseline(0))).toMatchObject({ taken: 70, deficit: 430 });
      // A zero take reads the counter.
      expect(await counters.take(c, 1000, 0, expires, baseline(0))).toMatchObject({ taken: 0, used: 1430 });
    });

    it("starts a missing counter at its baseline, and refuses one already past its limit", async () => {
      const { counters } = make();
      const c = `k${++seq}:requests:2026-11-29`;
      let reads = 0;
      const fromLedger = async () => (reads++, 4);
      const takes = await Promise.all(Array.from({ length: 3 }, () => counters.take(c, 5, 1, Date.now() + DAY, fromLedger)));
      expect(takes.map((t) => t.taken).sort()).toEqual([0, 0, 1]);
      expect(reads).toBeGreaterThanOrEqual(1);
      const past = `k${++seq}:tokens:2026-11`;
      expect(await counters.take(past, 100, 10, Date.now() + DAY, baseline(250))).toMatchObject({ taken: 0, used: 250 });
    });

    it("drops a settlement meant for a counter lost and created again", async () => {
      const harness = make();
      const c = `k${++seq}:tokens:2026-11`;
      const first = await harness.counters.take(c, 1000, 500, Date.now() + DAY, baseline(0));
      await harness.restart();
      const again = await harness.counters.take(c, 1000, 100, Date.now() + DAY, baseline(300));
      expect(again).toMatchObject({ taken: 100, used: 400 });
      expect(again.generation).not.toBe(first.generation);
      expect(await harness.counters.add(c, first.generation, -500, 0)).toBeUndefined();
      expect(await harness.counters.take(c, 1000, 0, Date.now() + DAY, baseline(0))).toMatchObject({ used: 400 });
    });

    it("does not let a failed baseline read create the counter", async () => {
      const { counters } = make();
      const c = `k${++seq}:tokens:2026-11`;
      await expect(counters.take(c, 100, 10, Date.now() + DAY, () => Promise.reject(new Error("ledger unreadable")))).rejects.toThrow("ledger unreadable");
      expect(await counters.take(c, 100, 10, Date.now() + DAY, baseline(20))).toMatchObject({ taken: 10, used: 30 });
    });
  });
}

contract("LocalBudgetCounters", () => {
  const box = { counters: new LocalBudgetCounters() };
  return {
    get counters() {
      return box.counters;
    },
    restart: async () => void (box.counters = new LocalBudgetCounters()),
  };
});

describeWithRedis("RedisBudgetCounters on a real redis-server", () => {
  let redis: RunningRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  contract("the rules", () => ({
    counters: new RedisBudgetCounters(client),
    restart: async () => void (await client.flushall()),
  }));

  it("lets a counter expire a day after its period, whatever Redis' own clock says", async () => {
    const wall = Date.UTC(2020, 0, 1); // the gateway's clock far behind Redis'
    const counters = new RedisBudgetCounters(client, () => wall);
    await counters.take("ttl:tokens:2020-01", 100, 1, wall + 2 * DAY, async () => 0);
    const ttl = await client.pttl("gateway:budget:ttl:tokens:2020-01");
    expect(ttl).toBeGreaterThan(2 * DAY - 60_000);
    expect(ttl).toBeLessThanOrEqual(2 * DAY);
  });
});
