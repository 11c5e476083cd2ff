import type { RunningSimulator, SimulatorConfigInput } from "../src";
import { parseCliArgs } from "../src/cli-args";
import { SimulatorConfigSchema } from "../src/config";
import { EngineStalls } from "../src/engine-stalls";
import { nowMs } from "../src/latency";
import { LoraAdapters } from "../src/lora";
import { createCounters } from "../src/stats";
import { chat, fastSim, type Json, metricValue, postJson, scrape, waitFor } from "./helpers";

/** LoRA adapters as vLLM 0.14 serves them: flags, listing, runtime load and unload, the max-loras rule, the metric. */

const BASE = "base-model";

function loraSim(lora: SimulatorConfigInput["lora"], config: SimulatorConfigInput = {}): Promise<RunningSimulator> {
  return fastSim({ models: [BASE, "base-alias"], ...config, lora: { loadTimeMs: 0, swapInTimeMs: 0, ...lora } });
}

/** An adapter route's answer: the error envelope parsed, a success's plain text as it is. */
async function post(sim: RunningSimulator, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${sim.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: res.status === 200 ? text : JSON.parse(text) };
}
const load = (sim: RunningSimulator, body: unknown) => post(sim, "/v1/load_lora_adapter", body);
const unload = (sim: RunningSimulator, body: unknown) => post(sim, "/v1/unload_lora_adapter", body);
const models = async (sim: RunningSimulator): Promise<Json[]> => ((await (await fetch(`${sim.url}/v1/models`)).json()) as Json).data;

/** The body of an adapter route's success: plain text, as vLLM's `Response(content=…)` sends it. */
async function loadText(sim: RunningSimulator, path: string, body: unknown): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${sim.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** A chat request that runs until aborted (ignore_eos, 1000 tokens at 20 ms). */
function longChat(sim: RunningSimulator, model: string): { done: Promise<unknown>; stop: () => void } {
  const controller = new AbortController();
  const done = postJson(sim, "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }], max_tokens: 1000, ignore_eos: true }, {}, controller.signal).catch(
    (e: unknown) => e,
  );
  return { done, stop: () => controller.abort() };
}

const SLOW_TOKENS = { timeToFirstTokenMs: 0, interTokenLatencyMs: 20, prefillTimePerTokenMs: 0 };

describe("LoRA flags", () => {
  test("vLLM's flags, both --lora-modules forms, several values after one flag", () => {
    const { config } = parseCliArgs(
      [
        "--model", BASE,
        "--enable-lora",
        "--lora-modules", "sql=/adapters/sql", '{"name": "chat", "path": "/adapters/chat", "base_model_name": "base-model"}',
        "--max-loras", "2",
        "--max-cpu-loras", "4",
        "--max-lora-rank", "64",
        "--lora-load-time-ms", "1.5s",
        "--lora-swap-in-time-ms", "2",
        "--lora-missing-path-pattern", "^/missing/",
      ],
      { VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True" },
    );
    expect(SimulatorConfigSchema.parse(config).lora).toEqual({
      enabled: true,
      modules: [
        { name: "sql", path: "/adapters/sql" },
        { name: "chat", path: "/adapters/chat", baseModelName: BASE },
      ],
      maxLoras: 2,
      maxCpuLoras: 4,
      maxLoraRank: 64,
      runtimeUpdating: true,
      loadTimeMs: 1500,
      swapInTimeMs: 2,
      missingPathPattern: "^/missing/",
    });
  });

  test("defaults as vLLM's; the runtime-updating variable is on only for 1 or true", () => {
    expect(SimulatorConfigSchema.parse({}).lora).toMatchObject({ enabled: false, modules: [], maxLoras: 1, maxLoraRank: 16, runtimeUpdating: false });
    expect(SimulatorConfigSchema.parse(parseCliArgs([], { VLLM_ALLOW_RUNTIME_LORA_UPDATING: "1" }).config).lora.runtimeUpdating).toBe(true);
    expect(SimulatorConfigSchema.parse(parseCliArgs([], { VLLM_ALLOW_RUNTIME_LORA_UPDATING: "yes" }).config).lora.runtimeUpdating).toBe(false);
  });

  test("what vLLM refuses is refused", () => {
    expect(() => parseCliArgs(["--lora-modules", "{not json"], {})).toThrow("Invalid JSON format for --lora-modules: {not json");
    expect(() => parseCliArgs(["--lora-modules", '{"name": "x", "path": "/p", "rank": 8}'], {})).toThrow(/Invalid fields for --lora-modules/);
    expect(() => parseCliArgs(["--lora-modules"], {})).toThrow(/--lora-modules/);
    const refused = (args: string[]) => SimulatorConfigSchema.safeParse(parseCliArgs(args, {}).config).error?.issues.map((i) => i.message);
    expect(refused(["--lora-modules", "a=/a"])).toEqual(["LoRA is not enabled. Use --enable-lora to enable LoRA."]);
    expect(refused(["--enable-lora", "--max-loras", "3", "--max-cpu-loras", "2"])).toEqual(["max_cpu_loras (2) must be >= max_loras (3)."]);
    expect(refused(["--enable-lora", "--max-lora-rank", "24"])).toHaveLength(1);
    expect(refused(["--enable-lora", "--lora-missing-path-pattern", "("])).toEqual(["not a valid regular expression"]);
  });
});

describe("LoRA adapters over HTTP", () => {
  test("/v1/models lists each adapter after the base names: id its name, root its path, parent its base model", async () => {
    const sim = await loraSim(
      {
        enabled: true,
        runtimeUpdating: true,
        modules: [
          { name: "sql", path: "/adapters/sql", baseModelName: "base-alias" },
          // vLLM ignores a base model name it does not serve: the parent is the first served name.
          { name: "chat", path: "/adapters/chat", baseModelName: "elsewhere" },
        ],
      },
    );
    try {
      expect((await load(sim, { lora_name: "fresh", lora_path: "/adapters/fresh" })).status).toBe(200);
      const cards = await models(sim);
      expect(cards.map((c) => [c.id, c.root, c.parent, c.max_model_len])).toEqual([
        [BASE, BASE, null, 8192],
        ["base-alias", BASE, null, 8192],
        ["sql", "/adapters/sql", "base-alias", null],
        ["chat", "/adapters/chat", BASE, null],
        ["fresh", "/adapters/fresh", BASE, null],
      ]);
      expect(cards[4]).toMatchObject({ object: "model", owned_by: "vllm", permission: [{ object: "model_permission" }] });
      expect((await unload(sim, { lora_name: "sql" })).status).toBe(200);
      expect((await models(sim)).map((c) => c.id)).toEqual([BASE, "base-alias", "chat", "fresh"]);
    } finally {
      await sim.close();
    }
  });

  test("load and unload answer as vLLM: plain-text success, its refusals with their status, type and message", async () => {
    const sim = await loraSim({ enabled: true, runtimeUpdating: true });
    try {
      expect(await loadText(sim, "/v1/load_lora_adapter", { lora_name: "sql", lora_path: "/adapters/sql" })).toEqual({
        status: 200,
        type: null,
        text: "Success: LoRA adapter 'sql' added successfully.",
      });
      const refusal = (status: number, type: string, message: string) => ({ status, body: { error: { message, type, param: null, code: status } } });
      const answer = (r: { status: number; body: Json }) => ({ status: r.status, body: r.body });

      expect(answer(await load(sim, { lora_name: "sql", lora_path: "/adapters/other" }))).toEqual(refusal(400, "InvalidUserInput", "The lora adapter 'sql' has already been loaded."));
      expect(answer(await load(sim, { lora_name: "", lora_path: "/adapters/x" }))).toEqual(refusal(400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided."));
      // A missing field is FastAPI's validation error, which vLLM answers 400 `Bad Request` with pydantic's errors.
      expect(answer(await load(sim, { lora_name: "x" }))).toEqual(
        refusal(400, "Bad Request", "[{'type': 'missing', 'loc': ('body', 'lora_path'), 'msg': 'Field required'}]"),
      );
      expect(answer(await unload(sim, { lora_int_id: 1 }))).toEqual(refusal(400, "Bad Request", "[{'type': 'missing', 'loc': ('body', 'lora_name'), 'msg': 'Field required'}]"));
      expect((await unload(sim, { lora_name: "sql", lora_int_id: "one" })).body.error).toMatchObject({ type: "Bad Request", code: 400 });
      expect(answer(await unload(sim, { lora_name: "" }))).toEqual(refusal(400, "InvalidUserInput", "'lora_name' needs to be provided to unload a LoRA adapter."));
      expect(answer(await unload(sim, { lora_name: "nowhere" }))).toEqual(refusal(404, "NotFoundError", "The lora adapter 'nowhere' cannot be found."));

      // lora_int_id is accepted and not used, as in vLLM.
      expect(await loadText(sim, "/v1/unload_lora_adapter", { lora_name: "sql", lora_int_id: 99 })).toEqual({
        status: 200,
        type: null,
        text: "Success: LoRA adapter 'sql' removed successfully.",
      });
      expect(answer(await unload(sim, { lora_name: "sql" }))).toEqual(refusal(404, "NotFoundError", "The lora adapter 'sql' cannot be found."));
      // Unloaded, the name can be loaded again.
      expect((await load(sim, { lora_name: "sql", lora_path: "/adapters/sql" })).status).toBe(200);
      expect(sim.stats().loraLoadsTotal).toBe(2);
    } finally {
      await sim.close();
    }
  });

  test("a path the simulator cannot find fails as vLLM fails it: 404, nothing registered, the name still unknown to requests", async () => {
    const sim = await loraSim({ enabled: true, runtimeUpdating: true, missingPathPattern: "^/missing/" });
    try {
      const failed = await load(sim, { lora_name: "ghost", lora_path: "/missing/ghost" });
      expect(failed.status).toBe(404);
      expect(failed.body.error).toEqual({
        message: "Call to add_lora method failed: Loading lora ghost failed: No adapter found for /missing/ghost",
        type: "NotFoundError",
        param: null,
        code: 404,
      });
      expect((await models(sim)).map((c) => c.id)).not.toContain("ghost");
      expect((await chat(sim, { model: "ghost" })).body.error).toMatchObject({ message: "The model `ghost` does not exist.", code: 404 });
      expect(sim.stats().loraLoadsTotal).toBe(0);
    } finally {
      await sim.close();
    }
    // An adapter of --lora-modules that cannot be found stops the start, as vLLM's init_static_loras raises.
    await expect(loraSim({ enabled: true, missingPathPattern: "gone", modules: [{ name: "a", path: "/gone/a" }] })).rejects.toThrow(/No adapter found for \/gone\/a/);
  });

  test("without VLLM_ALLOW_RUNTIME_LORA_UPDATING the routes do not exist; without --enable-lora a load fails in the engine", async () => {
    const [fixed, disabled] = await Promise.all([loraSim({ enabled: true }), loraSim({ enabled: false, runtimeUpdating: true })]);
    try {
      for (const path of ["/v1/load_lora_adapter", "/v1/unload_lora_adapter"]) {
        const res = await post(fixed, path, { lora_name: "a", lora_path: "/a" });
        expect([res.status, res.body.error.message]).toEqual([404, "Not Found"]);
      }
      const res = await load(disabled, { lora_name: "a", lora_path: "/a" });
      expect([res.status, res.body.error.type, res.body.error.message]).toEqual([400, "BadRequestError", "Call to add_lora method failed: LoRA is not enabled. Use --enable-lora to enable LoRA."]);
    } finally {
      await Promise.all([fixed.close(), disabled.close()]);
    }
  });

  test("requests naming an adapter are served by it and echo its name; an unknown or unloaded one is vLLM's 404", async () => {
    const sim = await loraSim({ enabled: true, runtimeUpdating: true, modules: [{ name: "sql", path: "/adapters/sql" }] });
    try {
      const chatted = await chat(sim, { model: "sql", max_tokens: 3 });
      expect([chatted.status, chatted.body.model]).toEqual([200, "sql"]);
      const completed = await postJson(sim, "/v1/completions", { model: "sql", prompt: "hello", max_tokens: 3 });
      expect([completed.status, completed.body.model]).toEqual([200, "sql"]);
      const responded = await postJson(sim, "/v1/responses", { model: "sql", input: "hello", max_output_tokens: 3 });
      expect([responded.status, responded.body.model]).toEqual([200, "sql"]);
      // A fine-tune answers otherwise than its base model.
      const base = await chat(sim, { model: BASE, max_tokens: 8, temperature: 0 });
      const tuned = await chat(sim, { model: "sql", max_tokens: 8, temperature: 0 });
      expect(tuned.body.choices[0].message.content).not.toBe(base.body.choices[0].message.content);

      expect((await chat(sim, { model: "nope" })).body.error).toEqual({ message: "The model `nope` does not exist.", type: "NotFoundError", param: "model", code: 404 });
      await unload(sim, { lora_name: "sql" });
      expect((await chat(sim, { model: "sql" })).status).toBe(404);
    } finally {
      await sim.close();
    }
  });

  test("adapters evicted beyond max-cpu-loras are loaded again when used; one outside the GPU slots is swapped in", async () => {
    const sim = await loraSim({ enabled: true, runtimeUpdating: true, maxLoras: 1, maxCpuLoras: 2 });
    try {
      for (const name of ["a", "b"]) await load(sim, { lora_name: name, lora_path: `/adapters/${name}` });
      expect(sim.stats()).toMatchObject({ loraLoadsTotal: 2, loraSwapInsTotal: 0 });
      await chat(sim, { model: "b", max_tokens: 1 }); // in its slot since its load
      expect(sim.stats()).toMatchObject({ loraLoadsTotal: 2, loraSwapInsTotal: 0 });
      await chat(sim, { model: "a", max_tokens: 1 }); // loaded, not in the one slot
      expect(sim.stats()).toMatchObject({ loraLoadsTotal: 2, loraSwapInsTotal: 1 });
      await load(sim, { lora_name: "c", lora_path: "/adapters/c" }); // evicts b, the least recently used
      await chat(sim, { model: "b", max_tokens: 1 });
      expect(sim.stats()).toMatchObject({ loraLoadsTotal: 4, loraSwapInsTotal: 2 });
    } finally {
      await sim.close();
    }
  });
});

describe("loads and the engine", () => {
  const config = (loadTimeMs: number) => SimulatorConfigSchema.parse({ lora: { enabled: true, runtimeUpdating: true, loadTimeMs } }).lora;

  test("a stall pushes back what the engine was to do meanwhile, and stalls run one after another", async () => {
    const stalls = new EngineStalls();
    const order: string[] = [];
    const signal = new AbortController().signal;
    const first = stalls.stall(80).then(() => order.push("stall 1"));
    const second = stalls.stall(40).then(() => order.push("stall 2"));
    // A token due in 1 ms comes after both.
    const token = stalls.sleepUntil(nowMs() + 1, signal).then(() => order.push("token"));
    await Promise.all([first, second, token]);
    expect(order).toEqual(["stall 1", "stall 2", "token"]);
  });

  test("a request naming an adapter whose load is under way gets it once loaded, as vLLM's per-name lock has it", async () => {
    const adapters = new LoraAdapters(config(50), [BASE], new EngineStalls(), createCounters());
    const order: string[] = [];
    const loading = adapters.load("late", "/adapters/late").then((text) => order.push(text));
    expect(adapters.get("late")).toBeUndefined();
    const resolved = adapters.resolve("late").then((adapter) => order.push(`resolved ${adapter?.name}`));
    await Promise.all([loading, resolved]);
    expect(order).toEqual(["Success: LoRA adapter 'late' added successfully.", "resolved late"]);
    // Two loads of one name at once: the second finds it loaded.
    const twice = await Promise.allSettled([adapters.load("x", "/x"), adapters.load("x", "/x")]);
    expect(twice.map((r) => (r.status === "rejected" ? (r.reason as Error).message : r.value))).toEqual([
      "Success: LoRA adapter 'x' added successfully.",
      "The lora adapter 'x' has already been loaded.",
    ]);
  });
});

describe("max-loras", () => {
  test("with max-loras 2 a third adapter waits until one of the two running frees; base-model and running adapters go past it", async () => {
    const sim = await loraSim(
      { enabled: true, maxLoras: 2, modules: ["a", "b", "c"].map((name) => ({ name, path: `/adapters/${name}` })) },
      { maxNumSeqs: 8, latency: SLOW_TOKENS },
    );
    try {
      const a = longChat(sim, "a");
      const b = longChat(sim, "b");
      await waitFor(() => sim.stats().running === 2);
      let cDone = false;
      const c = chat(sim, { model: "c", max_tokens: 2 }).then((r) => ((cDone = true), r));
      await waitFor(() => sim.stats().waiting === 1);

      // Free slots remain: requests that keep two adapters running start past the waiting one.
      expect((await chat(sim, { model: BASE, max_tokens: 2 })).status).toBe(200);
      expect((await chat(sim, { model: "a", max_tokens: 2 })).status).toBe(200);
      expect(cDone).toBe(false);
      expect(sim.stats()).toMatchObject({ running: 2, waiting: 1 });

      a.stop();
      const answered = await c;
      expect([answered.status, answered.body.model]).toEqual([200, "c"]);
      b.stop();
      await Promise.all([a.done, b.done]);
      await waitFor(() => sim.stats().cancelledTotal === 2);
      expect(sim.stats()).toMatchObject({ running: 0, waiting: 0 });
    } finally {
      await sim.close();
    }
  });
});

describe("LoRA metrics", () => {
  test("vllm:lora_requests_info as vLLM 0.14 exports it; the other series keep the base model's name", async () => {
    const sim = await loraSim(
      { enabled: true, maxLoras: 2, modules: ["a", "b", "c"].map((name) => ({ name, path: `/adapters/${name}` })) },
      { maxNumSeqs: 8, latency: SLOW_TOKENS },
    );
    try {
      const before = await scrape(sim);
      expect(before).toContain("# HELP vllm:lora_requests_info Running stats on lora requests.\n# TYPE vllm:lora_requests_info gauge\n");
      expect(before).not.toMatch(/^vllm:lora_requests_info\{/m);

      const started = Date.now() / 1000;
      const a = longChat(sim, "a");
      await waitFor(async () => metricValue(await scrape(sim), "vllm:generation_tokens_total") !== 0);
      const b = longChat(sim, "b");
      await waitFor(() => sim.stats().running === 2);
      const c = chat(sim, { model: "c", max_tokens: 2 });
      await waitFor(() => sim.stats().waiting === 1);
      await waitFor(async () => /running_lora_adapters="a,b"/.test(await scrape(sim)));

      const text = await scrape(sim);
      const series = text.split("\n").filter((l) => l.startsWith("vllm:lora_requests_info{"));
      // Labels in vLLM's order, no model_name; both lists name every adapter with a request generating, in the order
      // they got one going; "c", still queued, is in neither.
      expect(series.map((l) => l.replace(/\} \S+$/, "}"))).toEqual(
        expect.arrayContaining([
          'vllm:lora_requests_info{max_lora="2",waiting_lora_adapters="a",running_lora_adapters="a"}',
          'vllm:lora_requests_info{max_lora="2",waiting_lora_adapters="a,b",running_lora_adapters="a,b"}',
        ]),
      );
      expect(text).not.toMatch(/lora_adapters="[^"]*c/);
      // The value is the Unix time the combination was last seen: the newest is the current one.
      const newest = series.map((l) => ({ l, t: Number(l.split(" ").pop()) })).sort((x, y) => y.t - x.t)[0];
      expect(newest?.l).toContain('running_lora_adapters="a,b"');
      expect(newest?.t).toBeGreaterThanOrEqual(Math.floor(started));
      expect(newest?.t).toBeLessThanOrEqual(Date.now() / 1000 + 1);

      a.stop();
      b.stop();
      await Promise.all([a.done, b.done, c]);
      await waitFor(async () => {
        const after = (await scrape(sim)).split("\n").filter((l) => l.startsWith("vllm:lora_requests_info{"));
        const last = after.map((l) => ({ l, t: Number(l.split(" ").pop()) })).sort((x, y) => y.t - x.t)[0];
        return last?.l.includes('running_lora_adapters=""') === true;
      });

      // Every other series is labelled with the base model's name only, as vLLM's served_model_name.
      const final = await scrape(sim);
      expect(metricValue(final, "vllm:request_success_total", { model_name: BASE, finished_reason: "length" })).toBe(1);
      expect(final).not.toMatch(/model_name="(a|b|c)"/);
    } finally {
      await sim.close();
    }
  });

  test("without --enable-lora there is no vllm:lora_requests_info", async () => {
    const sim = await fastSim();
    try {
      expect(await scrape(sim)).not.toContain("vllm:lora_requests_info");
    } finally {
      await sim.close();
    }
  });
});
