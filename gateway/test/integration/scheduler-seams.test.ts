// How the gateway waits for replicas, at the seams between its queues: the saturation queue, the wake queue, LoRA
// adapter placement, request-body memory, and what it believes a replica holds. Each test reproduces, over HTTP
// against real simulators on loopback, a case where one waiting request (or the gateway's view of a replica) wrongly
// holds back others, and asserts the behaviour the model pool should have.
import { getServers, setServers } from "node:dns";
import { startSimulator, type RunningSimulator, type SimulatorConfigInput } from "../../../simulator/src";
import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import type { CatalogInput } from "../../src/config/catalog";
import { startDnsServer, type LoopbackDns } from "../support/dns-server";
import { reservedPorts } from "../support/reserved-ports";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

const MiB = 1024 * 1024;

/** 30 ms a token: `max_tokens: 100` with ignore_eos runs for about 3 s, `max_tokens: 1` answers at once. */
const SLOW_TOKENS = { timeToFirstTokenMs: 1, interTokenLatencyMs: 30, prefillTimePerTokenMs: 0 };
const LONG = { max_tokens: 100, ignore_eos: true };
const SHORT = { max_tokens: 1 };

type ErrorBody = { error?: { code?: string; message?: string } };
interface Answer {
  status: number;
  /** From sending to the whole answer read, ms. */
  ms: number;
  /** When the answer was complete (performance.now()). */
  at: number;
  body: ErrorBody;
}

/** A chat completion through the gateway, timed; the body parsed when it is JSON. */
async function ask(h: Harness, model: string, extra: Record<string, unknown> = {}, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  const res = await h.fetch("/v1/chat/completions", { json: chatBody(model, extra), ...init });
  const text = await res.text();
  const at = performance.now();
  let body: ErrorBody = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not JSON (should not happen for a non-streaming request).
  }
  return { status: res.status, ms: at - started, at, body };
}

/** What a failed assertion should show about an answer. */
const summary = (a: Answer) => ({ status: a.status, ms: Math.round(a.ms), code: a.body.error?.code, message: a.body.error?.message });

/** Requests the gateway holds for a model to wake (its public gauge). */
async function heldNow(h: Harness, model: string): Promise<number> {
  const text = await (await fetch(h.gateway.metricsUrl)).text();
  const m = text.match(new RegExp(`^gateway_model_held_requests\\{model="${model}"\\} (\\d+)`, "m"));
  return m ? Number(m[1]) : 0;
}

/** Requests the gateway is serving now for a model or adapter, waiting ones included (its public gauge). */
async function inFlightNow(h: Harness, model: string): Promise<number> {
  const text = await (await fetch(h.gateway.metricsUrl)).text();
  const m = text.match(new RegExp(`^gateway_requests_in_flight\\{model="${model}"\\} (\\d+)`, "m"));
  return m ? Number(m[1]) : 0;
}

/** The highest `running` a simulator reports while `during` runs (sampled every 5 ms). */
async function peakRunning<T>(sim: RunningSimulator, during: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = sim.stats().running;
  const sampler = setInterval(() => (peak = Math.max(peak, sim.stats().running)), 5);
  try {
    const result = await during();
    return { result, peak: Math.max(peak, sim.stats().running) };
  } finally {
    clearInterval(sampler);
  }
}

/** A replica's simulator as the harness starts one for a model with on-demand adapters (maxLoras 1, instant loads). */
function loraSim(model: string, extra: Partial<SimulatorConfigInput> = {}): Promise<RunningSimulator> {
  return startSimulator({
    models: [model],
    kind: "generate",
    latency: SLOW_TOKENS,
    lora: { enabled: true, runtimeUpdating: true, maxLoras: 1, loadTimeMs: 0, swapInTimeMs: 0, modules: [] },
    ...extra,
  });
}

const ports = reservedPorts();
const reservePort = ports.reserve;
const takePort = ports.take;
afterAll(() => ports.releaseAll());

describe("a request for an adapter that cannot be placed yet", () => {
  // One replica with one adapter slot: while m-a runs, m-b has no room (m-a is in use, so it cannot be evicted).
  // The replica still has 7 of its 8 slots free for the base model, which needs no adapter slot at all.
  it("does not block the base model in the saturation queue", async () => {
    const h = await startHarness([
      { id: "m", maxConcurrency: 8, routing: { queueTimeoutMs: 1500 }, lora: { maxLoras: 1, adapters: [{ id: "m-a" }, { id: "m-b" }] }, sim: { latency: SLOW_TOKENS } },
    ]);
    const pending: Promise<unknown>[] = [];
    try {
      const sim = h.sims.m![0]!;
      const long = ask(h, "m-a", LONG);
      await waitFor(() => sim.stats().running === 1, 5000, "the m-a request running");
      const waitingForRoom = [1, 2, 3].map(() => ask(h, "m-b", SHORT));
      pending.push(long, ...waitingForRoom);
      // The m-b requests wait first: counted in flight by the gateway, none at the replica.
      await waitFor(async () => (await inFlightNow(h, "m-b")) === 3, 5000, "three m-b requests waiting");
      expect(sim.stats().requestsTotal).toBe(1);
      const base = await ask(h, "m", SHORT);

      // 1 of 8 slots in use: the base model's request is served at once, not after the m-b requests give up.
      expect({ ...summary(base), prompt: base.ms < 1000 }).toEqual(expect.objectContaining({ status: 200, prompt: true }));

      // The m-b requests may wait for m-a to finish; any refused is refused for m-b's sake, and says so.
      for (const b of await Promise.all(waitingForRoom)) {
        expect([200, 429]).toContain(b.status);
        if (b.status === 429) {
          expect(b.body.error?.message).toMatch(/`m-b`/);
          expect(b.body.error?.message).not.toMatch(/`m`/);
        }
      }
      expect((await long).status).toBe(200);
    } finally {
      await Promise.allSettled(pending);
      await h.close();
    }
  });

  // The same in the wake queue: requests held while the model had no replica are released in order once one is
  // ready, and today the release stops at the first it cannot place, so the base request behind m-b stays held.
  it("does not block the base model in the wake queue right after a wake", async () => {
    const port = await reservePort();
    const sims: RunningSimulator[] = [];
    const h = await startHarness([], {
      mapCatalog: (): CatalogInput => ({
        models: [
          {
            id: "w",
            category: "generative",
            maxConcurrency: 8,
            routing: { queueTimeoutMs: 1500 },
            upstream: { mode: "endpoints", endpoints: [{ url: `http://127.0.0.1:${port}` }] },
            // Long enough to hold everything and start the replica; short enough that a stuck request ends soon.
            wake: { timeoutMs: 2000, maxHeld: 16 },
            lora: {
              maxLoras: 1,
              adapters: [
                { id: "w-a", path: "/adapters/w-a", loading: "on-demand" },
                { id: "w-b", path: "/adapters/w-b", loading: "on-demand" },
              ],
            },
          },
        ],
      }),
    });
    const pending: Promise<unknown>[] = [];
    try {
      // Held in this order: w-a first (placed first after the wake), then w-b (no room while w-a runs), then base.
      const long = ask(h, "w-a", LONG);
      pending.push(long);
      await waitFor(async () => (await heldNow(h, "w")) === 1, 5000, "w-a held");
      const waitingForRoom: Promise<Answer>[] = [];
      for (let i = 1; i <= 3; i++) {
        waitingForRoom.push(ask(h, "w-b", SHORT));
        pending.push(waitingForRoom.at(-1)!);
        await waitFor(async () => (await heldNow(h, "w")) === 1 + i, 5000, `w-b #${i} held`);
      }
      const baseAnswer = ask(h, "w", SHORT);
      pending.push(baseAnswer);
      await waitFor(async () => (await heldNow(h, "w")) === 5, 5000, "the base request held");

      // The replica wakes: it starts on the reserved port and its first health check finds it ready.
      const woke = performance.now();
      const sim = await loraSim("w", { port: await takePort(port) });
      sims.push(sim);
      const base = await baseAnswer;

      // The base request needs no adapter slot and the replica has 7 of 8 free: it is answered right after the wake.
      const afterWake = Math.round(base.at - woke);
      expect({ ...summary(base), afterWake, prompt: afterWake < 1000 }).toEqual(expect.objectContaining({ status: 200, prompt: true }));

      for (const b of await Promise.all(waitingForRoom)) expect([200, 429]).toContain(b.status);
      expect((await long).status).toBe(200);
    } finally {
      await Promise.allSettled(pending);
      await h.close();
      await Promise.all(sims.map((s) => s.close()));
    }
  });
});

describe("held requests and the gateway's body memory", () => {
  // A held request keeps its body (it has not been sent anywhere yet), and today the memory it reserved counts
  // against the gateway-wide budget: requests parked for a sleeping model starve every other model of admission.
  it("requests held for a sleeping model do not lock other models out of body memory", async () => {
    const sleepyPort = await reservePort();
    const holders = [generateApiKey(), generateApiKey()];
    const h = await startHarness([{ id: "awake" }], {
      settings: { bodyLimitBytes: 2 * MiB, bodyMemoryBytes: 8 * MiB, bodyMemoryPerKeyBytes: 4 * MiB },
      extraKeys: holders.map((key, i) => ({ name: `holder-${i}`, sha256: hashApiKey(key) })),
      mapCatalog: (c) => ({
        models: [
          ...c.models,
          { id: "sleepy", category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: `http://127.0.0.1:${sleepyPort}` }] }, wake: { timeoutMs: 60_000, maxHeld: 16 } },
        ],
      }),
    });
    // ~1 MB of prompt (one "word": one token to the simulator's tokenizer, so any context length fits).
    const big = (model: string) => chatBody(model, { messages: [{ role: "user", content: "a".repeat(1_000_000) }], max_tokens: 1 });
    const leave = new AbortController();
    const held: Promise<unknown>[] = [];
    try {
      // Each key holds 4 (3.8 MiB of its 4 MiB); the 8 together 7.6 MiB of the gateway's 8 MiB.
      for (const key of holders) {
        for (let i = 0; i < 4; i++) {
          held.push(
            h
              .fetch("/v1/chat/completions", { json: big("sleepy"), headers: { authorization: `Bearer ${key}` }, signal: leave.signal })
              .then((r) => r.status)
              .catch((e: Error) => e),
          );
        }
      }
      await waitFor(async () => (await heldNow(h, "sleepy")) === 8, 10_000, "eight ~1 MB requests held");

      const started = performance.now();
      const res = await h.fetch("/v1/chat/completions", { json: big("awake") });
      const body = (await res.json()) as ErrorBody;
      const awake: Answer = { status: res.status, ms: performance.now() - started, at: performance.now(), body };
      expect(summary(awake)).toEqual(expect.objectContaining({ status: 200 }));
    } finally {
      leave.abort();
      await Promise.all(held);
      await waitFor(async () => (await heldNow(h, "sleepy")) === 0, 5000, "nothing held").catch(() => undefined);
      await h.close();
    }
  });
});

describe("a woken InferencePool (pool mode)", () => {
  const records = new Map<string, string[]>();
  let dns: LoopbackDns;
  let previousServers: string[];
  beforeAll(async () => {
    dns = await startDnsServer(records);
    previousServers = getServers();
    // The gateway runs in this process: its resolver asks the loopback server.
    setServers([`127.0.0.1:${dns.port}`]);
  });
  afterAll(async () => {
    setServers(previousServers);
    await dns?.close();
  });

  // The pool is one address to the gateway, with no cap of its own (no upstream.maxConcurrency): today every held
  // request is sent the moment the readiness name resolves, however few pods are ready behind it.
  it("gets no more held requests at once than its ready pods can take (pods × the model's maxConcurrency)", async () => {
    const name = "pooled.test.internal";
    // The simulator stands for the pool's single ready pod; it would run 16 at once, the catalog says 2.
    const sim = await startSimulator({ models: ["pooled"], maxNumSeqs: 16, latency: SLOW_TOKENS });
    const h = await startHarness([], {
      mapCatalog: (): CatalogInput => ({
        models: [
          {
            id: "pooled",
            category: "generative",
            maxConcurrency: 2,
            // Requests released after the wake may wait for room: long enough that none is refused meanwhile.
            routing: { queueTimeoutMs: 10_000 },
            upstream: { mode: "pool", url: sim.url, readiness: { host: name, port: Number(new URL(sim.url).port), refreshIntervalMs: 100 } },
            wake: { timeoutMs: 30_000, maxHeld: 16 },
          },
        ],
      }),
    });
    // ~180 ms each: 10 at 2 at a time take about 1 s.
    const answers = Array.from({ length: 10 }, () => ask(h, "pooled", { max_tokens: 6, ignore_eos: true }));
    try {
      await waitFor(async () => (await heldNow(h, "pooled")) === 10, 10_000, "ten held while the name has no address");
      expect(sim.stats().requestsTotal).toBe(0);

      const { result, peak } = await peakRunning(sim, async () => {
        records.set(name, ["127.0.0.1"]);
        return Promise.all(answers);
      });
      expect(result.map((a) => a.status)).toEqual(Array(10).fill(200));
      expect(sim.stats().completedTotal).toBe(10);
      // One ready pod × maxConcurrency 2.
      expect(peak).toBeLessThanOrEqual(2);
    } finally {
      records.delete(name);
      // Closing the gateway answers whatever is still held (503), so nothing outlives the test.
      await h.close();
      await Promise.allSettled(answers);
      await sim.close();
    }
  });
});

describe("what the gateway believes a replica holds", () => {
  // A replica that restarted holds only its preloaded adapters. The health checker's own transition resets the
  // gateway's view, but a refused connection met by a request takes the replica out without that reset.
  it("a replica that restarts, first seen as a refused connection, gets its adapter loaded again", async () => {
    const h = await startHarness([{ id: "m", lora: { maxLoras: 1, adapters: [{ id: "m-a" }] } }], {
      // Health checks every 50 ms, but 20 failures in a row before one takes a ready replica out: a request, not a
      // health check, is what meets the stopped replica first. No listings: they would correct the view meanwhile.
      settings: { healthIntervalMs: 50, unhealthyThreshold: 20, loadScrapeIntervalMs: 0 },
    });
    let fresh: RunningSimulator | undefined;
    try {
      const old = h.sims.m![0]!;
      const pool = h.gateway.registry.get("m")!;
      expect(summary(await ask(h, "m-a", SHORT))).toEqual(expect.objectContaining({ status: 200 }));
      expect(old.stats().loraLoadsTotal).toBe(1);

      const port = Number(new URL(old.url).port);
      await old.close();
      // The request meets the refused connection: its only replica is taken out (503), before any health check could.
      expect(summary(await ask(h, "m-a", SHORT))).toEqual(expect.objectContaining({ status: 503 }));
      expect(pool.isReady).toBe(false);

      // The same replica restarts on the same port with no adapter loaded.
      fresh = await loraSim("m", { port, latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 } });
      await waitFor(() => pool.isReady, 5000, "the restarted replica ready");

      const again = await ask(h, "m-a", SHORT);
      expect(summary(again)).toEqual(expect.objectContaining({ status: 200 }));
      expect(fresh.stats().loraLoadsTotal).toBe(1);
    } finally {
      await h.close();
      await fresh?.close();
    }
  });

  // Several gateway pods share the replicas; one may unload an adapter another still thinks is there. vLLM answers
  // 404 for it: that means "not loaded here", so the gateway should load it again and retry once.
  it("an adapter unloaded behind the gateway's back (another gateway pod) is loaded again, not answered 404", async () => {
    const h = await startHarness([{ id: "m", lora: { maxLoras: 1, adapters: [{ id: "m-a" }] } }], {
      // No listings of /v1/models: the gateway must not learn of the unload before the request meets it.
      settings: { loadScrapeIntervalMs: 0 },
    });
    try {
      const sim = h.sims.m![0]!;
      expect(summary(await ask(h, "m-a", SHORT))).toEqual(expect.objectContaining({ status: 200 }));

      const unload = await fetch(`${sim.url}/v1/unload_lora_adapter`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ lora_name: "m-a" }) });
      expect(unload.status).toBe(200);

      const again = await ask(h, "m-a", SHORT);
      expect(summary(again)).toEqual(expect.objectContaining({ status: 200 }));
      expect(sim.stats().loraLoadsTotal).toBe(2);
    } finally {
      await h.close();
    }
  });
});
