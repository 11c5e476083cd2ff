import { parseCatalog } from "../../src/config/load-catalog";
import type { CatalogInput } from "../../src/config/catalog";
import { ModelPool, type AcquireResult } from "../../src/upstream/model-pool";
import { LOAD_STALE_MS } from "../../src/upstream/replica";
import type { WaitRequest } from "../../src/upstream/scheduler/model-scheduler";
import type { Tenant } from "../../src/upstream/scheduler/tenant";
import { flush, VirtualClock } from "../sim/virtual-clock";

/** The model scheduler through its pool, on a virtual clock: every wait, order and exit, one rule per test. */

type Model = CatalogInput["models"][number];

function pool(model: Partial<Model> & { replicas?: number } = {}, clock = new VirtualClock()): { p: ModelPool; clock: VirtualClock } {
  const { replicas = 1, ...rest } = model;
  const catalog = parseCatalog({
    models: [
      {
        id: "m",
        category: "generative",
        maxConcurrency: 1,
        upstream: { mode: "endpoints", endpoints: Array.from({ length: replicas }, (_, i) => ({ url: `http://r${i}:8000` })) },
        ...rest,
      } as Model,
    ],
  });
  const p = new ModelPool(catalog.models[0]!, clock);
  if (!model.wake) p.replicas.forEach((r) => r.markHealthy());
  return { p, clock };
}

const key = (name: string, priority: Tenant["priority"] = "interactive", weight = 1): Tenant => ({ name, priority, weight });
const ask = (p: ModelPool, tenant: Tenant, more: Partial<WaitRequest> = {}) => p.acquire({ tenant, ctx: {}, ...more });

/** Records the order in which acquisitions resolve. */
function recorder() {
  const order: string[] = [];
  const track = (label: string, pending: Promise<AcquireResult>) => pending.then((r) => (order.push(label), r));
  return { order, track };
}

async function slot(pending: Promise<AcquireResult>) {
  const r = await pending;
  if (!r.ok) throw new Error(`expected a slot, got ${r.reason}`);
  return r.slot;
}

describe("model scheduler: waits and exits", () => {
  it("serves one key's waiting requests oldest first, each as soon as a slot is given back", async () => {
    const { p } = pool({ routing: { queueTimeoutMs: 5000, maxQueueLength: 5 } });
    const a = key("a");
    const first = await slot(ask(p, a));
    const { order, track } = recorder();
    const waiting = [1, 2, 3].map((i) => track(String(i), ask(p, a)));
    expect(p.queueLength).toBe(3);
    let held = first;
    for (let i = 0; i < 3; i++) {
      held.release();
      held = await slot(waiting[i]!);
    }
    expect(order).toEqual(["1", "2", "3"]);
    held.release();
    expect(p.replicas[0]!.inFlight).toBe(0);
  });

  it("refuses when the queue is full, and at the deadline: saturated; the client leaving: abandoned", async () => {
    const { p, clock } = pool({ routing: { queueTimeoutMs: 50, maxQueueLength: 1 } });
    await slot(ask(p, key("a")));
    const waiter = ask(p, key("a"));
    expect(await ask(p, key("a"))).toEqual({ ok: false, reason: "saturated" });
    await clock.advance(50);
    expect(await waiter).toEqual({ ok: false, reason: "saturated" });
    const ac = new AbortController();
    const left = ask(p, key("a"), { signal: ac.signal });
    ac.abort();
    expect(await left).toEqual({ ok: false, reason: "abandoned" });
    expect(p.queueLength).toBe(0);
  });

  it("answers not_ready at once when no replica is ready, without queueing", async () => {
    const { p } = pool({ replicas: 2, routing: { queueTimeoutMs: 10_000 } });
    p.replicas.forEach((r) => r.eject("ECONNREFUSED"));
    expect(await ask(p, key("a"))).toEqual({ ok: false, reason: "not_ready" });
  });

  it("sends queued requests away with not_ready when the last replica goes, instead of at their deadline", async () => {
    const { p } = pool({ routing: { queueTimeoutMs: 10_000 } });
    await slot(ask(p, key("a")));
    const waiting = ask(p, key("b"));
    p.replicas[0]!.eject("ECONNREFUSED");
    expect(await waiting).toEqual({ ok: false, reason: "not_ready" });
  });

  it("a request left with no replica it may use leaves at once (503), even while the others are full", async () => {
    const { p } = pool({ replicas: 2, routing: { queueTimeoutMs: 10_000 } });
    const [r0, r1] = p.replicas;
    await slot(ask(p, key("a")));
    await slot(ask(p, key("a")));
    // Pinned to r1 (a stored response's follow-up): r0 is excluded.
    const pinned = ask(p, key("b"), { exclude: { has: (r) => r !== r1 } });
    expect(p.queueLength).toBe(1);
    r1!.eject("ECONNREFUSED");
    expect(await pinned).toEqual({ ok: false, reason: "not_ready" });
    expect(r0!.ready).toBe(true);
  });

  it("places a request the moment a replica's scraped load goes stale, with no polling", async () => {
    const { p, clock } = pool({ maxConcurrency: 4, routing: { maxWaitingRequests: 1, queueTimeoutMs: 60_000 } });
    await clock.advance(1000);
    p.replicas[0]!.recordLoad(5, 0);
    let placedAt: number | undefined;
    void ask(p, key("a")).then(() => (placedAt = clock.now()));
    await clock.advance(LOAD_STALE_MS - 1);
    expect(placedAt).toBeUndefined();
    await clock.advance(1);
    expect(placedAt).toBe(1000 + LOAD_STALE_MS);
  });

  it("a request that refused to park (no memory to wait) is saturated and waits for nothing", async () => {
    const { p } = pool({ routing: { queueTimeoutMs: 10_000 } });
    await slot(ask(p, key("a")));
    expect(await ask(p, key("a"), { park: () => false })).toEqual({ ok: false, reason: "saturated" });
    expect(p.queueLength).toBe(0);
  });
});

describe("model scheduler: eligibility", () => {
  const lora = { maxLoras: 1, adapters: [{ id: "m-a", path: "/a", loading: "on-demand" as const }, { id: "m-b", path: "/b", loading: "on-demand" as const }] };

  it("a request for an adapter with no room does not hold back a base-model request (1 of 8 slots in use)", async () => {
    const { p } = pool({ maxConcurrency: 8, lora, routing: { queueTimeoutMs: 1500 } });
    p.adapters!.connect({ load: async () => undefined, unload: async () => undefined, listed: async () => [] }, { loaded() {}, loadFailed() {}, evicted() {} });
    const a = await slot(ask(p, key("k"), { ctx: { adapter: "m-a" } }));
    await a.claim!.ready();
    const bs = [1, 2, 3].map(() => ask(p, key("k"), { ctx: { adapter: "m-b" } }));
    expect(p.queueLength).toBe(3);
    const base = await ask(p, key("k"));
    expect(base.ok).toBe(true);
    // Once m-a is given back, m-b takes its place and all three run.
    a.release();
    const placed = await Promise.all(bs.map(slot));
    expect(placed.map((s) => s.claim!.name)).toEqual(["m-b", "m-b", "m-b"]);
  });
});

describe("model scheduler: fairness across keys", () => {
  it("a key that just arrived gets the next slot ahead of a key already holding the model", async () => {
    const { p } = pool({ maxConcurrency: 4, routing: { queueTimeoutMs: 60_000, maxQueueLength: 64 } });
    const flood = key("flood");
    const slots = await Promise.all([1, 2, 3, 4].map(() => slot(ask(p, flood))));
    const { order, track } = recorder();
    for (let i = 0; i < 10; i++) void track(`flood${i}`, ask(p, flood));
    const quiet = track("quiet", ask(p, key("quiet")));
    slots[0]!.release();
    await quiet;
    expect(order).toEqual(["quiet"]);
  });

  it("slots follow the keys' weights while both wait (2:1)", async () => {
    const { p } = pool({ maxConcurrency: 6, routing: { queueTimeoutMs: 60_000, maxQueueLength: 64 } });
    const heavy = key("heavy", "interactive", 2);
    const light = key("light");
    const live: { name: string; release(): void }[] = [];
    const keep = (name: string, pending: Promise<AcquireResult>) =>
      pending.then((r) => {
        if (r.ok) live.push({ name, release: () => r.slot.release() });
      });
    // Both keep 20 requests waiting; slots turn over one at a time, oldest first.
    for (let i = 0; i < 20; i++) {
      void keep("heavy", ask(p, heavy));
      void keep("light", ask(p, light));
    }
    await flush();
    for (let turn = 0; turn < 18; turn++) {
      live.shift()!.release();
      await flush();
    }
    expect(p.scheduler.slotsOf("heavy")).toBe(4);
    expect(p.scheduler.slotsOf("light")).toBe(2);
  });

  it("a full queue makes room by refusing the newest request of the key waiting with the most", async () => {
    const { p } = pool({ routing: { queueTimeoutMs: 60_000, maxQueueLength: 4 } });
    await slot(ask(p, key("a")));
    const floods = [1, 2, 3, 4].map(() => ask(p, key("a")));
    void ask(p, key("b"));
    expect(await floods[3]).toEqual({ ok: false, reason: "saturated" });
    // a: 3 waiting, more than b would have with one more (2): a's newest goes again.
    void ask(p, key("b"));
    expect(await floods[2]).toEqual({ ok: false, reason: "saturated" });
    // a: 2, b: 2; one more b would be 3, more than a has: the arrival is refused itself.
    expect(await ask(p, key("b"))).toEqual({ ok: false, reason: "saturated" });
    expect(p.queueLength).toBe(4);
  });
});

describe("model scheduler: priorities", () => {
  it("batch requests wait behind interactive ones, and go when interactive traffic leaves room", async () => {
    const { p } = pool({ routing: { queueTimeoutMs: 60_000 } });
    const first = await slot(ask(p, key("i")));
    const { order, track } = recorder();
    const batch = track("batch", ask(p, key("b", "batch")));
    const interactive = track("interactive", ask(p, key("i2")));
    first.release();
    (await slot(interactive)).release();
    (await slot(batch)).release();
    expect(order).toEqual(["interactive", "batch"]);
  });

  it("under a full queue, batch is refused first: an interactive arrival pushes out the newest batch request", async () => {
    const { p } = pool({ routing: { queueTimeoutMs: 60_000, maxQueueLength: 2 } });
    await slot(ask(p, key("i")));
    const b1 = ask(p, key("b", "batch"));
    const b2 = ask(p, key("b", "batch"));
    const i1 = ask(p, key("i"));
    expect(await b2).toEqual({ ok: false, reason: "saturated" });
    // A batch arrival never pushes out interactive requests.
    const i2 = ask(p, key("i"));
    expect(await b1).toEqual({ ok: false, reason: "saturated" });
    expect(await ask(p, key("b", "batch"))).toEqual({ ok: false, reason: "saturated" });
    void i1;
    void i2;
    expect(p.queueLength).toBe(2);
  });
});

describe("model scheduler: waking from zero", () => {
  const wake = { timeoutMs: 10_000, maxHeld: 2 };

  it("holds requests while no replica is ready and releases them as the first one has room", async () => {
    const { p, clock } = pool({ wake, routing: { queueTimeoutMs: 10_000 } });
    const outcomes: string[] = [];
    const woke: number[] = [];
    p.scheduler.listen({ outcome: (o) => outcomes.push(o), woke: (s) => woke.push(s) });
    const hooks = { started: jest.fn(), ended: jest.fn() };
    const held = ["a", "b"].map(() => ask(p, key("k"), { hold: hooks }));
    expect(p.heldLength).toBe(2);
    expect(hooks.started).toHaveBeenCalledTimes(2);
    // Without hooks (a retry, a pinned follow-up) nothing is held: not_ready at once; over maxHeld: saturated.
    expect(await ask(p, key("k"))).toEqual({ ok: false, reason: "not_ready" });
    expect(await ask(p, key("k"), { hold: hooks })).toEqual({ ok: false, reason: "saturated" });
    await clock.advance(3000);
    p.replicas[0]!.markHealthy();
    const first = await slot(held[0]!);
    expect(p.heldLength).toBe(1);
    first.release();
    (await slot(held[1]!)).release();
    expect(woke).toEqual([3]);
    expect(outcomes).toEqual(["saturated", "released", "released"]);
    expect(hooks.ended).toHaveBeenCalledTimes(2);
  });

  it("past its deadline a held request is not_ready with no replica, saturated with one up but full; shutdown ends the rest", async () => {
    const { p, clock } = pool({ wake: { timeoutMs: 30, maxHeld: 4 } });
    const outcomes: string[] = [];
    p.scheduler.listen({ outcome: (o) => outcomes.push(o), woke: () => undefined });
    const alone = ask(p, key("k"), { hold: {} });
    await clock.advance(30);
    expect(await alone).toEqual({ ok: false, reason: "not_ready" });
    p.replicas[0]!.markHealthy();
    const running = await slot(ask(p, key("k"), { hold: {} }));
    p.replicas[0]!.eject("ECONNREFUSED");
    const late = ask(p, key("k"), { hold: {} });
    p.replicas[0]!.markHealthy(); // back, but its one slot is taken
    await clock.advance(30);
    expect(await late).toEqual({ ok: false, reason: "saturated" });
    p.replicas[0]!.eject("ECONNREFUSED");
    const pending = ask(p, key("k"), { hold: {} });
    p.scheduler.close();
    expect(await pending).toEqual({ ok: false, reason: "not_ready" });
    expect(await ask(p, key("k"), { hold: {} })).toEqual({ ok: false, reason: "not_ready" });
    expect(outcomes).toEqual(["timed_out", "saturated", "shutdown", "shutdown"]);
    running.release();
  });

  it("pool mode: a woken pool takes as many as its ready pods' concurrency allows, the rest as they finish", async () => {
    const { p } = pool({
      maxConcurrency: 2,
      wake,
      routing: { queueTimeoutMs: 10_000 },
      upstream: { mode: "pool", url: "http://pool:8000", readiness: { host: "pool-ready.example", port: 8000 } },
    });
    p.setBackends(0);
    const held = [1, 2].map(() => ask(p, key("k"), { hold: {} }));
    const more = [3, 4].map(() => ask(p, key("k")));
    expect((await Promise.all(more)).map((r) => r.ok)).toEqual([false, false]);
    p.setBackends(1);
    const first = await slot(held[0]!);
    const second = await slot(held[1]!);
    expect(p.replicas[0]!.inFlight).toBe(2);
    const third = ask(p, key("k"));
    expect(p.queueLength).toBe(1);
    p.setBackends(2);
    (await slot(third)).release();
    first.release();
    second.release();
  });
});
