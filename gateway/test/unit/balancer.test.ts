import { parseCatalog } from "../../src/config/load-catalog";
import { LeastLoaded, PrefixAffinity, RoundRobin } from "../../src/upstream/balancer";
import { readGauge } from "../../src/upstream/load-scraper";
import { WakeQueue } from "../../src/upstream/wake-queue";
import { ModelPool } from "../../src/upstream/model-pool";
import { prefixHashes, promptText } from "../../src/upstream/prefix-index";
import { Replica } from "../../src/upstream/replica";

function replicas(n: number, cap = 8): Replica[] {
  return Array.from({ length: n }, (_, i) => {
    const r = new Replica("m", `http://r${i}`, cap);
    r.markHealthy();
    return r;
  });
}

function pool(routing: Record<string, unknown> = {}, n = 3, cap = 2): ModelPool {
  const model = parseCatalog({
    models: [
      {
        id: "m",
        category: "generative",
        maxConcurrency: cap,
        routing,
        upstream: { mode: "endpoints", endpoints: Array.from({ length: n }, (_, i) => ({ url: `http://r${i}:8000` })) },
      },
    ],
  }).models[0]!;
  const p = new ModelPool(model);
  p.replicas.forEach((r) => r.markHealthy());
  return p;
}

const longPrompt = (topic: string, question: string) =>
  promptText({ messages: [{ role: "system", content: `${topic} `.repeat(200) }, { role: "user", content: question }] });

describe("strategies", () => {
  it("round-robin cycles through candidates", () => {
    const rs = replicas(3);
    const rr = new RoundRobin();
    expect([0, 1, 2, 3].map(() => rr.pick(rs).url)).toEqual(["http://r0", "http://r1", "http://r2", "http://r0"]);
  });

  it("least-loaded counts the model server's queue as well as the gateway's in-flight requests", () => {
    const [a, b, c] = replicas(3);
    a!.inFlight = 1;
    b!.inFlight = 0;
    b!.recordLoad(5, 0.1, 2); // idle here, but 7 requests run or wait inside that server (other gateway replicas)
    c!.inFlight = 2;
    expect(new LeastLoaded().pick([a!, b!, c!]).url).toBe("http://r0");
  });

  it("prefix-affinity sends every question about one document to the same replica; a document not seen yet goes to its home only while that is as free as any", () => {
    const rs = replicas(4);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const ask = (doc: string, q: string) => {
      const ctx = { prefix: prefixHashes(longPrompt(doc, q)) };
      const r = s.pick(rs, ctx, rs);
      s.chosen(r, ctx);
      return r;
    };
    const home = ask("contract", "clause 1?");
    for (const q of ["clause 2?", "clause 3?", "clause 4?"]) expect(ask("contract", q).url).toBe(home.url);
    // A new document whose home (on idle replicas) is the same replica:
    const probe = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const idle = replicas(4);
    const sameHome = Array.from({ length: 50 }, (_, i) => `invoice${i}`).find((d) => probe.pick(idle, { prefix: prefixHashes(longPrompt(d, "q")) }, idle).url === home.url)!;
    home.inFlight = 1;
    expect(ask(sameHome, "total?").url).not.toBe(home.url); // one more than the least loaded: not worth it for a stranger
    expect(ask("contract", "clause 5?").url).toBe(home.url); // a known document: T = ceil(0.5 x 8) = 4
  });

  it("prefix-affinity gives up the home when it is more than T requests busier than the least-loaded one", () => {
    const rs = replicas(2, 8);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.25 });
    const ctx = { prefix: prefixHashes(longPrompt("manual", "q")) };
    const home = s.pick(rs, ctx, rs);
    s.chosen(home, ctx);
    const other = rs.find((r) => r !== home)!;
    home.inFlight = 2; // T = ceil(0.25 x 8) = 2 more than the least loaded
    expect(s.pick(rs, ctx, rs).url).toBe(home.url);
    home.inFlight = 3;
    expect(s.pick(rs, ctx, rs).url).toBe(other.url);
  });

  it("short prompts are not pinned (below minPrefixBlocks)", () => {
    expect(prefixHashes("short prompt")).toHaveLength(0);
    expect(prefixHashes("x".repeat(128 * 5))).toHaveLength(5);
  });
});

describe("model pool", () => {
  it("treats a replica over its queue or KV-cache threshold as saturated", async () => {
    const p = pool({ maxWaitingRequests: 2, maxKvCacheUsage: 0.9, queueTimeoutMs: 0 }, 2, 10);
    const [a, b] = p.replicas;
    a!.recordLoad(3, 0.2);
    b!.recordLoad(0, 0.95);
    expect(a!.saturated && b!.saturated).toBe(true);
    expect(await p.acquire()).toEqual({ ok: false, reason: "saturated" });
    b!.recordLoad(0, 0.5);
    const got = await p.acquire();
    expect(got.ok && got.replica.url).toBe("http://r1:8000");
  });

  it("queues requests FIFO when saturated and serves them as slots free", async () => {
    const p = pool({ queueTimeoutMs: 5000, maxQueueLength: 5 }, 1, 1);
    const first = await p.acquire();
    expect(first.ok).toBe(true);
    const order: number[] = [];
    const waiting = [1, 2, 3].map((i) => p.acquire().then((r) => (order.push(i), r)));
    expect(p.queueLength).toBe(3);
    for (let i = 0; i < 3; i++) {
      p.release(p.replicas[0]!);
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
  });

  it("answers saturated when the wait queue is full or the wait times out", async () => {
    const p = pool({ queueTimeoutMs: 50, maxQueueLength: 1 }, 1, 1);
    await p.acquire();
    const waiter = p.acquire();
    expect(await p.acquire()).toEqual({ ok: false, reason: "saturated" }); // queue full
    expect(await waiter).toEqual({ ok: false, reason: "saturated" }); // timed out
    expect(p.queueLength).toBe(0);
  });

  it("abandons the wait when the client goes away", async () => {
    const p = pool({ queueTimeoutMs: 10_000 }, 1, 1);
    await p.acquire();
    const ac = new AbortController();
    const waiter = p.acquire({}, undefined, ac.signal);
    ac.abort();
    expect(await waiter).toEqual({ ok: false, reason: "saturated" });
    expect(p.queueLength).toBe(0);
  });

  it("answers not_ready at once when no replica is ready, without queueing", async () => {
    const p = pool({ queueTimeoutMs: 10_000 }, 2, 1);
    p.replicas.forEach((r) => r.eject("ECONNREFUSED"));
    expect(await p.acquire()).toEqual({ ok: false, reason: "not_ready" });
  });

  it("wake: held requests go first once a replica is ready, ahead of later arrivals, as it has room", async () => {
    const model = parseCatalog({
      models: [{ id: "w", category: "generative", maxConcurrency: 1, routing: { queueTimeoutMs: 10_000 }, upstream: { mode: "endpoints", endpoints: [{ url: "http://r0:8000" }] }, wake: { timeoutMs: 10_000, maxHeld: 2 } }],
    }).models[0]!;
    const p = new ModelPool(model);
    const hooks = { started: jest.fn(), ended: jest.fn() };
    const order: string[] = [];
    const held = ["a", "b"].map((name) => p.acquire({}, undefined, undefined, hooks).then((r) => (order.push(name), r)));
    expect(p.heldLength).toBe(2);
    expect(hooks.started).toHaveBeenCalledTimes(2);
    // Without hooks (a retry, a pinned follow-up) nothing is held: not_ready at once.
    expect(await p.acquire()).toEqual({ ok: false, reason: "not_ready" });
    expect(await p.acquire({}, undefined, undefined, hooks)).toEqual({ ok: false, reason: "saturated" }); // maxHeld

    p.replicas[0]!.markHealthy();
    // An arrival now queues behind the held ones rather than taking the replica.
    const late = p.acquire({}, undefined, undefined, hooks).then((r) => (order.push("late"), r));
    p.drain();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(["a"]);
    for (let i = 0; i < 2; i++) {
      p.release(p.replicas[0]!);
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all([...held, late]);
    expect(order).toEqual(["a", "b", "late"]);
    expect(hooks.ended).toHaveBeenCalledTimes(2);
  });

  it("wake: past its deadline a held request is not_ready with no replica, saturated with one up but full", async () => {
    const model = parseCatalog({
      models: [{ id: "w", category: "generative", maxConcurrency: 1, upstream: { mode: "endpoints", endpoints: [{ url: "http://r0:8000" }] }, wake: { timeoutMs: 30, maxHeld: 4 } }],
    }).models[0]!;
    const p = new ModelPool(model);
    expect(await p.acquire({}, undefined, undefined, {})).toEqual({ ok: false, reason: "not_ready" });
    p.replicas[0]!.markHealthy();
    expect((await p.acquire({}, undefined, undefined, {})).ok).toBe(true);
    p.replicas[0]!.eject("ECONNREFUSED");
    const waiting = p.acquire({}, undefined, undefined, {});
    p.replicas[0]!.markHealthy(); // back, but its one slot is taken
    expect(await waiting).toEqual({ ok: false, reason: "saturated" });
    expect(p.heldLength).toBe(0);
  });

  it("wake queue: each way out is its own outcome, and a wake nobody waits for any more is forgotten", async () => {
    let ready = false;
    const outcomes: string[] = [];
    const woke: number[] = [];
    const q = new WakeQueue({ timeoutMs: 20, maxHeld: 4 }, () => ready);
    q.listen({ outcome: (o) => outcomes.push(o), woke: (s) => woke.push(s) });
    // No replica by the deadline: the wake failed.
    expect(await q.hold({}, undefined, undefined)).toBe("timed_out");
    // Everyone left with no replica up: no wake is under way, so a replica appearing later records none.
    expect(q.waking).toBe(false);
    // A replica up but full by the deadline: load, not a failed wake.
    const late = q.hold({}, undefined, undefined);
    ready = true;
    expect(await late).toBe("saturated");
    // Shutting down: what is held, and what comes after, ends as shutdown.
    ready = false;
    const pending = q.hold({}, undefined, undefined);
    q.close();
    expect(await pending).toBe("shutdown");
    expect(await q.hold({}, undefined, undefined)).toBe("shutdown");
    expect(outcomes).toEqual(["timed_out", "saturated", "shutdown", "shutdown"]);
    expect(woke).toEqual([]);
  });

  it("ignores stale scraped load", () => {
    const [r] = replicas(1, 4);
    r!.maxWaiting = 1;
    r!.recordLoad(10, 0);
    expect(r!.saturated).toBe(true);
    r!.inFlight = 1;
    expect(r!.load).toBe(11); // ours now, plus the 10 that were not ours at the scrape
    r!.loadScrapedAt = Date.now() - 60_000;
    expect(r!.saturated).toBe(false);
    expect(r!.load).toBe(1);
  });
});

describe("load scraping", () => {
  it("reads vLLM gauges, summing label sets and ignoring longer names", () => {
    const text = [
      "# HELP vllm:num_requests_waiting Number of requests waiting.",
      "# TYPE vllm:num_requests_waiting gauge",
      'vllm:num_requests_waiting{model_name="a"} 3',
      'vllm:num_requests_waiting{model_name="b"} 2',
      "vllm:num_requests_waiting_by_reason 99",
      'vllm:kv_cache_usage_perc{model_name="a"} 0.42',
    ].join("\n");
    expect(readGauge(text, "vllm:num_requests_waiting")).toBe(5);
    expect(readGauge(text, "vllm:kv_cache_usage_perc")).toBeCloseTo(0.42);
    expect(readGauge(text, "vllm:num_requests_running")).toBeUndefined();
  });
});
