// Which replica a request for a LoRA adapter goes to, and what each replica is taken to hold. Loads over HTTP are in
// the integration tests (gateway/test/integration/lora.test.ts), against real simulators.
import { parseCatalog } from "../../src/config/load-catalog";
import type { AdapterClient } from "../../src/upstream/lora/adapter-client";
import { ReplicaAdapters } from "../../src/upstream/lora/replica-adapters";
import { ModelPool } from "../../src/upstream/model-pool";
import type { Replica } from "../../src/upstream/replica";

const lora = { maxLoras: 2, adapters: [{ id: "pre", path: "/a/pre", loading: "preload" }, ...["x", "y", "z"].map((id) => ({ id, path: `/a/${id}`, loading: "on-demand" }))] };

function pool(routing: object = {}, replicas = 3): ModelPool {
  const endpoints = Array.from({ length: replicas }, (_, i) => ({ url: `http://r${i}:8000` }));
  const p = new ModelPool(parseCatalog({ models: [{ id: "base", category: "generative", maxConcurrency: 8, routing, lora, upstream: { mode: "endpoints", endpoints } }] }).models[0]!);
  for (const r of p.replicas) r.markHealthy();
  return p;
}

/** Marks `name` loaded on the replica, as a listing of the replica would. */
const hold = (r: Replica, name: string) => r.adapters!.held.set(name, { preload: false, inFlight: 0, lastUsed: 1, since: 0 });

async function pick(p: ModelPool, adapter: string): Promise<Replica> {
  const got = await p.acquire({ adapter });
  if (!got.ok) throw new Error(got.reason);
  return got.replica;
}

describe("what a replica holds", () => {
  it("starts with the preloaded adapters; room: held, a free slot, an idle adapter to evict, or full", () => {
    const a = new ReplicaAdapters(2, ["pre"]);
    expect([a.room("pre"), a.room("x")]).toEqual(["held", "free"]);
    a.held.set("x", { preload: false, inFlight: 1, lastUsed: 5, since: 0 });
    expect(a.room("y")).toBe("full");
    a.held.get("x")!.inFlight = 0;
    expect([a.room("y"), a.victim()]).toEqual(["evict", "x"]);
  });

  it("evicts the least recently used idle adapter loaded on demand, never a preloaded, loading or busy one", () => {
    const a = new ReplicaAdapters(4, ["pre"]);
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
    const client = { load: (_url: string, name: string) => new Promise<void>((_, fail) => loads.push({ name, fail })), unload: () => Promise.resolve() };
    p.adapters!.connect(client as unknown as AdapterClient, { loaded: () => undefined, loadFailed: () => undefined, evicted: () => undefined });
    const first = await pick(p, "y");
    const second = await pick(p, "y");
    expect(second).toBe(first);
    expect(loads.map((l) => l.name)).toEqual(["y"]);
    expect(first.adapters!.held.get("y")).toMatchObject({ inFlight: 2 });
    loads[0]!.fail(new Error("load answered 404"));
    await expect(p.adapters!.ready(first, "y")).rejects.toThrow();
    expect(first.adapters!.held.has("y")).toBe(false);
    p.release(first, "y");
    p.release(second, "y");
  });

  it("never sends one to a replica whose slots all hold adapters in use; with none left it is saturated", async () => {
    const p = pool({ queueTimeoutMs: 0 }, 1);
    const [r] = p.replicas;
    hold(r!, "x");
    r!.adapters!.held.get("x")!.inFlight = 1; // pre + x: full, nothing idle to evict
    expect(await p.acquire({ adapter: "y" })).toEqual({ ok: false, reason: "saturated" });
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
