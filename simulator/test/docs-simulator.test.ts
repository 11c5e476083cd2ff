// docs/simulator.md against the simulator: the configuration table is the schema's, the flags are the CLI's (both
// ways, and each flag sets the field the page says), and the endpoints, metrics, fault headers and stats the page
// names are what a running simulator on loopback has and does.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { codeSpans, namedBlocks, readDoc, REPO_ROOT, section, tableWith } from "../../gateway/test/support/doc-blocks";
import { generatedSimulatorPage, SIMULATOR_PAGE } from "../../scripts/docs-simulator";
import { parseCliArgs } from "../src/cli-args";
import { LatencySchema, LoraSchema, PrefixCacheSchema, SimulatorConfigSchema } from "../src/config";
import { chat, chunksOf, fastSim, type Json, openStream, postJson, readEvents, scrape } from "./helpers";

const page = readDoc("simulator.md");

/** The text of a block marked `<!-- test: name -->`. */
function block(name: string): string {
  const b = namedBlocks(page).get(name);
  if (!b) throw new Error(`docs/simulator.md has no block marked <!-- test: ${name} -->`);
  return b.text;
}

const unquote = (cell: string) => cell.replace(/`/g, "");

/** The value at a dotted path (`latency.timeToFirstTokenMs`). */
function at(value: unknown, dotted: string): unknown {
  return dotted.split(".").reduce<unknown>((v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), value);
}

describe("docs/simulator.md: configuration", () => {
  test("the configuration table is the one the schema generates (run `npm run docs:simulator` after changing the schema)", () => {
    expect(fs.readFileSync(SIMULATOR_PAGE, "utf8")).toBe(generatedSimulatorPage(page));
  });

  test("the table has every field of the schema, with the default the schema fills in and a meaning", () => {
    const rows = tableWith(section(page, "Configuration"), "Field").map((r) => ({ field: unquote(r.Field as string), shown: r.Default, meaning: r.Meaning as string }));
    const nested = { latency: LatencySchema, prefixCache: PrefixCacheSchema, lora: LoraSchema } as const;
    const fields = Object.keys(SimulatorConfigSchema.shape).flatMap((k) =>
      k in nested ? [k, ...Object.keys(nested[k as keyof typeof nested].shape).map((sub) => `${k}.${sub}`)] : [k],
    );
    expect(rows.map((r) => r.field)).toEqual(fields);
    const defaults = SimulatorConfigSchema.parse({});
    for (const { field, shown, meaning } of rows) {
      const value = at(defaults, field);
      const expected = field in nested ? "" : value === undefined ? "unset" : `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
      expect({ field, shown }).toEqual({ field, shown: expected });
      expect({ field, meaning: meaning.length > 10 }).toEqual({ field, meaning: true });
    }
  });

  test("the example --config file is accepted as it is", () => {
    const text = block("sim-config");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sim-config-"));
    try {
      const file = path.join(dir, "sim.yaml");
      fs.writeFileSync(file, text);
      const { config } = parseCliArgs(["--config", file], {});
      expect(SimulatorConfigSchema.parse(config)).toEqual(SimulatorConfigSchema.parse(parseYaml(text)));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("docs/simulator.md: flags", () => {
  const flagRows = tableWith(section(page, "Standalone"), "Flag").map((r) => ({
    spellings: [unquote(r.Flag as string), ...codeSpans(r["Also spelt"] as string)].filter((s) => s.startsWith("-")),
    sets: codeSpans(r.Sets as string)[0],
  }));
  const tableFlags = new Set(flagRows.flatMap((r) => r.spellings.map((s) => s.split(" ")[0] as string)));
  /** The `npm run sim -- …` command of the `sim-command` block, as its argument list. */
  const command = block("sim-command")
    .replace(/\\\n\s*/g, " ")
    .trim()
    .replace(/^npm run sim -- /, "")
    .split(/\s+/);

  /** Whether the CLI knows a flag: an unknown one fails parsing as such, a known one at most lacks its value. */
  function accepted(flag: string): boolean {
    try {
      parseCliArgs([flag], {});
      return true;
    } catch (err) {
      return (err as { code?: string }).code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION";
    }
  }

  test("every flag that `--help` prints is in the table", () => {
    const help = spawnSync(process.execPath, ["--import", "tsx", "simulator/src/cli.ts", "--help"], { cwd: REPO_ROOT, encoding: "utf8" });
    expect(help.status).toBe(0);
    const printed = [...new Set([...help.stdout.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]))];
    expect(printed.length).toBeGreaterThan(20);
    expect(printed.filter((f) => !tableFlags.has(f))).toEqual([]);
  });

  test("every flag the table and the example commands name is one the CLI accepts", () => {
    expect(accepted("--no-such-flag")).toBe(false);
    const named = [...tableFlags, ...command.filter((a) => a.startsWith("-"))];
    expect(named.filter((f) => !accepted(f))).toEqual([]);
  });

  test("each flag, in each of its spellings, sets the field the table names", () => {
    const sample: Record<string, string> = { N: "3", D: "7ms", R: "0.5", P: "50", F: "2", NAME: "x", ADDR: "127.0.0.2", "generate|embed": "embed", SPEC: "a=/a", RE: "^/x" };
    const baseline = parseCliArgs([], {}).config;
    let checked = 0;
    for (const { spellings, sets } of flagRows) {
      if (sets === undefined) continue; // --config (any field), --help
      expect({ sets, before: at(baseline, sets) }).toEqual({ sets, before: undefined });
      for (const spelling of spellings) {
        const [flag, placeholder] = spelling.split(" ") as [string, string | undefined];
        const value = placeholder === undefined ? [] : [sample[placeholder] ?? `no sample value for ${placeholder}`];
        const { config } = parseCliArgs([flag, ...value], {});
        expect({ spelling, sets, set: at(config, sets) !== undefined }).toEqual({ spelling, sets, set: true });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(25);
  });

  test("the example command makes a valid configuration", () => {
    expect(command.length).toBeGreaterThan(10);
    expect(SimulatorConfigSchema.safeParse(parseCliArgs(command, {}).config).success).toBe(true);
  });
});

describe("docs/simulator.md: a running simulator", () => {
  test("the endpoints table lists exactly the routes the server registers, and each answers as the page says", async () => {
    const listed = tableWith(section(page, "Endpoints"), "Method").map((r) => `${r.Method} ${unquote(r.Path as string)}`);
    const server = fs.readFileSync(path.join(REPO_ROOT, "simulator", "src", "server.ts"), "utf8");
    // Express writes a path parameter `:id`; the page writes `{id}`, as OpenAI's and vLLM's references do.
    const registered = [...server.matchAll(/app\.(get|post)\("([^"]+)"/g)].map((m) => `${(m[1] as string).toUpperCase()} ${(m[2] as string).replace(/:(\w+)/g, "{$1}")}`);
    expect(listed.sort()).toEqual(registered.sort());
    const [generate, embed] = await Promise.all([fastSim({ lora: { enabled: true, runtimeUpdating: true, loadTimeMs: 0 } }), fastSim({ kind: "embed" })]);
    try {
      const stored = (await postJson(generate, "/v1/responses", { input: "hello", max_output_tokens: 2 })).body.id as string;
      // How each route is called, and the status the page promises for it.
      const calls: Record<string, [() => Promise<{ status: number }>, number]> = {
        "POST /v1/chat/completions": [() => chat(generate, { max_tokens: 2 }), 200],
        "POST /v1/completions": [() => postJson(generate, "/v1/completions", { prompt: "hello", max_tokens: 2 }), 200],
        "POST /v1/embeddings": [() => postJson(embed, "/v1/embeddings", { input: "hello" }), 200],
        "POST /v1/responses": [() => postJson(generate, "/v1/responses", { input: "hello", max_output_tokens: 2 }), 200],
        "GET /v1/responses/{id}": [() => fetch(`${generate.url}/v1/responses/${stored}`), 200],
        // Only background responses can be cancelled (the page says so), and those are not simulated.
        "POST /v1/responses/{id}/cancel": [() => postJson(generate, `/v1/responses/${stored}/cancel`, {}), 400],
        // Success bodies are plain text; the unload loads its adapter first.
        "POST /v1/load_lora_adapter": [() => fetch(`${generate.url}/v1/load_lora_adapter`, { method: "POST", body: JSON.stringify({ lora_name: "a", lora_path: "/a" }) }), 200],
        "POST /v1/unload_lora_adapter": [
          async () => {
            await fetch(`${generate.url}/v1/load_lora_adapter`, { method: "POST", body: JSON.stringify({ lora_name: "b", lora_path: "/b" }) });
            return fetch(`${generate.url}/v1/unload_lora_adapter`, { method: "POST", body: JSON.stringify({ lora_name: "b" }) });
          },
          200,
        ],
      };
      for (const route of listed) {
        const [method, url] = route.split(" ") as [string, string];
        const [call, expected] = calls[route] ?? (method === "GET" ? [() => fetch(`${generate.url}${url}`), 200] : [undefined, 0]);
        expect({ route, known: call !== undefined }).toEqual({ route, known: true });
        const res = await call?.();
        expect({ route, status: res?.status }).toEqual({ route, status: expected });
      }
      const deleted = await fetch(`${generate.url}/v1/responses/${stored}`, { method: "DELETE" });
      expect([deleted.status, deleted.headers.get("allow")]).toEqual([405, "GET"]);
    } finally {
      await Promise.all([generate.close(), embed.close()]);
    }
  });

  test("the paths listed as not simulated answer 404 in vLLM's envelope", async () => {
    const paths = codeSpans(section(page, "Not simulated")).filter((s) => s.startsWith("/"));
    expect(paths.length).toBeGreaterThan(2);
    const sim = await fastSim();
    try {
      for (const p of paths) {
        const res = await postJson(sim, p, {});
        expect({ p, status: res.status, code: res.body?.error?.code }).toEqual({ p, status: 404, code: 404 });
      }
    } finally {
      await sim.close();
    }
  });

  test("the metrics table names every metric /metrics exposes, with its type", async () => {
    const sim = await fastSim({ lora: { enabled: true } });
    try {
      const exposed = [...(await scrape(sim)).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
      const listed = tableWith(section(page, "Endpoints"), "Metric").map((r) => `${unquote(r.Metric as string)} ${r.Type}`);
      expect(listed.sort()).toEqual(exposed.sort());
    } finally {
      await sim.close();
    }
  });

  test("every request header the simulator reads is on the page", () => {
    const dir = path.join(REPO_ROOT, "simulator", "src");
    const sources = fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const read = sources.flatMap((f) => [...fs.readFileSync(path.join(dir, f), "utf8").matchAll(/(?:req\.get\(|tokenCountHeader\(req, )"([^"]+)"/g)].map((m) => m[1] as string));
    expect(read).toContain("x-return-error");
    const onPage = page.toLowerCase();
    expect(read.filter((h) => !onPage.includes(h))).toEqual([]);
  });

  // What each fault header on the page must do; a header the page names without a check here fails the test.
  const FAULT_CHECKS: Record<string, () => Promise<void>> = {
    "X-Return-Error": async () => {
      const sim = await fastSim();
      try {
        const forced = await chat(sim, {}, { "X-Return-Error": "503" });
        expect([forced.status, forced.body.error.code, forced.body.error.type]).toEqual([503, 503, "Service Unavailable"]);
        const embeddings = await fastSim({ kind: "embed" });
        try {
          expect((await postJson(embeddings, "/v1/embeddings", { input: "x" }, { "X-Return-Error": "429" })).status).toBe(429);
        } finally {
          await embeddings.close();
        }
        // Before the body is validated, but not before it is parsed.
        expect((await postJson(sim, "/v1/chat/completions", { messages: 3 }, { "X-Return-Error": "502" })).status).toBe(502);
        expect((await postJson(sim, "/v1/chat/completions", "{not json", { "X-Return-Error": "502" })).status).toBe(400);
        expect((await chat(sim, {}, { "X-Return-Error": "200" })).status).toBe(400);
        expect(sim.stats().failedTotal).toBe(2);
      } finally {
        await sim.close();
      }
    },
    "X-Drop-After-Tokens": async () => {
      const sim = await fastSim();
      try {
        const received: string[] = [];
        await expect(readEvents(await openStream(sim, { max_tokens: 20 }, { "X-Drop-After-Tokens": "3" }), (ev) => received.push(ev.data))).rejects.toThrow();
        expect(received).not.toContain("[DONE]");
        const chunks: Json[] = received.map((d) => JSON.parse(d));
        expect(chunks.map((c) => Object.keys(c.choices[0].delta)[0])).toEqual(["role", "content", "content", "content"]);
        expect(chunks.every((c) => c.choices[0].finish_reason === null)).toBe(true);
        // Without `stream`, no response at all.
        await expect(chat(sim, { max_tokens: 20 }, { "X-Drop-After-Tokens": "3" })).rejects.toThrow();
        expect((await chat(sim, {}, { "X-Drop-After-Tokens": "three" })).status).toBe(400);
      } finally {
        await sim.close();
      }
    },
    "X-Stream-Error-After-Tokens": async () => {
      const sim = await fastSim();
      try {
        const events = await readEvents(await openStream(sim, { max_tokens: 20 }, { "X-Stream-Error-After-Tokens": "2" }));
        expect(events[events.length - 1]?.data).toBe("[DONE]");
        const chunks = chunksOf(events);
        expect(chunks.filter((c) => c.choices?.[0]?.delta.content)).toHaveLength(2);
        expect(chunks[chunks.length - 1].error).toMatchObject({ type: "InternalServerError", code: 500 });
        expect((await chat(sim, {}, { "X-Stream-Error-After-Tokens": "2" })).status).toBe(500);
      } finally {
        await sim.close();
      }
    },
  };

  const faultHeaders = [...section(page, "Fault injection").matchAll(/header `(X-[A-Za-z-]+):/g)].map((m) => m[1] as string);

  test("the fault table names the headers", () => {
    expect(faultHeaders.length).toBeGreaterThan(2);
  });

  test.each(faultHeaders)("fault header %s does what the page says", async (header) => {
    const check = FAULT_CHECKS[header];
    expect({ header, checked: check !== undefined }).toEqual({ header, checked: true });
    await check?.();
  });

  test("the members and stats the page lists are the running simulator's", async () => {
    const sim = await fastSim();
    try {
      const spans = new Set(codeSpans(section(page, "In code")));
      const members = Object.keys(sim).map((k) => (typeof (sim as unknown as Record<string, unknown>)[k] === "function" ? `${k}()` : k));
      expect(members.filter((m) => !spans.has(m))).toEqual([]);
      expect(Object.keys(sim.stats()).filter((k) => !spans.has(k))).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});
