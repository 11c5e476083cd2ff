import { simulate } from "./world";

/**
 * The deterministic simulation of the gateway's control core (world.ts): every seed is a world (replicas, adapters,
 * wake, keys with priorities, weights and limits, a shared store) with seeded clients and faults on a virtual clock,
 * and every invariant is checked after every step. A failing seed prints its number; replay it with
 * `npm run simulate -- --seed N --trace`, and keep it below once fixed.
 */

/** Seeds that once broke an invariant, each with what it found; they run first, always. */
const REGRESSIONS: Record<number, string> = {
  45: "a replica that only lost its connection came back believed empty, and took a load over maxLoras",
  367: "a listing that found nothing new did not wake the requests waiting for the replica's adapters to be known",
  82: "an invariant's view: a request placed before its replica left discovery is sent there, as it should be",
  35: "an unload that failed dropped the adapter from the view while the replica still held it",
  3507: "a load under way when the replica's state was reset landed unseen, and a second one went over maxLoras",
  2020: "a replica dropped by discovery and listed again came back as a stranger, its pod's loads under way forgotten",
  325: "an unload that ended woke nobody, though requests for the adapter it removed waited for it to end",
  41380: "a listing asked for before another, answered after it, brought back an adapter the newer one had found gone",
  13560: "the same out-of-order listing, and a request for the adapter it brought back answered 404 twice",
};

/** Seeds per CI run; `SIM_SEEDS` and `SIM_FROM` run other ranges (or `npm run simulate`). */
const SEEDS = Number(process.env.SIM_SEEDS ?? 2000);
const FROM = Number(process.env.SIM_FROM ?? 1);

async function failures(seeds: Iterable<number>): Promise<string[]> {
  const failed: string[] = [];
  for (const seed of seeds) {
    const r = await simulate(seed);
    if (r.violations.length > 0) failed.push(`seed ${seed} (replay: npm run simulate -- --seed ${seed} --trace)\n    ${r.violations.slice(0, 3).join("\n    ")}`);
  }
  return failed;
}

describe("deterministic simulation of the control core", () => {
  it("replays a seed exactly", async () => {
    const [a, b] = [await simulate(2020, { trace: true }), await simulate(2020, { trace: true })];
    expect(a.trace.length).toBeGreaterThan(100);
    expect(b.trace).toEqual(a.trace);
  });

  it("keeps every invariant on the seeds that once broke one", async () => {
    expect(await failures(Object.keys(REGRESSIONS).map(Number))).toEqual([]);
  });

  it(`keeps every invariant on ${SEEDS} seeds from ${FROM}`, async () => {
    const seeds = Array.from({ length: SEEDS }, (_, i) => FROM + i);
    expect(await failures(seeds)).toEqual([]);
  }, 180_000);

  it("exercises what it claims to: requests placed, refused, abandoned, held, cut; adapters loaded", async () => {
    const totals: Record<string, number> = {};
    for (let seed = 1; seed <= 100; seed++) for (const [k, n] of Object.entries((await simulate(seed)).outcomes)) totals[k] = (totals[k] ?? 0) + n;
    for (const outcome of ["200", "200 cut", "gone", "429 model_saturated", "503 model_not_ready", "429 concurrency_limit_exceeded"]) expect(totals[outcome] ?? 0).toBeGreaterThan(0);
  }, 60_000);
});
