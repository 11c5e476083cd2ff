// docs/operations.md followed literally, on a render. Each part's `pulumi config set` lines are applied (as the CLI
// applies them) to the stack file the part starts from, the program runs on Pulumi's mocks, and the API key the page
// then reads from the stack output is accepted by a real gateway on loopback that loads the keys file the stack
// rendered. The production stack file renders with the secrets it lists, and the day-2 claims that a render can
// show (what a rollback changes, what a destroy leaves) are checked against it.
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { ApiKeysFileSchema } from "../gateway/src/auth/api-keys";
import { startHarness } from "../gateway/test/support/harness";
import { KEYS_FILE, OBJECT_NAMES } from "../infra/gateway/constants";
import { REPO_ROOT } from "../infra/platform/charts";
import { applyConfigCommands, readStackDocument, type StackDocument, writeStackDocument } from "../infra/platform/config-commands";
import { readDoc } from "../infra/platform/docs-testing";
import { type ResourceRecord, revealSecrets, runWithMocks } from "../infra/platform/mocks";
import { parseStackYaml } from "../infra/platform/stack-config";

const PROJECT = "ai-platform";
const PROD_EXAMPLE = path.join(REPO_ROOT, "stacks", "examples", "Pulumi.prod.yaml");
/**
 * The shell variables a script exports (`export A=… B=…`), each standing for what the operator put there: a command
 * that uses a variable the page never exports fails, as it would in the operator's shell.
 */
function exported(script: string): Record<string, string> {
  const names = [...script.matchAll(/^export\s+(.*)$/gm)].flatMap((m) => [...(m[1] as string).matchAll(/(?:^|\s)([A-Z_][A-Z0-9_]*)=/g)].map((n) => n[1] as string));
  return Object.fromEntries(names.map((n) => [n, `${n.toLowerCase()}-as-exported`]));
}

const page = readDoc("operations.md");

/** The text under a `## ` heading, up to the next one. */
function part(heading: string): string {
  const start = page.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`operations.md has no "## ${heading}"`);
  const end = page.indexOf("\n## ", start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

/** Every ```bash block of a text, in order, as one script. */
const shell = (text: string) => [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");

/** `jq -r '.apiKeys.dev'` on the line that reads `name`: the path the page reads from the `gateway` output. */
function jqPath(script: string, name: RegExp): string[] {
  const line = script.split("\n").find((l) => name.test(l) && /pulumi stack output gateway/.test(l));
  const expr = line && /jq -r '(\.[\w.]+)'/.exec(line)?.[1];
  if (!expr) throw new Error(`no "pulumi stack output gateway … | jq -r '.…'" line for ${name}`);
  return expr.split(".").filter(Boolean);
}

interface Rendered {
  readonly resources: ResourceRecord[];
  readonly gateway: Record<string, unknown>;
}

async function render(doc: StackDocument): Promise<Rendered> {
  const stack = parseStackYaml(writeStackDocument(doc), PROJECT);
  const { resources, outputs } = await runWithMocks(
    async () => {
      const out = (await import("./program")).program().gateway;
      if (!out) throw new Error("the stack deploys no gateway");
      const keys = await new Promise<Record<string, string>>((resolve) => out.apiKeys.apply(resolve));
      return { ...out, apiKeys: keys };
    },
    { config: stack.config, secretKeys: stack.secretKeys },
  );
  return { resources, gateway: outputs as unknown as Record<string, unknown> };
}

function keysFileOf(resources: ResourceRecord[]) {
  const secret = resources.find((r) => r.type === "kubernetes:core/v1:Secret" && r.name === OBJECT_NAMES.keys);
  if (!secret) throw new Error("no keys Secret rendered");
  const data = revealSecrets(secret.inputs.stringData) as Record<string, string>;
  return ApiKeysFileSchema.parse(parse(data[KEYS_FILE] as string)).keys;
}

const dig = (value: unknown, keys: string[]): unknown => keys.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], value);

/** A real gateway with the rendered keys file in front of a simulator of `model`: what the key gets. */
async function answers(resources: ResourceRecord[], key: string, model: string): Promise<{ models: number; chat: number; wrongKey: number; listed: string[] }> {
  const h = await startHarness([{ id: model }], { extraKeys: keysFileOf(resources) });
  try {
    const auth = (k: string) => ({ authorization: `Bearer ${k}` });
    const models = await h.fetch("/v1/models", { headers: auth(key) });
    const listed = ((await models.json()) as { data?: { id: string }[] }).data?.map((m) => m.id) ?? [];
    const chat = await h.fetch("/v1/chat/completions", { headers: auth(key), json: { model, messages: [{ role: "user", content: "Say hello" }] } });
    const wrong = await h.fetch("/v1/models", { headers: auth(`${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`) });
    return { models: models.status, chat: chat.status, wrongKey: wrong.status, listed };
  } finally {
    await h.close();
  }
}

describe("Part 1 (kind, simulated model), followed literally", () => {
  let rendered: Rendered;
  const script = shell(part("Part 1: a local cluster with the simulated model"));
  beforeAll(async () => {
    const doc = applyConfigCommands(script, readStackDocument(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.dev.yaml"), "utf8")), { project: PROJECT, env: exported(script) });
    rendered = await render(doc);
  });

  test("the key step 8 reads is in the stack output, and a gateway with the rendered keys file serves it", async () => {
    const key = dig(rendered.gateway, jqPath(script, /OPENAI_API_KEY=/));
    expect(typeof key).toBe("string");
    expect(await answers(rendered.resources, key as string, "sim-chat")).toEqual({ models: 200, chat: 200, wrongKey: 401, listed: ["sim-chat"] });
  });
});

describe("Part 2 (a GPU cluster), followed literally from the production stack file", () => {
  let rendered: Rendered;
  let doc: StackDocument;
  const script = shell(part("Part 2: a GPU cluster"));
  beforeAll(async () => {
    const copy = /^cp (\S+) Pulumi\.\w+\.yaml$/m.exec(script);
    expect(copy?.[1]).toBe("stacks/examples/Pulumi.prod.yaml");
    doc = applyConfigCommands(script, readStackDocument(fs.readFileSync(path.join(REPO_ROOT, copy?.[1] as string), "utf8")), { project: PROJECT, env: exported(script) });
    rendered = await render(doc);
  });

  test("the secrets the page sets are the ones the stack file lists", () => {
    const secrets = Object.entries(doc.config).filter(([, v]) => typeof v === "object" && v !== null && "secure" in v).map(([k]) => k);
    const listed = [...fs.readFileSync(PROD_EXAMPLE, "utf8").matchAll(/^#\s+pulumi config set --secret (\S+)/gm)].map((m) => m[1]);
    expect(secrets.sort()).toEqual([...listed].sort());
  });

  test("step 4: the external URL and the dev key from the stack output; a gateway with the rendered keys file serves it", async () => {
    expect(dig(rendered.gateway, jqPath(script, /OPENAI_BASE_URL=/))).toBe("https://llm.example.com/v1");
    const key = dig(rendered.gateway, jqPath(script, /OPENAI_API_KEY=/));
    expect(await answers(rendered.resources, key as string, "qwen3-8b")).toEqual({ models: 200, chat: 200, wrongKey: 401, listed: ["qwen3-8b"] });
  });

  test("what the page says the first up brings: the certificate it waits for, two models, shared limits, alerting", () => {
    const names = (type: string) => rendered.resources.filter((r) => r.type === type && !r.read).map((r) => r.name);
    expect(names("kubernetes:cert-manager.io/v1:Certificate")).toEqual(["gateway-tls"]);
    expect(names("kubernetes:core/v1:PersistentVolumeClaim").sort()).toEqual(["weights-bge-small-en", "weights-qwen3-8b"]);
    expect(names("kubernetes:apps/v1:Deployment")).toContain("gateway-redis");
    expect(names("kubernetes:core/v1:Secret")).toContain("metrics-alertmanager-auth");
    expect(names("kubernetes:core/v1:Namespace")).toContain("ai-gateway");
  });
});

describe("the production stack file", () => {
  const text = fs.readFileSync(PROD_EXAMPLE, "utf8");

  test("every key has a comment above it (a group of keys under one comment shares it)", () => {
    const lines = text.split("\n");
    const uncommented = lines.flatMap((line, i) => {
      if (!/^ {2}[\w-]+:[\w-]+:/.test(line)) return [];
      for (let j = i - 1; j >= 0; j--) {
        const above = lines[j] as string;
        if (/^ {2}#/.test(above)) return [];
        if (!/^ {2}[\w-]+:[\w-]+:/.test(above) && !/^ {3,}/.test(above)) return [line.trim()];
      }
      return [line.trim()];
    });
    expect(uncommented).toEqual([]);
  });

  test("renders with the secrets it lists, and holds no secret value of its own", async () => {
    const secretLines = text.split("\n").filter((l) => /^#\s+pulumi config set --secret/.test(l)).map((l) => l.replace(/^#\s+/, ""));
    const doc = applyConfigCommands(secretLines.join("\n"), readStackDocument(text), { project: PROJECT, env: exported(shell(part("Part 2: a GPU cluster"))) });
    expect(Object.values(readStackDocument(text).config).some((v) => typeof v === "object" && v !== null && "secure" in v)).toBe(false);
    const { resources } = await render(doc);
    expect(resources.filter((r) => r.type === "kubernetes:helm.sh/v4:Chart").map((r) => r.name).sort()).toEqual(
      ["collector", "gaie-bge-small-en", "gaie-qwen3-8b", "logstore", "metrics", "ms-bge-small-en", "ms-qwen3-8b", "viewer"],
    );
  });
});

describe("day 2, as a render shows it", () => {
  let base: StackDocument;
  let before: Rendered;
  beforeAll(async () => {
    const text = fs.readFileSync(PROD_EXAMPLE, "utf8");
    const secrets = text.split("\n").filter((l) => /^#\s+pulumi config set --secret/.test(l)).map((l) => l.replace(/^#\s+/, ""));
    base = applyConfigCommands(secrets.join("\n"), readStackDocument(text), { project: PROJECT, env: exported(shell(part("Part 2: a GPU cluster"))) });
    before = await render(base);
  });

  /** Resources whose inputs differ between two renders, or that only one has. */
  function changed(a: ResourceRecord[], b: ResourceRecord[]): string[] {
    const index = (rs: ResourceRecord[]) => new Map(rs.map((r) => [`${r.type}::${r.name}`, JSON.stringify(revealSecrets(r.inputs))]));
    const [x, y] = [index(a), index(b)];
    return [...new Set([...x.keys(), ...y.keys()])].filter((k) => x.get(k) !== y.get(k)).sort();
  }

  test("rolling back the gateway image changes the gateway Deployment only", async () => {
    const rolledBack = structuredClone(base);
    applyConfigCommands("pulumi config set gateway:image registry.example.com/ai-platform/gateway:0.0.9", rolledBack, { project: PROJECT });
    expect(changed(before.resources, (await render(rolledBack)).resources)).toEqual(["kubernetes:apps/v1:Deployment::gateway"]);
  });

  test("destroy leaves exactly what the page's table lists: the namespaces, the installed CRDs, the monitoring objects, the weights caches", () => {
    const retained = before.resources.filter((r) => r.retainOnDelete);
    const namespaceOf = (r: ResourceRecord) => (r.inputs.metadata as { namespace?: string } | undefined)?.namespace;
    const unexplained = retained.filter((r) => {
      if (r.type === "kubernetes:core/v1:Namespace") return !["monitoring", "app-serving", "ai-gateway"].includes(r.name);
      if (r.type === "kubernetes:yaml/v2:ConfigFile") return r.name !== "inferencePool-crds";
      if (r.type === "kubernetes:core/v1:PersistentVolumeClaim") return !r.name.startsWith("weights-");
      if (r.type === "kubernetes:helm.sh/v4:Chart") return r.inputs.namespace !== "monitoring";
      return namespaceOf(r) !== "monitoring";
    });
    expect(unexplained.map((r) => `${r.type}::${r.name}`)).toEqual([]);
    // Everything of the models and of the gateway (exposure included) goes, but the weights caches.
    const gone = before.resources.filter((r) => !r.retainOnDelete && r.type.startsWith("kubernetes:") && !r.read && ["app-serving", "ai-gateway"].includes(namespaceOf(r) ?? ""));
    expect(gone.map((r) => r.name)).toEqual(expect.arrayContaining(["gateway", "gateway-public", "gateway-tls", "gateway-api-keys"]));
    const destroy = part("Day 2").slice(part("Day 2").indexOf("### Destroy"));
    for (const row of ["Namespaces `monitoring`, `app-serving`, `ai-gateway`", "CRDs the stack installed", "Every monitoring object", "Weights caches `weights-<slug>`"]) expect(destroy).toContain(row);
  });
});
