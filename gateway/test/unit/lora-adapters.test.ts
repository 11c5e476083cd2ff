// Which replica a request for a LoRA adapter goes to, and what each replica is taken to hold. Loads over HTTP are in
// the integration tests (gateway/test/integration/lora.test.ts), against real simulators.
import { parseCatalog } from "../../src/config/load-catalog";
import type { AdapterServer } from "../../src/upstream/lora/adapter-client";
import { ReplicaAdapters } from "../../src/upstream/lora/replica-adapters";
import { ModelPool } from "../../src/upstream/model-pool";
import type { Replica } from "../../src/upstream/replica";
import type { ReplicaSlot } from "../../src/upstream/replica-slot";
import { ANONYMOUS } from "../../src/upstream/scheduler/tenant";
import { VirtualClock } from "../sim/virtual-clock";

const lora = { maxLoras: 2, adapters: [{ id: "pre", path: "/a/pre", loading: "preload" }, ...["x", "y", "z"].map((id) => ({ id, path: `/a/${id}`, loading: "on-demand" }))] };

function pool(routing: object = {}, replicas = 3, clock = new VirtualClock()): ModelPool {
  const endpoints = Array.from({ length: replicas }, (_, i) => ({ url: `http://r${i}:8000` }));
  const p = new ModelPool(parseCatalog({ models: [{ id: "base", category: "generative", maxConcurrency: 8, routing, lora, upstream: { mode: "endpoints", endpoints } }] }).models[0]!, clock);
  for (const r of p.replicas) r.markHealthy();
  return p;
}

/** Marks `name` loaded on the replica, as a listing of the replica would. */
const hold = (r: Replica, name: string) => r.adapters!.held.set(name, { preload: false, inFlight: 0, lastUsed: 1, since: 0 });

async function take(p: ModelPool, adapter: string): Promise<ReplicaSlot> {
  const got = await p.acquire({ tenant: ANONYMOUS, ctx: { adapter } });
  if (!got.ok) throw new Error(got.reason);
  return got.slot;
}

const pick = async (p: ModelPool, adapter: string): Promise<Replica> => (await take(p, adapter)).replica;

/** Adapter routes that answer at once; `unloads` and `loads` record the calls. */
function instantServer() {
  const calls: string[] = [];
  const server: AdapterServer = {
    load: async (_url, name) => void calls.push(`load ${name}`),
    unload: async (_url, name) => void calls.push(`unload ${name}`),
    listed: async () => [],
  };
  return { calls, server };
}
const events = { loaded: () => undefined, loadFailed: () => undefined, evicted: () => undefined };

describe("what a replica holds", () => {
  it("starts with the preloaded adapters; room: held, a free slot, an idle adapter to evict, or full", () => {
    const a = new ReplicaAdapters(2, ["pre"], 0);
    expect([a.room("pre"), a.room("x")]).toEqual(["held", "free"]);
    a.held.set("x", { preload: false, inFlight: 1, lastUsed: 5, since: 0 });
    expect(a.room("y")).toBe("full");
    a.held.get("x")!.inFlight = 0;
    expect([a.room("y"), a.victim()]).toEqual(["evict", "x"]);
  });

  it("evicts the least recently used idle adapter loaded on demand, never a preloaded, loading or busy one", () => {
    const a = new ReplicaAdapters(4, ["pre"], 0);
    a.held.set("old", { preload: false, inFlight: 0, lastUsed: 10, since: 0 });
    a.held.set("older-busy", { preload: false, inFlight: 2, lastUsed: 1, since: 0 });
    a.held.set("loading", { preload: false, inFlight: 0, lastUsed: 0, since: 0, loading: new Promise(() => undefined) });
    expect(a.victim()).toBe("old");
    a.held.get("old")!.inFlight = 1;
    expect(a.victim()).toBeUndefined();
  });

  it("unloads the idle adapter asked for least lately first, whatever its recency: a popular one stays", () => {
    const demand: Record<string, number> = { popular: 9, rare: 1 };
    const a = new ReplicaAdapters(2, [], 0, (name) => demand[name] ?? 0);
    a.held.set("popular", { preload: false, inFlight: 0, lastUsed: 1, since: 0 });
    a.held.set("rare", { preload: false, inFlight: 0, lastUsed: 5, since: 0 });
    expect([a.victim(), a.victimDemand()]).toEqual(["rare", 1]);
  });

  it("takes the replica's listing as the truth, except loads and unloads it may predate", () => {
    const a = new ReplicaAdapters(4, ["pre"], 0);
    a.held.set("gone", { preload: false, inFlight: 0, lastUsed: 0, since: 50 });
    a.held.set("just-loaded", { preload: false, inFlight: 0, lastUsed: 0, since: 150 });
    a.held.set("loading", { preload: false, inFlight: 1, lastUsed: 0, since: 50, loading: new Promise(() => undefined) });
    a.unloading.add("being-unloaded");
    a.reconcile(["pre", "other-pod", "being-unloaded"], new Set(["pre"]), 100, 200);
    expect([...a.held.keys()].sort()).toEqual(["just-loaded", "loading", "other-pod", "pre"]);
    expect(a.held.get("other-pod")).toMatchObject({ preload: false, inFlight: 0, lastUsed: 0 });
  });

  it("a listing asked for before an unload (or a 404) of this pod, and answered after it, does not bring the adapter back", () => {
    const a = new ReplicaAdapters(4, [], 0);
    a.held.set("x", { preload: false, inFlight: 0, lastUsed: 0, since: 10 });
    // Asked at 100; the unload of x ends at 150 (unloading cleared, change noted); the answer, still listing x, at 200.
    a.held.delete("x");
    a.changed("x", 150);
    expect(a.reconcile(["x"], new Set(), 100, 200)).toBe(false);
    expect(a.held.has("x")).toBe(false);
    // Listings answer out of order: one asked for before the last applied one is older news.
    a.reconcile([], new Set(), 300, 310);
    expect(a.reconcile(["y"], new Set(), 250, 320)).toBe(false);
    expect(a.held.has("y")).toBe(false);
    // A listing asked for after the change is the truth again.
    expect(a.reconcile(["x"], new Set(), 400, 410)).toBe(true);
    expect(a.held.has("x")).toBe(true);
  });
});

describe("routing a request for an adapter", () => {
  it("goes to the replica holding it while that is at most T = ⌈affinityLoadTolerance × cap⌉ busier", async () => {
    const p = pool({ affinityLoadTolerance: 0.5 });
    const [r0, r1] = p.replicas;
    hold(r1!, "x");
    r1!.inFlight = 4; // T = 4
    expect((await pick(p, "x")).url).toBe(r1!.url);
    r1!.inFlight = 6; // 5 more than r0 (the pick above counted one): past T, another replica loads it
    expect((await pick(p, "x")).url).not.toBe(r1!.url);
    expect(r0!.inFlight + p.replicas[2]!.inFlight).toBe(1);
  });

  it("claims it on the replica picked: requests meanwhile join the same load; a failed load leaves nothing behind", async () => {
    const p = pool();
    const loads: { name: string; fail(err: Error): void }[] = [];
    // Only the order of events matters here; real loads against simulators are in the integration tests.
    const client: AdapterServer = { load: (_url, name) => new Promise<void>((_, fail) => loads.push({ name, fail })), unload: () => Promise.resolve(), listed: async () => [] };
    p.adapters!.connect(client, events);
    const first = await take(p, "y");
    const second = await take(p, "y");
    expect(second.replica).toBe(first.replica);
    expect(loads.map((l) => l.name)).toEqual(["y"]);
    expect(first.replica.adapters!.held.get("y")).toMatchObject({ inFlight: 2 });
    loads[0]!.fail(new Error("load answered 404"));
    await expect(first.claim!.ready()).rejects.toThrow();
    expect(first.replica.adapters!.held.has("y")).toBe(false);
    first.release();
    second.release();
  });

  it("never sends one to a replica whose slots all hold adapters in use; with none left it is saturated", async () => {
    const p = pool({ queueTimeoutMs: 0 }, 1);
    const [r] = p.replicas;
    hold(r!, "x");
    r!.adapters!.held.get("x")!.inFlight = 1; // pre + x: full, nothing idle to evict
    expect(await p.acquire({ tenant: ANONYMOUS, ctx: { adapter: "y" } })).toEqual({ ok: false, reason: "saturated" });
    expect((await pick(p, "x")).url).toBe(r!.url);
  });

  it("with adapterAffinity off, the strategy alone picks (least loaded), wherever the adapter is", async () => {
    const p = pool({ adapterAffinity: false });
    const [, r1, r2] = p.replicas;
    hold(r1!, "x");
    r1!.inFlight = 1;
    r2!.inFlight = 1;
    expect((await pick(p, "x")).url).toBe(p.replicas[0]!.url);
  });
});

describe("adapters where the gateway thinks they are", () => {
  it("a replica that turns unready, whatever way (here: a refused connection), keeps only its preloaded adapters", async () => {
    const p = pool({}, 1);
    const { server } = instantServer();
    p.adapters!.connect(server, events);
    const s = await take(p, "x");
    await s.claim!.ready();
    s.release();
    const r = p.replicas[0]!;
    expect([...r.adapters!.held.keys()].sort()).toEqual(["pre", "x"]);
    r.eject("ECONNREFUSED");
    expect([...r.adapters!.held.keys()]).toEqual(["pre"]);
  });

  it("claims are per request: a release after the replica's state was reset never touches a newer request's claim", async () => {
    const p = pool({}, 1);
    const { server } = instantServer();
    p.adapters!.connect(server, events);
    const old = await take(p, "x");
    await old.claim!.ready();
    const r = p.replicas[0]!;
    r.eject("ECONNRESET");
    r.markHealthy();
    const fresh = await take(p, "x");
    await fresh.claim!.ready();
    expect(old.claim!.current).toBe(false);
    old.release();
    old.release();
    expect(r.adapters!.held.get("x")).toMatchObject({ inFlight: 1 });
    // With its claim intact, x is not idle: nothing can evict it for y and z (maxLoras 2: pre + x).
    expect(r.adapters!.room("y")).toBe("full");
    fresh.release();
    expect(r.adapters!.room("y")).toBe("evict");
  });

  it("a 404 for a held adapter forgets it on that replica only, and the next claim loads it again", async () => {
    const p = pool({}, 2);
    const { calls, server } = instantServer();
    p.adapters!.connect(server, events);
    const [r0, r1] = p.replicas;
    hold(r0!, "x");
    hold(r1!, "x");
    const s = await take(p, "x");
    s.claim!.notLoaded();
    s.release();
    expect(s.replica.adapters!.held.has("x")).toBe(false);
    expect((s.replica === r0 ? r1 : r0)!.adapters!.held.has("x")).toBe(true);
    expect(calls).toEqual([]);
    // Both replicas are idle: affinity sends the next one to the holder; make the holder busy to force a load.
    (s.replica === r0 ? r1 : r0)!.inFlight = 8;
    const again = await take(p, "x");
    await again.claim!.ready();
    expect(again.replica).toBe(s.replica);
    expect(calls).toEqual(["load x"]);
    again.release();
  });
});
