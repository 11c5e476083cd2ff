// Scale to zero from the gateway's side: a model that wakes on demand (catalog `wake`) and has no ready replica holds
// its requests (bounded, for a while) instead of answering 503, and releases them as fast as the first replica can
// take them. Real gateways, real simulators started late on a reserved loopback port, a real DNS server on loopback.
import { spawnSync } from "node:child_process";
import { getServers, setServers } from "node:dns";
import { startSimulator, type RunningSimulator } from "../../../simulator/src";
import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import type { CatalogInput } from "../../src/config/catalog";
import { startDnsServer, type LoopbackDns } from "../support/dns-server";
import { reservedPorts } from "../support/reserved-ports";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

const ports = reservedPorts();
const reservePort = ports.reserve;
const takePort = ports.take;
afterAll(() => ports.releaseAll());

/** A catalog model with no replica up: one endpoint on a port nothing listens on. */
function asleep(id: string, port: number, wake: { timeoutMs: number; maxHeld: number }, maxConcurrency = 16): CatalogInput["models"][number] {
  return { id, category: "generative", maxConcurrency, upstream: { mode: "endpoints", endpoints: [{ url: `http://127.0.0.1:${port}` }] }, wake };
}

type ErrorBody = { error: { code: string } };

const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;
const itWithPromtool = hasPromtool || process.env.CI ? it : it.skip;

async function metric(h: Harness, pattern: RegExp): Promise<number | undefined> {
  const text = await (await fetch(h.gateway.metricsUrl)).text();
  const m = text.match(pattern);
  return m ? Number(m[1]) : undefined;
}

const held = (h: Harness, model: string) => metric(h, new RegExp(`^gateway_model_held_requests\\{model="${model}"\\} (\\d+)`, "m"));
const heldTotal = (h: Harness, model: string, outcome: string) => metric(h, new RegExp(`^gateway_held_requests_total\\{model="${model}",outcome="${outcome}"\\} (\\d+)`, "m"));

/** Reads a stream's text until `until` shows up (then keeps reading in the background into the returned body). */
async function readUntil(res: Response, until: string): Promise<{ seen: string; rest: Promise<string> }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  while (!seen.includes(until)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${JSON.stringify(until)}: ${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    let text = seen;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  })();
  return { seen, rest };
}

describe("a model at zero replicas, endpoints mode (nothing listening yet)", () => {
  let h: Harness;
  let sleepyPort: number;
  const capped = generateApiKey();
  const sims: RunningSimulator[] = [];

  beforeAll(async () => {
    sleepyPort = await reservePort();
    const [neverPort, idlePort, deadPort] = [await reservePort(), await reservePort(), await reservePort()];
    h = await startHarness([], {
      // Keep-alives of waiting streams would start only after 10 minutes: any comment seen below comes from holding.
      settings: { sseKeepAliveMs: 600_000 },
      extraKeys: [{ name: "capped", sha256: hashApiKey(capped), maxConcurrent: 2 }],
      mapCatalog: () => ({
        models: [
          asleep("sleepy", sleepyPort, { timeoutMs: 120_000, maxHeld: 6 }, 2),
          asleep("never", neverPort, { timeoutMs: 1500, maxHeld: 4 }),
          asleep("idle", idlePort, { timeoutMs: 120_000, maxHeld: 4 }),
          // Not a wake model: at zero it answers 503 at once.
          { id: "dead", category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: `http://127.0.0.1:${deadPort}` }] } },
        ],
        aliases: [{ id: "fallback", models: ["dead", "idle"] }],
      }),
    });
  });
  afterAll(async () => {
    await h?.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  const chat = (model: string, extra: Record<string, unknown> = {}, init: RequestInit = {}) =>
    h.fetch("/v1/chat/completions", { json: chatBody(model, { max_tokens: 12, ...extra }), ...init });

  it("holds requests until a replica starts late, keeps a held stream alive, refuses over maxHeld, and releases no faster than the replica takes", async () => {
    const requestsBefore = h.logs.length;
    const answers = [1, 2, 3, 4, 5].map(() => chat("sleepy"));
    const stream = await (async () => {
      await waitFor(async () => (await held(h, "sleepy")) === 5, 10_000, "five requests held");
      return chat("sleepy", { stream: true });
    })();
    // The stream is answered 200 with a keep-alive comment while nothing serves the model.
    expect(stream.status).toBe(200);
    const { seen, rest } = await readUntil(stream, ": keep-alive");
    expect(seen).not.toContain("data:");
    expect(await held(h, "sleepy")).toBe(6);

    const over = await chat("sleepy");
    expect(over.status).toBe(429);
    const overBody = (await over.json()) as ErrorBody & { error: { message: string } };
    expect(overBody.error.code).toBe("model_saturated");
    expect(overBody.error.message).toMatch(/starting from zero replicas/);
    expect(over.headers.get("retry-after")).toBeTruthy();
    expect(await heldTotal(h, "sleepy", "saturated")).toBe(1);

    // The replica comes up on the reserved port, loading for a while (503 on /health), then ready.
    const sim = await startSimulator({
      port: await takePort(sleepyPort),
      models: ["sleepy"],
      startupDelayMs: 300,
      maxNumSeqs: 16,
      latency: { timeToFirstTokenMs: 5, interTokenLatencyMs: 25, prefillTimePerTokenMs: 0 },
    });
    sims.push(sim);
    let maxRunning = 0;
    const sampler = setInterval(() => (maxRunning = Math.max(maxRunning, sim.stats().running)), 5);
    try {
      const statuses = await Promise.all(answers.map(async (a) => (await a).status));
      const text = await rest;
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      expect(text.indexOf(": keep-alive")).toBeLessThan(text.indexOf("data:"));
      expect(text).toContain("data: [DONE]");
    } finally {
      clearInterval(sampler);
    }
    // The catalog's maxConcurrency (2) bounds what reached the replica at once, though it would run 16.
    expect(maxRunning).toBeGreaterThanOrEqual(1);
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(sim.stats().completedTotal).toBe(6);

    expect(await held(h, "sleepy")).toBe(0);
    expect(await heldTotal(h, "sleepy", "released")).toBe(6);
    expect(await metric(h, /^gateway_model_wakes_total\{model="sleepy"\} (\d+)/m)).toBe(1);
    expect(await metric(h, /^gateway_model_wake_seconds_count\{model="sleepy"\} (\d+)/m)).toBe(1);
    await waitFor(() => h.logs.slice(requestsBefore).filter((l) => l.msg === "request" && l.status === 200).length === 6, 5000, "six request lines");
    const lines = h.logs.slice(requestsBefore).filter((l) => l.msg === "request" && l.status === 200);
    expect(lines.every((l) => typeof l.heldMs === "number")).toBe(true);
  });

  it("a replica that stops gracefully (scale-down) finishes the stream it is serving", async () => {
    const sim = sims[0]!;
    const pool = h.gateway.registry.get("sleepy")!;
    await waitFor(() => pool.isReady, 10_000, "sleepy ready");
    const res = await chat("sleepy", { stream: true, max_tokens: 40, ignore_eos: true });
    const { rest } = await readUntil(res, "data:");
    await waitFor(() => sim.stats().running === 1, 5000, "the stream running at the replica");
    const closed = sim.close();
    const text = await rest;
    await closed;
    // All 40 tokens (ignore_eos runs to max_tokens), then the end.
    expect(text.match(/"delta":\{"content":/g)).toHaveLength(40);
    expect(text).toContain('"finish_reason":"length"');
    expect(text).toContain("data: [DONE]");
    expect(text).not.toContain('"error"');
    // Nothing is left to serve it: the model is at zero again.
    await waitFor(() => !pool.isReady, 10_000, "sleepy unready once its replica is gone");
  });

  it("no replica within timeoutMs: 503 model_not_ready, or for a stream held past its keep-alive, an SSE error event", async () => {
    const plain = await chat("never");
    expect(plain.status).toBe(503);
    expect(((await plain.json()) as ErrorBody).error.code).toBe("model_not_ready");
    expect(plain.headers.get("retry-after")).toBeTruthy();

    const stream = await chat("never", { stream: true });
    expect(stream.status).toBe(200);
    const text = await stream.text();
    expect(text.indexOf(": keep-alive")).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/data: \{"error":\{[^\n]*"code":"model_not_ready"/);
    expect(text).toContain("data: [DONE]");
    expect(await heldTotal(h, "never", "timed_out")).toBe(2);
  });

  it("per-key caps count held requests; a client that leaves frees its place and its key's slot at once", async () => {
    const asCapped = (signal?: AbortSignal) => chat("idle", {}, { headers: { authorization: `Bearer ${capped}` }, signal });
    const first = new AbortController();
    const second = new AbortController();
    const pending = [asCapped(first.signal), asCapped(second.signal)].map((p) => p.catch((e: Error) => e));
    await waitFor(async () => (await held(h, "idle")) === 2, 10_000, "two held");

    // The key is at maxConcurrent with requests that are only held: the third is the key's 429, not a held one.
    const third = await asCapped();
    expect(third.status).toBe(429);
    expect(((await third.json()) as ErrorBody).error.code).toBe("concurrency_limit_exceeded");
    expect(await held(h, "idle")).toBe(2);

    first.abort();
    await waitFor(async () => (await held(h, "idle")) === 1, 10_000, "the abandoned request's place freed");
    expect(await heldTotal(h, "idle", "abandoned")).toBe(1);
    // Its slot too: the key gets a request in again (held).
    const fourth = new AbortController();
    const again = asCapped(fourth.signal).catch((e: Error) => e);
    await waitFor(async () => (await held(h, "idle")) === 2, 10_000, "a new request of the key held");

    second.abort();
    fourth.abort();
    await Promise.all([...pending, again]);
    await waitFor(async () => (await held(h, "idle")) === 0, 10_000, "nothing held");
  });

  it("an alias whose models are all at zero holds for its first wake model instead of failing", async () => {
    expect((await chat("dead")).status).toBe(503);
    const leave = new AbortController();
    const viaAlias = chat("fallback", {}, { signal: leave.signal }).catch((e: Error) => e);
    await waitFor(async () => (await held(h, "idle")) === 1, 10_000, "the alias's request held for idle");
    leave.abort();
    await viaAlias;
    await waitFor(async () => (await held(h, "idle")) === 0, 10_000, "released on abort");
  });

  itWithPromtool("the wake metrics pass promtool check metrics", async () => {
    const text = await (await fetch(h.gateway.metricsUrl)).text();
    expect(text).toMatch(/^# TYPE gateway_model_wake_seconds histogram$/m);
    // Every wake model's series exist from the start, at 0 (here: "never" never woke).
    expect(text).toMatch(/^gateway_model_wakes_total\{model="never"\} 0$/m);
    expect(text).toMatch(/^gateway_held_requests_total\{model="never",outcome="released"\} 0$/m);
    expect(text).not.toMatch(/gateway_model_held_requests\{model="dead"\}/);
    const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(r.stderr + r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it("by default /v1/models lists a model at zero only once it has a ready replica", async () => {
    const ids = ((await (await h.fetch("/v1/models")).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).not.toContain("idle");
    expect(ids).not.toContain("fallback");
    expect((await h.fetch("/v1/models/idle")).status).toBe(503);
  });
});

describe("a gateway shutting down with requests held", () => {
  it("answers them 503 model_not_ready (their clients retry another gateway replica) instead of cutting them at the end of its grace", async () => {
    const port = await reservePort();
    const h = await startHarness([], { settings: { shutdownGraceMs: 60_000 }, mapCatalog: () => ({ models: [asleep("idle", port, { timeoutMs: 120_000, maxHeld: 4 })] }) });
    try {
      const answer = h.fetch("/v1/chat/completions", { json: chatBody("idle") });
      await waitFor(async () => (await held(h, "idle")) === 1, 10_000, "one held");
      const closed = h.gateway.close();
      const res = await answer;
      expect(res.status).toBe(503);
      expect(((await res.json()) as ErrorBody).error.code).toBe("model_not_ready");
      expect(res.headers.get("retry-after")).toBeTruthy();
      await closed;
    } finally {
      await h.close();
    }
  });
});

describe("a model at zero replicas found by DNS (dns and pool modes)", () => {
  const records = new Map<string, string[]>();
  let dnsServer: LoopbackDns;
  let previousServers: string[];
  let h: Harness;

  beforeAll(async () => {
    dnsServer = await startDnsServer(records);
    previousServers = getServers();
    // The gateway runs in this process: its resolver asks the loopback server.
    setServers([`127.0.0.1:${dnsServer.port}`]);
    const wake = { timeoutMs: 120_000, maxHeld: 8 };
    h = await startHarness([{ id: "by-dns" }, { id: "by-pool" }], {
      settings: { healthIntervalMs: 100, listWakeModels: "true" },
      mapCatalog: (c) => ({
        models: c.models.map((m) => {
          const url = m.upstream.mode === "endpoints" ? new URL(m.upstream.endpoints[0]!.url) : undefined;
          if (m.id === "by-dns" && url) return { ...m, wake, upstream: { mode: "dns", host: "model-by-dns.test.internal", port: Number(url.port), refreshIntervalMs: 100 } };
          if (m.id === "by-pool" && url) {
            return { ...m, wake, upstream: { mode: "pool", url: url.origin, readiness: { host: "model-by-pool.test.internal", port: Number(url.port), refreshIntervalMs: 100 } } };
          }
          return m;
        }),
      }),
    });
  });
  afterAll(async () => {
    await h?.close();
    setServers(previousServers);
    await dnsServer?.close();
  });

  it("GATEWAY_LIST_WAKE_MODELS lists them while they have no ready replica", async () => {
    expect(h.gateway.registry.get("by-dns")!.isReady).toBe(false);
    const ids = ((await (await h.fetch("/v1/models")).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["by-dns", "by-pool"]));
    expect((await h.fetch("/v1/models/by-dns")).status).toBe(200);
  });

  it.each([
    ["dns", "by-dns", "model-by-dns.test.internal"],
    ["pool", "by-pool", "model-by-pool.test.internal"],
  ])("%s mode: held while the name answers NXDOMAIN, served once it resolves", async (_mode, model, name) => {
    const pool = h.gateway.registry.get(model)!;
    expect(pool.isReady).toBe(false);
    const sent = h.sims[model]![0]!.stats().requestsTotal;
    const answers = [1, 2, 3].map(() => h.fetch("/v1/chat/completions", { json: chatBody(model, { max_tokens: 3 }) }));
    await waitFor(async () => (await held(h, model)) === 3, 10_000, "three held");
    // Nothing reached the model server while its name did not resolve.
    expect(h.sims[model]![0]!.stats().requestsTotal).toBe(sent);

    records.set(name, ["127.0.0.1"]);
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await held(h, model)).toBe(0);
    expect(await heldTotal(h, model, "released")).toBe(3);
    expect(await metric(h, new RegExp(`^gateway_model_wakes_total\\{model="${model}"\\} (\\d+)`, "m"))).toBe(1);
  });
});
