import { createPrng, type Prng } from "../../../simulator/src/prng";
import { ApiError } from "../../src/api/errors";
import type { ApiKeyRecord } from "../../src/context/api-key-record";
import { periodOf } from "../../src/context/periods";
import { LocalBudgetCounters, type BudgetCounters } from "../../src/limits/budget-counters";
import { LocalBuckets } from "../../src/limits/buckets";
import { KeyBudgets, type BudgetHold } from "../../src/limits/key-budgets";
import { RateLimiter } from "../../src/limits/rate-limiter";
import { createLogger } from "../../src/observability/logger";
import { flush, VirtualClock } from "./virtual-clock";

/**
 * Budgets across replicas as a deterministic simulation: three replicas' KeyBudgets share one counter store whose
 * every command arrives and answers after a seeded delay; requests of one key arrive over two hours that cross a
 * month's end, take their tokens, use them (or are cut, fail, or never reach a model, or their client leaves), and
 * settle; the store may restart (its counters lost, rebuilt from what the simulated ledger had written). After
 * every step: no counter below what it was created at (zero, or the ledger's total), requests never past their budget, tokens past theirs by at most one request's
 * reservation (plus what a restart lost); once everything settled without a restart, each period's counter equals
 * exactly what its requests were charged.
 */

/** An hour before December 2026 (UTC): every run crosses a month's end. */
const WALL_BASE = Date.UTC(2026, 10, 30, 23, 0);
const FLUSH_MS = 10_000;

/** The shared store: each command runs after a delay and answers after another; `restart()` loses every counter. */
class SimCounters implements BudgetCounters {
  private inner: LocalBudgetCounters;

  constructor(
    private readonly clock: VirtualClock,
    private readonly rng: Prng,
    private readonly wallNow: () => number,
  ) {
    this.inner = new LocalBudgetCounters(wallNow);
  }

  restart(): void {
    this.inner = new LocalBudgetCounters(this.wallNow);
  }

  /** The counter's value now (undefined: none). */
  peek(counter: string): number | undefined {
    return (this.inner as unknown as { counters: Map<string, { used: number }> }).counters.get(counter)?.used;
  }

  private delayed<T>(op: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.clock.after(this.rng.int(0, 3), () => {
        op().then(
          (v) => this.clock.after(this.rng.int(0, 3), () => resolve(v)),
          (e: unknown) => this.clock.after(this.rng.int(0, 3), () => reject(e as Error)),
        );
      });
    });
  }

  take(counter: string, limit: number, want: number, expiresAtMs: number, baseline: () => Promise<number>): Promise<import("../../src/limits/budget-counters").TakeResult> {
    return this.delayed(() => this.inner.take(counter, limit, want, expiresAtMs, baseline));
  }

  add(counter: string, generation: string, delta: number, deficit: number): Promise<number | undefined> {
    return this.delayed(() => this.inner.add(counter, generation, delta, deficit));
  }
}

interface Outcome {
  period: string;
  took: boolean;
  want: number;
  taken: number;
  charged: number;
}

interface World {
  violations: string[];
  restarted: boolean;
  admitted: number;
  refused: number;
  partial: number;
}

export async function simulateBudgets(seed: number): Promise<World> {
  const rng = createPrng(seed);
  const clock = new VirtualClock();
  const wallNow = () => WALL_BASE + clock.now();
  const log = createLogger("silent");
  const store = new SimCounters(clock, rng, wallNow);
  const tokens = rng.int(2_000, 30_000);
  const requestsBudget = rng.next() < 0.4 ? rng.int(5, 60) : undefined;
  const key: ApiKeyRecord = { name: "team", budget: { tokens, requests: requestsBudget, period: "month" } };

  // The ledger as budgets read it: what each replica charged, written every FLUSH_MS.
  const written: { period: number; tokens: number; requests: number }[] = [];
  const unwritten: (typeof written)[] = [[], [], []];
  /** What each counter was created at (a counter never goes below it: refunds give back only what was taken from it). */
  const createdAt = new Map<string, number>();
  const baseline = async (_k: string, resource: "tokens" | "requests", start: number) => {
    const value = written.filter((w) => w.period === start).reduce((sum, w) => sum + (resource === "tokens" ? w.tokens : w.requests), 0);
    createdAt.set(`${resource}:${periodOf("month", start).label}`, value);
    return value;
  };
  const replicas = [0, 1, 2].map((i) => {
    clock.every(FLUSH_MS, () => written.push(...unwritten[i]!.splice(0)));
    const limiter = new RateLimiter(new LocalBuckets(() => clock.now()), log, undefined, { clock });
    return new KeyBudgets(limiter, store, new LocalBudgetCounters(wallNow), baseline, wallNow, clock);
  });

  const world: World = { violations: [], restarted: false, admitted: 0, refused: 0, partial: 0 };
  const outcomes: Outcome[] = [];
  const lostAtRestart = new Map<string, number>();
  const restartAt = rng.next() < 0.3 ? rng.int(0, 7_200_000) : undefined;
  if (restartAt !== undefined) {
    clock.after(restartAt, () => {
      world.restarted = true;
      // What the new counters cannot know: charges not yet written, and what requests in flight will use.
      const pending = unwritten.flat().reduce((s, w) => s + w.tokens, 0);
      const inFlight = outcomes.filter((o) => o.took && o.charged < 0).reduce((s, o) => s + o.want, 0);
      const label = periodOf("month", wallNow()).label;
      lostAtRestart.set(label, (lostAtRestart.get(label) ?? 0) + pending + inFlight);
      store.restart();
    });
  }
  const sleep = (ms: number) => new Promise<void>((resolve) => clock.after(ms, resolve));

  const request = async (r: number) => {
    const budgets = replicas[r]!;
    const period = periodOf("month", wallNow());
    const o: Outcome = { period: period.label, took: false, want: 0, taken: 0, charged: -1 };
    let hold: BudgetHold | undefined;
    try {
      hold = await budgets.admit(key);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== "budget_exceeded") world.violations.push(`admission threw ${String(err)}`);
      world.refused++;
      return;
    }
    outcomes.push(o);
    o.took = true;
    world.admitted++;
    const end = () => hold!.release();
    if (rng.next() < 0.08) return end(); // the client left before its body was read
    o.want = rng.int(20, 4_000);
    try {
      await hold!.reserveTokens(o.want);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== "budget_exceeded") world.violations.push(`reserve threw ${String(err)}`);
      world.refused++;
      o.charged = 0;
      return end();
    }
    o.taken = hold!.takenTokens;
    if (o.taken < o.want) world.partial++;
    await sleep(rng.int(5, 20_000));
    const fate = rng.next();
    let charged: number;
    if (fate < 0.75) {
      // The estimate bounds what a request uses (max_tokens set, prompt estimated high).
      // Most answers run close to their max_tokens; the rest stop early and give much back.
      charged = rng.next() < 0.7 ? o.want - rng.int(0, Math.floor(o.want / 10)) : rng.int(1, o.want);
      await hold!.settle({ prompt_tokens: Math.floor(charged / 3), completion_tokens: charged - Math.floor(charged / 3) }, true);
    } else if (fate < 0.85) {
      charged = o.taken; // a stream cut before its usage: charged what it took
      await hold!.settle(undefined, true);
    } else if (fate < 0.93) {
      charged = 0; // the model server answered an error
      await hold!.settle(undefined, false);
    } else {
      charged = 0; // never reached a model: refunded after the grace
    }
    o.charged = charged;
    unwritten[r]!.push({ period: period.start, tokens: charged, requests: fate < 0.93 ? 1 : 0 });
    end();
  };

  const count = rng.int(30, 160);
  for (let i = 0; i < count; i++) clock.after(rng.int(0, 7_200_000), () => void request(rng.int(0, 2)));

  const check = () => {
    for (const label of ["2026-11", "2026-12"]) {
      const used = store.peek(`team:tokens:${label}`);
      if (used !== undefined && used < (createdAt.get(`tokens:${label}`) ?? 0)) world.violations.push(`${label}: tokens counter ${used} below what it was created at`);
      const mine = outcomes.filter((o) => o.period === label);
      const charged = mine.reduce((s, o) => s + Math.max(0, o.charged), 0);
      // One request's shortfall: what it asked beyond what it took.
      const maxShort = Math.max(0, ...mine.filter((o) => o.taken > 0).map((o) => o.want - o.taken));
      const bound = tokens + maxShort + (lostAtRestart.get(label) ?? 0);
      if (charged > bound) world.violations.push(`${label}: ${charged} tokens charged, past the budget ${tokens} by more than one request's shortfall (${maxShort}) and what a restart lost`);
      const requests = store.peek(`team:requests:${label}`);
      if (requestsBudget !== undefined && requests !== undefined && requests > requestsBudget) world.violations.push(`${label}: ${requests} requests counted, past the budget of ${requestsBudget}`);
    }
  };

  while (clock.runNext()) {
    await flush();
    check();
    if (clock.now() > 7_200_000 + 40_000) break;
  }
  await clock.advance(10_000);
  await flush();
  check();
  if (!world.restarted) {
    for (const label of ["2026-11", "2026-12"]) {
      const charged = outcomes.filter((o) => o.period === label).reduce((s, o) => s + Math.max(0, o.charged), 0);
      const used = store.peek(`team:tokens:${label}`) ?? 0;
      if (used !== charged) world.violations.push(`${label}: counter ${used} after every request settled, but requests were charged ${charged}`);
    }
  }
  return world;
}

/** Seeds that once broke an invariant, with what each found. */
const REGRESSIONS: Record<number, string> = {};
const SEEDS = Number(process.env.BUDGET_SIM_SEEDS ?? 200);

describe("budgets across replicas (deterministic simulation)", () => {
  it(`keeps every invariant on the regression seeds and ${SEEDS} more`, async () => {
    const failed: string[] = [];
    const totals = { admitted: 0, refused: 0, partial: 0, restarted: 0 };
    for (const seed of [...Object.keys(REGRESSIONS).map(Number), ...Array.from({ length: SEEDS }, (_, i) => i + 1)]) {
      const w = await simulateBudgets(seed);
      if (w.violations.length) failed.push(`seed ${seed}: ${w.violations.slice(0, 3).join("; ")}`);
      totals.admitted += w.admitted;
      totals.refused += w.refused;
      totals.partial += w.partial;
      totals.restarted += w.restarted ? 1 : 0;
    }
    expect(failed).toEqual([]);
    // The runs reach what they claim to: budgets spent and refused, partial reservations, restarts.
    expect(totals.refused).toBeGreaterThan(100);
    expect(totals.partial).toBeGreaterThan(20);
    expect(totals.restarted).toBeGreaterThan(30);
  }, 120_000);
});
