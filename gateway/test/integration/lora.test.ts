import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import type { RunningSimulator } from "../../../simulator/src";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

/**
 * LoRA adapters through the gateway, against simulators serving them as vLLM 0.14: each adapter a model of its own,
 * loaded on demand where its requests go, within each replica's maxLoras.
 */

type Card = { id: string; parent?: string };
type Answer = { status: number; headers: Headers; body: { model?: string; error?: { code: string; message: string; type: string } } };

/** What a simulator holds: the adapters its /v1/models lists. */
const held = async (sim: RunningSimulator): Promise<string[]> =>
  ((await (await fetch(`${sim.url}/v1/models`)).json()) as { data: Card[] }).data.filter((m) => m.parent).map((m) => m.id);

const ask = async (h: Harness, model: string, apiKey?: string): Promise<Answer> => {
  const res = await h.fetch("/v1/chat/completions", { json: chatBody(model, { max_tokens: 3 }), headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer["body"] };
};

const metric = async (h: Harness, pattern: RegExp): Promise<number> => {
  const m = (await (await fetch(h.gateway.metricsUrl)).text()).match(pattern);
  return m ? Number(m[1]) : 0;
};

/** Which simulator served each completed request so far. */
const completed = (sims: readonly RunningSimulator[]) => sims.map((s) => s.stats().completedTotal);

describe("adapters as models", () => {
  let h: Harness;
  const tuned = generateApiKey();
  beforeAll(async () => {
    h = await startHarness(
      [{ id: "base", replicas: 2, lora: { maxLoras: 2, adapters: [{ id: "base-sql", loading: "preload" }, { id: "base-chat" }, { id: "base-legal" }] } }],
      {
        extraKeys: [{ name: "tuned", sha256: hashApiKey(tuned), models: ["base-chat"] }],
        mapCatalog: (c) => ({ ...c, aliases: [{ id: "assistant", models: ["base-chat", "base"] }] }),
      },
    );
  });
  afterAll(() => h.close());

  it("lists each adapter with its base model as parent, and answers GET /v1/models/{adapter}", async () => {
    const { data } = (await (await h.fetch("/v1/models")).json()) as { data: Card[] };
    expect(data.map((m) => [m.id, m.parent])).toEqual([
      ["base", undefined],
      ["base-sql", "base"],
      ["base-chat", "base"],
      ["base-legal", "base"],
      // An alias is described by what it reaches now: here the adapter, so its card has the adapter's parent.
      ["assistant", "base"],
    ]);
    expect(await (await h.fetch("/v1/models/base-legal")).json()).toMatchObject({ id: "base-legal", object: "model", parent: "base" });
  });

  it("loads an adapter on demand at the first request, not at the second; the answer, log line and metrics name the adapter", async () => {
    const first = await ask(h, "base-chat");
    expect(first.status).toBe(200);
    expect(first.body.model).toBe("base-chat");
    const loads = h.sims.base!.map((s) => s.stats().loraLoadsTotal);
    expect((await ask(h, "base-chat")).status).toBe(200);
    expect(h.sims.base!.map((s) => s.stats().loraLoadsTotal)).toEqual(loads);
    expect(await metric(h, /gateway_lora_adapter_loads_total\{model="base",adapter="base-chat",outcome="success"\} (\d+)/)).toBe(1);
    expect(h.logs.find((l) => l.msg === "adapter loaded")).toMatchObject({ model: "base", adapter: "base-chat" });
    expect(h.logs.filter((l) => l.model === "base-chat" && l.status === 200)).toHaveLength(2);
    expect(await metric(h, /gateway_requests_total\{model="base-chat",endpoint="\/v1\/chat\/completions",status="200",key="test-key"\} (\d+)/)).toBe(2);
    // The model server got the adapter's name: it served the adapter (its text differs from the base model's).
    const served = h.sims.base!.find((s) => s.stats().lastRequestBody !== undefined)!;
    expect((served.stats().lastRequestBody as { model: string }).model).toBe("base-chat");
  });

  it("serves a preloaded adapter with no load", async () => {
    const before = h.sims.base!.map((s) => s.stats().loraLoadsTotal);
    expect((await ask(h, "base-sql")).status).toBe(200);
    expect(h.sims.base!.map((s) => s.stats().loraLoadsTotal)).toEqual(before);
  });

  it("a key given only an adapter uses it, sees only it, and gets 404 for its base model and the other adapters", async () => {
    expect((await ask(h, "base-chat", tuned)).status).toBe(200);
    for (const other of ["base", "base-sql", "base-legal"]) {
      const refused = await ask(h, other, tuned);
      expect(refused.status).toBe(404);
      expect(refused.body.error!.code).toBe("model_not_found");
    }
    const { data } = (await (await h.fetch("/v1/models", { headers: { authorization: `Bearer ${tuned}` } })).json()) as { data: Card[] };
    expect(data).toEqual([expect.objectContaining({ id: "base-chat", parent: "base" })]);
  });

  it("an alias may stand for an adapter", async () => {
    const { status, body } = await ask(h, "assistant");
    expect(status).toBe(200);
    expect(body.model).toBe("base-chat");
    expect(h.logs.find((l) => l.alias === "assistant")).toMatchObject({ model: "base-chat" });
  });

  it("streams through the OpenAI SDK under the adapter's name", async () => {
    const stream = await h.client().chat.completions.create({ model: "base-legal", messages: [{ role: "user", content: "hi" }], max_tokens: 4, stream: true });
    const models = new Set<string>();
    for await (const chunk of stream) models.add(chunk.model);
    expect([...models]).toEqual(["base-legal"]);
  });
});

describe("adapter affinity and loads", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([
      {
        id: "m",
        replicas: 3,
        lora: { maxLoras: 2, adapters: [{ id: "m-a" }, { id: "m-b" }] },
        sim: { lora: { loadTimeMs: 300 } },
      },
    ]);
  });
  afterAll(() => h.close());

  it("many concurrent first requests wait for one load, on one replica", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => ask(h, "m-a")));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(h.sims.m!.reduce((n, s) => n + s.stats().loraLoadsTotal, 0)).toBe(1);
    const holders = (await Promise.all(h.sims.m!.map(held))).filter((names) => names.includes("m-a"));
    expect(holders).toHaveLength(1);
    expect(await metric(h, /gateway_lora_adapter_loads_total\{model="m",adapter="m-a",outcome="success"\} (\d+)/)).toBe(1);
  });

  it("a later request for a loaded adapter goes to the replica holding it", async () => {
    const holder = (await Promise.all(h.sims.m!.map(held))).findIndex((names) => names.includes("m-a"));
    for (let i = 0; i < 4; i++) {
      const before = completed(h.sims.m!);
      expect((await ask(h, "m-a")).status).toBe(200);
      const after = completed(h.sims.m!);
      expect(after.map((n, j) => n - before[j]!)).toEqual(h.sims.m!.map((_, j) => (j === holder ? 1 : 0)));
    }
  });

  it("learns what a replica holds from its listing: an adapter loaded behind its back is used where it is", async () => {
    const free = (await Promise.all(h.sims.m!.map(held))).findIndex((names) => names.length === 0);
    const res = await fetch(`${h.sims.m![free]!.url}/v1/load_lora_adapter`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ lora_name: "m-b", lora_path: "/adapters/m-b" }) });
    expect(res.status).toBe(200);
    await waitFor(() => h.gateway.registry.get("m")!.replicas.find((r) => r.url === h.sims.m![free]!.url)!.adapters!.held.has("m-b"), 10_000, "the listing to be read");
    const loads = h.sims.m!.reduce((n, s) => n + s.stats().loraLoadsTotal, 0);
    const before = completed(h.sims.m!);
    expect((await ask(h, "m-b")).status).toBe(200);
    expect(completed(h.sims.m!)[free]).toBe(before[free]! + 1);
    expect(h.sims.m!.reduce((n, s) => n + s.stats().loraLoadsTotal, 0)).toBe(loads);
  });
});

describe("slots", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "s", replicas: 1, lora: { maxLoras: 1, adapters: [{ id: "s-a" }, { id: "s-b" }] } }]);
  });
  afterAll(() => h.close());

  it("never holds more than maxLoras adapters on a replica: the idle one is unloaded for the other", async () => {
    const sim = h.sims.s![0]!;
    for (const name of ["s-a", "s-b", "s-a", "s-b"]) {
      expect((await ask(h, name)).status).toBe(200);
      expect(await held(sim)).toEqual([name]);
    }
    expect(await metric(h, /gateway_lora_adapter_evictions_total\{model="s",adapter="s-a"\} (\d+)/)).toBe(2);
    expect(h.logs.find((l) => l.msg === "adapter evicted")).toMatchObject({ model: "s", adapter: "s-a", for: "s-b" });
  });

  it("with two replicas of one slot each, two adapters get one replica each", async () => {
    const two = await startHarness([{ id: "t", replicas: 2, lora: { maxLoras: 1, adapters: [{ id: "t-a" }, { id: "t-b" }] } }]);
    try {
      for (const name of ["t-a", "t-b", "t-a", "t-b"]) expect((await ask(two, name)).status).toBe(200);
      expect((await Promise.all(two.sims.t!.map(held))).map((names) => names.join()).sort()).toEqual(["t-a", "t-b"]);
      expect(two.sims.t!.reduce((n, s) => n + s.stats().loraLoadsTotal, 0)).toBe(2);
    } finally {
      await two.close();
    }
  });
});

describe("a failed load", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "f", lora: { maxLoras: 1, adapters: [{ id: "f-broken", path: "/missing/f-broken" }] }, sim: { lora: { missingPathPattern: "^/missing/" } } }], {
      settings: { retryAfterNotReadySeconds: 7 },
    });
  });
  afterAll(() => h.close());

  it("is a 503 adapter_load_failed envelope with Retry-After, logged and counted; the base model still serves", async () => {
    const failed = await ask(h, "f-broken");
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("7");
    expect(failed.body.error).toMatchObject({ code: "adapter_load_failed", type: "service_unavailable_error" });
    expect(failed.body.error!.message).toMatch(/f-broken.*f/);
    const line = h.logs.find((l) => l.msg === "adapter load failed");
    expect(line).toMatchObject({ model: "f", adapter: "f-broken" });
    expect(String(line!.reason)).toMatch(/404.*No adapter found/);
    expect(await metric(h, /gateway_lora_adapter_loads_total\{model="f",adapter="f-broken",outcome="failure"\} (\d+)/)).toBe(1);
    expect((await ask(h, "f")).status).toBe(200);
  });
});

describe("pool mode", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "p", lora: { maxLoras: 1, adapters: [{ id: "p-sql", loading: "preload" }] } }], {
      mapCatalog: (c) => ({ ...c, models: c.models.map((m) => (m.upstream.mode === "endpoints" ? { ...m, upstream: { mode: "pool", url: m.upstream.endpoints[0]!.url } } : m)) }),
    });
  });
  afterAll(() => h.close());

  it("passes the adapter id through to the pool, which places it (the gateway loads nothing)", async () => {
    const { status, body } = await ask(h, "p-sql");
    expect(status).toBe(200);
    expect(body.model).toBe("p-sql");
    expect((h.sims.p![0]!.stats().lastRequestBody as { model: string }).model).toBe("p-sql");
    expect(h.gateway.registry.get("p")!.adapters).toBeUndefined();
    expect(h.logs.some((l) => l.msg === "adapter loaded")).toBe(false);
  });
});
