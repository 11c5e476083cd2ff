import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { parse as parseYaml } from "yaml";
import { hashApiKey } from "../../src/auth/api-keys";
import { parseKeysFile } from "../../src/auth/keys-file";
import { SETTINGS_ENV } from "../../src/config/settings";
import { parseCatalog } from "../../src/config/load-catalog";
import { VALIDATION_CODES } from "../../src/api/issue-messages";
import { codeSpans, docBlocks, namedBlocks, readDoc, REPO_ROOT, run, section, tableWith } from "../support/doc-blocks";
import { catalogueSamples } from "../support/error-catalogue";
import { startHarness, type Harness } from "../support/harness";

/**
 * docs/gateway-api.md against the code and a real gateway: the Errors table names every code the gateway can
 * send (and no other), the Limits section names only real settings with their real defaults, and every example
 * on the page is what the gateway answers.
 */

const PAGE = readDoc("gateway-api.md");
const BLOCKS = namedBlocks(PAGE);
const HANDLED = ["keys-file", "key-mint", "sse-example", "stream-error", "error-envelope", "aliases"];

function block(name: string): string {
  const b = BLOCKS.get(name);
  if (!b) throw new Error(`docs/gateway-api.md has no block marked <!-- test: ${name} -->`);
  return b.text;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/**
 * snake_case string literals (error types and codes) of every gateway source file that builds an ApiError, and the
 * validation codes (built from parts in api/issue-messages.ts, whose type lists them all).
 */
function errorLiteralsInSource(): Set<string> {
  const out = new Set<string>(VALIDATION_CODES);
  for (const file of sourceFiles(join(REPO_ROOT, "gateway", "src"))) {
    const text = readFileSync(file, "utf8");
    if (!text.includes("ApiError(")) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) && /^[a-z]+(_[a-z]+)+$/.test(node.text)) out.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true));
  }
  return out;
}

/** The code of every factory in api/errors.ts, by calling it. */
function catalogueCodes(): string[] {
  return catalogueSamples("m", "x", "code-from-caller")
    .map((e) => e.code)
    .filter((c): c is string => c !== null && c !== "code-from-caller");
}

describe("docs/gateway-api.md", () => {
  it("keeps `## Limits` and `## Errors` as headings of their own", () => {
    expect(PAGE).toMatch(/^## Limits$/m);
    expect(PAGE).toMatch(/^## Errors$/m);
  });

  it("the aliases example is a valid catalog section for the models it names", () => {
    const { aliases } = parseYaml(block("aliases")) as { aliases: { models: string[] }[] };
    const ids = [...new Set(aliases.flatMap((a) => a.models))];
    const models = ids.map((id) => ({ id, category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: "http://10.0.0.1:8000" }] } }));
    expect(parseCatalog({ models, aliases }).aliases).toEqual([
      { id: "chat", models: ["llama-3.3-70b-instruct", "qwen3-8b"], listed: true },
      { id: "chat-canary", models: ["qwen3-8b"], listed: false },
    ]);
  });

  it("marks every code block, and this suite handles exactly the marked names", () => {
    expect(docBlocks(PAGE).filter((b) => !b.name).map((b) => `line ${b.line}`)).toEqual([]);
    expect([...BLOCKS.keys()].sort()).toEqual([...HANDLED].sort());
  });

  describe("Errors", () => {
    const errorsSection = section(PAGE, "Errors");
    const rows = tableWith(errorsSection, "`code`");
    const documentedCodes = rows.flatMap((r) => codeSpans(r["`code`"]!));

    it("lists every code of the error catalogue (api/errors.ts)", () => {
      const codes = catalogueCodes();
      expect(codes.length).toBeGreaterThanOrEqual(11);
      for (const code of codes) expect(documentedCodes).toContain(code);
    });

    it("names every error type and code the gateway's sources can send", () => {
      const literals = errorLiteralsInSource();
      expect(literals).toContain("rate_limit_exceeded");
      expect(literals).toContain("upstream_stream_interrupted");
      const spans = codeSpans(errorsSection);
      for (const literal of literals) expect(spans).toContain(literal);
    });

    it("lists no code the gateway cannot send", () => {
      const known = errorLiteralsInSource();
      for (const code of documentedCodes) if (code !== "null") expect(known).toContain(code);
    });

    it("gives each row a status the code can have", () => {
      const statusOf: Record<string, number> = {};
      for (const e of catalogueSamples("m", "x")) if (e.code !== null) statusOf[e.code] = e.status;
      for (const row of rows) {
        for (const code of codeSpans(row["`code`"]!)) {
          if (statusOf[code] !== undefined) expect(row["Status"]).toContain(String(statusOf[code]));
        }
      }
    });
  });

  describe("Limits", () => {
    const limits = section(PAGE, "Limits");
    const envNames = new Set(Object.values(SETTINGS_ENV));

    it("names only variables that are gateway settings", () => {
      const named = codeSpans(limits).filter((s) => /^[A-Z][A-Z0-9_]{2,}$/.test(s));
      expect(named.length).toBeGreaterThanOrEqual(4);
      for (const v of named) expect(envNames).toContain(v);
    });

    it("lists every setting under its own environment variable (the values themselves are generated: gateway-docs.test.ts)", () => {
      const rows = tableWith(limits, "Environment variable");
      expect(rows.length).toBeGreaterThanOrEqual(10);
      for (const row of rows) {
        const [setting] = codeSpans(row["Setting"]!);
        const [env] = codeSpans(row["Environment variable"]!);
        expect([setting, env]).toEqual([setting, SETTINGS_ENV[setting as keyof typeof SETTINGS_ENV]]);
      }
    });
  });

  it("keys-file: the example entry is a valid keys file", () => {
    const [entry] = parseKeysFile(block("keys-file"), "docs/gateway-api.md");
    expect(entry).toMatchObject({ name: "team-a", models: ["qwen3-8b"], rpm: 60, tpm: 100000, expiresAt: "2027-06-30T00:00:00Z" });
  });

  it("key-mint: prints the key on stdout and its keys-file entry (hash only) on stderr", async () => {
    const r = await run("bash", ["-c", block("key-mint")]);
    expect(r.code).toBe(0);
    const key = r.stdout.trim().split("\n").pop()!;
    expect(key).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    const yaml = r.stderr.slice(r.stderr.indexOf("keys:"), r.stderr.indexOf("The key (shown once)"));
    const [entry] = parseKeysFile(yaml, "stderr");
    expect(entry).toEqual({ name: "team-a", sha256: hashApiKey(key), models: ["qwen3-8b"], rpm: 60, tpm: 100000, expiresAt: "2027-06-30T00:00:00Z" });
    expect(r.stderr).not.toContain(key);
    expect(parseYaml(yaml)).toBeTruthy();
  });

  describe("examples against a gateway", () => {
    let h: Harness;
    let broken: Harness;
    beforeAll(async () => {
      h = await startHarness([{ id: "qwen3-8b" }]);
      broken = await startHarness([{ id: "qwen3-8b", sim: { dropStreamAfterTokens: 1 } }]);
    });
    afterAll(async () => {
      await h?.close();
      await broken?.close();
    });

    /** The shape of a JSON value: its keys and the types of its leaves, recursively. */
    const shape = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(shape) : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : v === null ? null : typeof v;
    const events = (text: string) => text.split("\n\n").map((e) => e.trim()).filter((e) => e !== "");

    it("sse-example: the stream has the events, fields and framing the page shows", async () => {
      const res = await h.fetch("/v1/chat/completions", {
        json: { model: "qwen3-8b", messages: [{ role: "user", content: "hi" }], max_tokens: 1, stream: true, stream_options: { include_usage: true } },
      });
      expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      const real = events(await res.text());
      const documented = events(block("sse-example"));
      expect(real).toHaveLength(documented.length);
      documented.forEach((ev, i) => {
        expect(ev.startsWith("data: ")).toBe(true);
        if (ev === "data: [DONE]") expect(real[i]).toBe(ev);
        else expect(shape(JSON.parse(real[i]!.slice(6)))).toEqual(shape(JSON.parse(ev.slice(6))));
      });
    });

    it("stream-error: a model server that breaks off mid-stream gives exactly that event, then [DONE]", async () => {
      const res = await broken.fetch("/v1/chat/completions", { json: { model: "qwen3-8b", messages: [{ role: "user", content: "hi" }], stream: true } });
      expect(res.status).toBe(200);
      const real = events(await res.text());
      expect(real.slice(-2)).toEqual(events(block("stream-error")));
    });

    it("error-envelope: the example is the gateway's answer to temperature 9", async () => {
      const res = await h.fetch("/v1/chat/completions", { json: { model: "qwen3-8b", messages: [{ role: "user", content: "hi" }], temperature: 9 } });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.json()).toEqual(JSON.parse(block("error-envelope")));
    });
  });
});
