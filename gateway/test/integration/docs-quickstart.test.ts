import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { ModelMetadataSchema } from "../../../infra/serving/folder-schemas";
import { SETTINGS_ENV } from "../../src/config/settings";
import { localFleet, startLocalFleet } from "../../../local/fleet";
import { codeSpans, docBlocks, namedBlocks, readDoc, REPO_ROOT, run, section, tableWith, type RunResult } from "../support/doc-blocks";

/**
 * docs/quickstart.md, run as a reader would: `npm start` as a real process tree, the `export` lines it prints
 * pasted in front of every shell command, every JavaScript snippet saved as a file and run with node. Two
 * liberties, both stated here: the `npm ci` of the first block is a no-op (this checkout is already installed,
 * and reinstalling would pull node_modules from under the running suite), and the gateway listens on a free
 * port (PORT=0) instead of 8080, so `127.0.0.1:8080` in the page is read as the port it got.
 */

const PAGE = readDoc("quickstart.md");
const BLOCKS = namedBlocks(PAGE);

/** Every block the page may have, and so every block this suite runs or checks. */
const HANDLED = [
  "start",
  "start-output",
  "start-own-key",
  "own-key-env",
  "curl-models",
  "curl-chat",
  "curl-stream",
  "curl-embeddings",
  "install",
  "openai-chat",
  "openai-stream",
  "openai-embeddings",
  "langchain",
  "llamaindex",
  "vercel-ai",
  "agents",
  "local-block-chat",
  "local-block-embedder",
  "sim-help",
];

const LOCAL_MODELS = ["bge-small-en-v1.5", "llama-3.3-70b-instruct", "qwen3-8b", "qwen3-8b-tool-use", "sim-chat", "sim-chat-adapter"];

function block(name: string): string {
  const b = BLOCKS.get(name);
  if (!b) throw new Error(`docs/quickstart.md has no block marked <!-- test: ${name} -->`);
  return b.text;
}

/** The environment of a fresh terminal: nothing of this suite's own gateway, OpenAI or jest settings. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(OPENAI_|GATEWAY_)/.test(k) || ["NODE_ENV", "PORT", "LOG_LEVEL", "JEST_WORKER_ID"].includes(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

interface LocalGateway {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** What it printed on stderr and stdout so far. */
  stderr(): string;
  stdout(): string;
  /** The `export …` lines it printed, as a reader pastes them. */
  exports: string;
  stop(): Promise<void>;
}

/** Runs a start block (`npm start` in it) as its own process group and waits for the banner. */
async function startFromBlock(text: string): Promise<LocalGateway> {
  const script = `npm() { if [ "$1" = ci ]; then return 0; fi; command npm "$@"; }\n${text}`;
  const child: ChildProcess = spawn("bash", ["-c", script], {
    cwd: REPO_ROOT,
    env: cleanEnv({ PORT: "0" }),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const closed = once(child, "close");
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 90 s:\n${err}`)), 90_000);
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /Base URL: (http:\/\/[^/\s]+)\/v1/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`npm start exited ${code}:\n${err}`)));
  });
  const exports = err
    .split("\n")
    .filter((l) => /^\s+export /.test(l))
    .map((l) => l.trim())
    .join("\n");
  return {
    origin,
    stderr: () => err,
    stdout: () => out,
    exports,
    stop: async () => {
      const kill = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          /* already gone */
        }
      };
      kill("SIGTERM");
      const timer = setTimeout(() => kill("SIGKILL"), 15_000);
      await closed; // every process of the group held the pipes: all of them are gone
      clearTimeout(timer);
    },
  };
}

/** The page's address for `npm start`, read as the one the test's gateway got. */
function atPort(text: string, gw: LocalGateway): string {
  return text.replaceAll("http://127.0.0.1:8080", gw.origin);
}

/** A shell command in a terminal where the reader pasted the printed `export` lines. */
function shell(gw: LocalGateway, command: string): Promise<RunResult> {
  return run("bash", ["-c", `${gw.exports}\n${atPort(command, gw)}`], { env: cleanEnv() });
}

function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l.trim() !== "");
}

describe("docs/quickstart.md", () => {
  it("marks every code block, and this suite handles exactly the marked names", () => {
    const unmarked = docBlocks(PAGE).filter((b) => !b.name);
    expect(unmarked.map((b) => `line ${b.line}`)).toEqual([]);
    expect([...BLOCKS.keys()].sort()).toEqual([...HANDLED].sort());
  });

  describe("against `npm ci && npm start`", () => {
    let gw: LocalGateway;
    let snippets: string;
    beforeAll(async () => {
      gw = await startFromBlock(block("start"));
      // Inside the repository, so the snippets' imports resolve from its node_modules, as in a reader's project.
      mkdirSync(join(REPO_ROOT, "node_modules", ".cache"), { recursive: true });
      snippets = mkdtempSync(join(REPO_ROOT, "node_modules", ".cache", "docs-quickstart-"));
    }, 120_000);
    afterAll(async () => {
      await gw?.stop();
      if (snippets) rmSync(snippets, { recursive: true, force: true });
    }, 30_000);

    /** Saves a JavaScript block as `<name>.mjs` and runs `node <name>.mjs` in the reader's terminal. */
    async function runSnippet(name: string): Promise<RunResult> {
      const file = join(snippets, `${name}.mjs`);
      writeFileSync(file, block(name));
      return ok(await shell(gw, `node ${JSON.stringify(file)}`));
    }

    it("prints the banner the page shows, with a generated key", () => {
      const printed = gw.stderr().split("\n");
      const from = printed.findIndex((l) => l.startsWith("AI Platform gateway is up"));
      const to = printed.findIndex((l) => l.startsWith("Base URL:"));
      expect(from).toBeGreaterThanOrEqual(0);
      const expected = lines(atPort(block("start-output"), gw));
      const actual = printed.slice(from, to + 1).filter((l) => l.trim() !== "");
      expect(actual).toHaveLength(expected.length);
      expected.forEach((line, i) => {
        // `<…>` in the page stands for what changes from run to run (the key, the metrics port).
        const pattern = line
          .split(/<[^>]+>/)
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join("[^\\s]+");
        expect(actual[i]).toMatch(new RegExp(`^${pattern}$`));
      });
      expect(gw.exports).toMatch(/^export OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1\nexport OPENAI_API_KEY=sk-[A-Za-z0-9_-]{43}$/);
    });

    it("the commands it prints work when pasted", async () => {
      const printed = gw.stderr().split("\n");
      const paste = printed.slice(printed.indexOf("Paste into a shell:") + 1);
      const curl = paste.slice(0, paste.findIndex((l) => l.trim() === "")).join("\n");
      const chat = JSON.parse(ok(await shell(gw, curl)).stdout) as { choices: { message: { content: string } }[] };
      expect(chat.choices[0]!.message.content.length).toBeGreaterThan(0);

      const nodeLine = printed[printed.findIndex((l) => l.startsWith("Or from Node")) + 1]!.trim();
      expect(nodeLine).toMatch(/^node -e /);
      expect(ok(await shell(gw, nodeLine)).stdout.trim().length).toBeGreaterThan(0);
    });

    it("curl: lists the local fleet's models", async () => {
      const list = JSON.parse(ok(await shell(gw, block("curl-models"))).stdout) as { data: { id: string; owned_by: string }[] };
      expect(list.data.map((m) => m.id).sort()).toEqual(LOCAL_MODELS);
      for (const m of list.data) expect(m.owned_by).toBe("ai-platform");
    });

    it("curl: a chat completion with the answer in choices[0].message.content", async () => {
      const r = JSON.parse(ok(await shell(gw, block("curl-chat"))).stdout) as {
        object: string;
        choices: { message: { content: string } }[];
        usage: { completion_tokens: number };
      };
      expect(r.object).toBe("chat.completion");
      expect(r.choices[0]!.message.content.trim().length).toBeGreaterThan(0);
      expect(r.usage.completion_tokens).toBeLessThanOrEqual(20);
    });

    it("curl: a stream of data lines, a usage line, then [DONE]", async () => {
      const events = ok(await shell(gw, block("curl-stream"))).stdout.split("\n\n").filter((e) => e.trim() !== "");
      expect(events.every((e) => e.startsWith("data: "))).toBe(true);
      expect(events[events.length - 1]).toBe("data: [DONE]");
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[]; usage?: unknown });
      const usage = chunks[chunks.length - 1]!;
      expect(usage.choices).toEqual([]);
      expect(usage.usage).toMatchObject({ completion_tokens: 5 });
      expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(5);
    });

    it("curl: an embedding of 384 numbers", async () => {
      const r = JSON.parse(ok(await shell(gw, block("curl-embeddings"))).stdout) as { data: { embedding: unknown[] }[] };
      expect(r.data[0]!.embedding).toHaveLength(384);
      expect(r.data[0]!.embedding.every((x) => typeof x === "number")).toBe(true);
    });

    it("openai SDK: prints a chat answer", async () => {
      const out = lines((await runSnippet("openai-chat")).stdout);
      expect(out).toHaveLength(1);
      expect(out[0]!.length).toBeGreaterThan(0);
    });

    it("openai SDK: streams the answer, then the usage", async () => {
      const out = (await runSnippet("openai-stream")).stdout;
      const m = /^(.+)\n\[(\d+) tokens\]\n$/s.exec(out);
      expect(m).not.toBeNull();
      expect(Number(m![2])).toBeGreaterThan(0);
    });

    it("openai SDK: prints `2 384` for two embeddings", async () => {
      expect((await runSnippet("openai-embeddings")).stdout).toBe("2 384\n");
    });

    it.each(["langchain", "llamaindex", "vercel-ai"])("%s: prints a chat answer, then 384", async (name) => {
      const out = lines((await runSnippet(name)).stdout);
      expect(out.length).toBeGreaterThanOrEqual(2);
      expect(out[0]!.trim().length).toBeGreaterThan(0);
      expect(out[out.length - 1]).toBe("384");
    });

    it("Agents SDK: a tool call, its result and an answer, over the Responses API, with no trace sent", async () => {
      const r = await runSnippet("agents");
      const out = lines(r.stdout);
      expect(out[0]).toBe("tool_call_item -> tool_call_output_item -> message_output_item");
      expect(out.slice(1).join(" ").trim().length).toBeGreaterThan(0);
      // NODE_ENV is unset here, as in a reader's terminal: the SDK would export traces unless told not to.
      expect(r.stderr).not.toMatch(/Tracing/);
    });

    it("writes one JSON line per request on its standard output", () => {
      const requests = gw
        .stdout()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { msg: string; path?: string });
      for (const path of ["/v1/models", "/v1/chat/completions", "/v1/embeddings"]) expect(requests.some((l) => l.msg === "request" && l.path === path)).toBe(true);
    });
  });

  it("with a key of one's own: the exported key is accepted", async () => {
    const gw = await startFromBlock(block("start-own-key"));
    try {
      expect(gw.stderr()).not.toContain("sk-local-0123456789abcdef");
      const r = ok(await run("bash", ["-c", `${atPort(block("own-key-env"), gw)}\n${block("curl-models")}`], { env: cleanEnv() }));
      expect((JSON.parse(r.stdout) as { data: { id: string }[] }).data.map((m) => m.id).sort()).toEqual(LOCAL_MODELS);
    } finally {
      await gw.stop();
    }
  }, 120_000);

  it("the install line names the packages the snippets were run with", () => {
    const words = block("install").trim().split(/\s+/);
    expect(words.slice(0, 2)).toEqual(["npm", "i"]);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as Record<string, Record<string, string>>;
    const installed = { ...pkg.dependencies, ...pkg.devDependencies };
    for (const name of words.slice(2)) expect(installed).toHaveProperty([name]);
    for (const b of docBlocks(PAGE).filter((x) => x.lang === "js")) {
      for (const m of b.text.matchAll(/from "([^"]+)"/g)) expect(words.slice(2)).toContain(m[1]);
    }
  });

  describe("the simulated fleet's knobs", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "docs-fleet-"));
      cpSync(join(REPO_ROOT, "deployments", "models"), dir, { recursive: true });
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const folders = {
      "local-block-chat": join("generative", "qwen3-8b", "model.yaml"),
      "local-block-embedder": join("embedder", "bge-small-en", "model.yaml"),
    } as const;

    it.each(Object.entries(folders))("%s keeps the folder's cluster settings and changes only `local:`", (name, file) => {
      const original = parseYaml(readFileSync(join(REPO_ROOT, "deployments", "models", file), "utf8")) as Record<string, unknown>;
      const edited = parseYaml(block(name)) as Record<string, unknown>;
      const { local: _a, ...clusterBefore } = original;
      const { local: _b, ...clusterAfter } = edited;
      expect(clusterAfter).toEqual(clusterBefore);
      expect(ModelMetadataSchema.safeParse(edited).success).toBe(true);
    });

    it("reach the simulated models: three slower replicas, and 1024-number embeddings", async () => {
      for (const [name, file] of Object.entries(folders)) writeFileSync(join(dir, file), block(name));
      const fleet = localFleet(dir);
      const chat = fleet.find((m) => m.id === "qwen3-8b")!;
      const embedder = fleet.find((m) => m.id === "bge-small-en-v1.5")!;
      expect(chat.replicas).toBe(3);
      expect(chat.simulator.latency).toEqual({ timeToFirstTokenMs: 200, interTokenLatencyMs: 40 });

      const running = await startLocalFleet([chat, embedder]);
      try {
        expect(running.simulators).toHaveLength(4);
        const embedderUrl = running.catalog.models.find((m) => m.id === "bge-small-en-v1.5")!.upstream as { endpoints: { url: string }[] };
        const res = await fetch(`${embedderUrl.endpoints[0]!.url}/v1/embeddings`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "bge-small-en-v1.5", input: "tides" }),
        });
        expect(((await res.json()) as { data: { embedding: number[] }[] }).data[0]!.embedding).toHaveLength(1024);
      } finally {
        await running.close();
      }
    });

    it("the table of `local:` keys is the schema's", () => {
      const local = ModelMetadataSchema.shape.local.unwrap();
      const rows = tableWith(section(PAGE, "The simulated fleet's knobs"), "Key");
      const keys = rows.map((r) => codeSpans(r["Key"] ?? "")[0]);
      expect(keys.sort()).toEqual(Object.keys(local.shape).sort());
    });

    it("every variable the page names is a gateway setting", () => {
      const named = codeSpans(section(PAGE, "The simulated fleet's knobs")).filter((s) => /^(PORT|LOG_LEVEL|GATEWAY_[A-Z_]+)$/.test(s));
      expect(named.length).toBeGreaterThanOrEqual(10);
      for (const v of named) expect(Object.values(SETTINGS_ENV)).toContain(v);
    });

    it("`npm run sim -- --help` lists the flags the page alludes to", async () => {
      const r = ok(await run("bash", ["-c", block("sim-help")], { env: cleanEnv() }));
      for (const flag of ["--failure-rate", "--startup-delay-ms", "--no-prefix-cache", "--max-model-len"]) expect(r.stdout).toContain(flag);
    });
  });
});
