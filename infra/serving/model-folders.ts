// Model folders: `<root>/<category>/<model>/{gaie-<slug>,ms-<slug>}/values.yaml` plus an optional `model.yaml`.
// Every folder under the root is loaded and checked (referenced or not), and every problem of every folder is
// reported at once, each naming its folder and the rule it breaks. No Pulumi here: `npm start` uses it too.
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import type { z } from "zod";
import type { Routing } from "../../gateway/src/config/catalog";
import { CATEGORIES, type Category, DEFAULT_MODELS_DIR, MODELSERVICE_DEFAULTS, POOL_PREFIX, SERVER_PREFIX, SIMULATOR_IMAGE_MARKER } from "./constants";
import {
  type InferencePoolValues,
  InferencePoolValuesSchema,
  type ModelLora,
  type ModelMetadata,
  ModelMetadataSchema,
  type ModelServerValues,
  ModelServerValuesSchema,
  slugSchema,
} from "./folder-schemas";
import { type GpuDemand, gpuDemand } from "./gpus";
import { flagValue, hasFlag, numericFlag } from "./server-args";
import { LORA_RULE, loraChecks } from "./lora";
import { isVllm, SERVER_RULES, serverChecks, tensorParallel } from "./server-checks";
import { type WeightsSource, weightsSource } from "./weights";
import { REPO_ROOT } from "../platform/charts";

export const METADATA_FILE = "model.yaml";
export const VALUES_FILE = "values.yaml";

/** The rules a folder can break; each message carries one of them. */
export const RULES = {
  category: "category",
  pair: "folder pair",
  slug: "one slug",
  parse: "values parse",
  metadata: "metadata",
  selector: "pool selector",
  port: "serving port",
  containerPort: "container port",
  servedName: "served model name",
  concurrency: "concurrency",
  uniqueId: "unique id",
  uniqueSlug: "unique slug",
  lora: LORA_RULE,
  ...SERVER_RULES,
} as const;

/** One model folder, validated. */
export interface ModelDefinition {
  /** `<category>/<model>`: how `serving:models` references it. */
  readonly ref: string;
  readonly dir: string;
  readonly category: Category;
  readonly slug: string;
  /** The `model` clients send = `modelArtifacts.name` (the chart's `--served-model-name`). */
  readonly id: string;
  /** Where the weights come from (`modelArtifacts.uri`); not necessarily the same name as `id`. */
  readonly weights: string;
  /** Where the weights come from, as `modelArtifacts.uri` names it. */
  readonly weightsSource: WeightsSource;
  /** model.yaml `weights` (size, revision, gated, cache size); absent for models that load nothing. */
  readonly weightsInfo?: NonNullable<ModelMetadata["weights"]>;
  /** model.yaml `drainSeconds`: overrides serving:drainSeconds for this model. */
  readonly drainSeconds?: number;
  /** Size of the weights in GiB (model.yaml weights.sizeGiB), what the waits grow with. */
  readonly weightsGiB?: number;
  /** Served by vLLM (not the llm-d simulator). */
  readonly vllm: boolean;
  /** Tensor-parallel degree (`decode.parallelism.tensor`). */
  readonly tensorParallel: number;
  readonly ownedBy: string;
  readonly nodeGroup?: string;
  /** Port the pods serve the OpenAI API on (`routing.servicePort`), one of the pool's target ports. */
  readonly servingPort: number;
  /** Decode replicas as the folder sets them (`serving:replicas` can override). */
  readonly replicas: number;
  readonly gpus: GpuDemand;
  /** Gateway per-replica concurrency cap. */
  readonly maxConcurrency: number;
  /** vLLM `--enable-auto-tool-choice`: the model answers `tools` with tool calls. */
  readonly toolCalling: boolean;
  /** API group of the InferencePool the chart creates (HTTPRoute backendRefs name it). */
  readonly poolApiGroup: string;
  readonly routing?: Routing;
  readonly local: NonNullable<ModelMetadata["local"]>;
  /** model.yaml `lora`: the LoRA adapters served on this model, each under its own id (lora.ts). */
  readonly lora?: ModelLora;
  /** Args of the first decode container (the model server). */
  readonly serverArgs: readonly string[];
  /** The chart values exactly as in the folder (the values builders add the platform's part). */
  readonly serverValues: ModelServerValues;
  readonly poolValues: InferencePoolValues;
}

/** Every broken folder and rule, one line each; this message is what `pulumi preview` prints. */
export class ModelFolderError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid model folders (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ModelFolderError";
  }
}

/** How a folder is named in messages: relative to the repository when inside it. */
export function displayPath(dir: string): string {
  const rel = path.relative(REPO_ROOT, dir);
  return rel.startsWith("..") || path.isAbsolute(rel) ? dir : rel;
}

function subdirs(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

function zodLines(file: string, error: z.ZodError): string[] {
  return error.issues.map((i) => `${file}: ${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${i.message}`);
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** Reads a YAML file and validates it; problems name the file relative to the model folder. */
function readYaml<T>(file: string, label: string, schema: z.ZodType<T>): Parsed<T> {
  let doc: unknown;
  try {
    doc = parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    return { ok: false, problems: [`${label}: not readable YAML: ${(err as Error).message.split("\n")[0]}`] };
  }
  const parsed = schema.safeParse(doc ?? {});
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problems: zodLines(label, parsed.error) };
}

/** Target ports of the pool as the chart renders them (v1 `targetPorts`, v1alpha2 `targetPortNumber`; default 8000). */
export function poolTargetPorts(pool: InferencePoolValues): number[] {
  const p = pool.inferencePool;
  if (p.apiVersion === "inference.networking.x-k8s.io/v1alpha2") return [p.targetPortNumber ?? 8000];
  return (p.targetPorts ?? [{ number: 8000 }]).map((t) => t.number);
}

/** The port clients of the pod use: the routing sidecar's when the proxy is on, else vLLM's; both are servicePort. */
export function servingPort(ms: ModelServerValues): number {
  return ms.routing?.servicePort ?? MODELSERVICE_DEFAULTS.servicePort;
}

function proxyEnabled(ms: ModelServerValues): boolean {
  return ms.routing?.proxy?.enabled ?? MODELSERVICE_DEFAULTS.proxyEnabled;
}

/** The cross-release invariants llm-d relies on, and the platform's own, as `[rule] detail` lines. */
function crossChecks(ms: ModelServerValues, pool: InferencePoolValues, meta: ModelMetadata, slug: string, category: Category): string[] {
  const problems: string[] = [];
  const labels = ms.modelArtifacts.labels;
  for (const [k, v] of Object.entries(pool.inferencePool.modelServers.matchLabels)) {
    if (labels[k] !== v) {
      problems.push(
        `[${RULES.selector}] ${POOL_PREFIX}${slug} inferencePool.modelServers.matchLabels has ${k}=${v} but ${SERVER_PREFIX}${slug} modelArtifacts.labels ${
          labels[k] === undefined ? "lacks it" : `has ${k}=${labels[k]}`
        }: the pool would select no pod`,
      );
    }
  }
  const port = servingPort(ms);
  const targets = poolTargetPorts(pool);
  if (!targets.includes(port)) {
    problems.push(`[${RULES.port}] ${SERVER_PREFIX}${slug} routing.servicePort ${port} is not a target port of ${POOL_PREFIX}${slug} (${targets.join(", ")})`);
  }
  const server = ms.decode.containers[0];
  const args = server?.args ?? [];
  // With the proxy off vLLM itself listens on servicePort (chart "vllmPort"); a declared container port must agree.
  const declared = (server?.ports ?? []).map((p) => p.containerPort);
  if (!proxyEnabled(ms) && declared.length > 0 && !declared.includes(port)) {
    problems.push(`[${RULES.containerPort}] routing.proxy is off, so vLLM listens on routing.servicePort ${port}, but decode.containers[0].ports declares ${declared.join(", ")}`);
  }
  const command = server?.modelCommand ?? "custom";
  const served = flagValue(args, "--served-model-name");
  if (command !== "custom" && served !== undefined) {
    problems.push(`[${RULES.servedName}] the chart already passes --served-model-name ${ms.modelArtifacts.name} (modelArtifacts.name); remove it from decode.containers[0].args`);
  } else if (command === "custom" && served !== ms.modelArtifacts.name) {
    problems.push(`[${RULES.servedName}] modelCommand custom: decode.containers[0].args must pass --served-model-name ${ms.modelArtifacts.name} (modelArtifacts.name, the id clients send)`);
  }
  const maxNumSeqs = numericFlag(args, "--max-num-seqs");
  if (maxNumSeqs !== undefined && !(Number.isInteger(maxNumSeqs) && maxNumSeqs > 0)) {
    problems.push(`[${RULES.concurrency}] --max-num-seqs must be a positive integer, got ${flagValue(args, "--max-num-seqs")}`);
  } else if (maxNumSeqs === undefined && meta.maxConcurrency === undefined) {
    problems.push(`[${RULES.concurrency}] set --max-num-seqs in decode.containers[0].args (or maxConcurrency in ${METADATA_FILE}): it is the gateway's per-replica cap`);
  } else if (maxNumSeqs !== undefined && meta.maxConcurrency !== undefined && meta.maxConcurrency > maxNumSeqs) {
    problems.push(`[${RULES.concurrency}] ${METADATA_FILE} maxConcurrency ${meta.maxConcurrency} exceeds --max-num-seqs ${maxNumSeqs}`);
  }
  problems.push(...serverChecks(ms, meta, category));
  problems.push(...loraChecks(meta.lora, ms, pool, isVllm(ms)));
  return problems;
}

/** Loads one `<category>/<model>` folder; returns the definition or its problems (without the folder prefix). */
export function loadModelFolder(root: string, category: Category, model: string): Parsed<ModelDefinition> {
  const dir = path.join(root, category, model);
  const names = subdirs(dir);
  const pools = names.filter((n) => n.startsWith(POOL_PREFIX));
  const servers = names.filter((n) => n.startsWith(SERVER_PREFIX));
  const problems: string[] = [];
  const stray = names.filter((n) => !n.startsWith(POOL_PREFIX) && !n.startsWith(SERVER_PREFIX));
  if (stray.length > 0) problems.push(`[${RULES.pair}] unexpected folder ${stray.join(", ")} (only ${POOL_PREFIX}<slug> and ${SERVER_PREFIX}<slug>)`);
  if (pools.length !== 1 || servers.length !== 1) {
    const what = (prefix: string, found: string[]) => (found.length === 0 ? `no ${prefix}<slug> folder` : found.length > 1 ? `${found.length} ${prefix}<slug> folders (${found.join(", ")})` : "");
    const missing = [what(POOL_PREFIX, pools), what(SERVER_PREFIX, servers)].filter(Boolean).join(" and ");
    return { ok: false, problems: [...problems, `[${RULES.pair}] ${missing}; a model is exactly one ${POOL_PREFIX}<slug> and one ${SERVER_PREFIX}<slug>`] };
  }
  const poolDir = pools[0] as string;
  const serverDir = servers[0] as string;
  const slug = poolDir.slice(POOL_PREFIX.length);
  if (serverDir.slice(SERVER_PREFIX.length) !== slug) {
    return { ok: false, problems: [...problems, `[${RULES.slug}] ${poolDir} and ${serverDir} name different slugs`] };
  }
  const slugOk = slugSchema.safeParse(slug);
  if (!slugOk.success) problems.push(`[${RULES.slug}] slug "${slug}" ${slugOk.error.issues[0]?.message}`);

  const parseProblems: string[] = [];
  const values = <T>(sub: string, schema: z.ZodType<T>): T | undefined => {
    const file = path.join(dir, sub, VALUES_FILE);
    if (!fs.existsSync(file)) {
      problems.push(`[${RULES.pair}] ${sub}/${VALUES_FILE} is missing`);
      return undefined;
    }
    const r = readYaml(file, `${sub}/${VALUES_FILE}`, schema);
    if (!r.ok) parseProblems.push(...r.problems.map((p) => `[${RULES.parse}] ${p}`));
    return r.ok ? r.value : undefined;
  };
  const pool = values(poolDir, InferencePoolValuesSchema);
  const ms = values(serverDir, ModelServerValuesSchema);
  problems.push(...parseProblems);

  const metaFile = path.join(dir, METADATA_FILE);
  let meta: ModelMetadata = ModelMetadataSchema.parse({});
  if (fs.existsSync(metaFile)) {
    const r = readYaml(metaFile, METADATA_FILE, ModelMetadataSchema);
    if (r.ok) meta = r.value;
    else problems.push(...r.problems.map((p) => `[${RULES.metadata}] ${p}`));
  }
  if (!pool || !ms) return { ok: false, problems };
  problems.push(...crossChecks(ms, pool, meta, slug, category));
  if (problems.length > 0) return { ok: false, problems };

  const args = ms.decode.containers[0]?.args ?? [];
  return {
    ok: true,
    value: {
      ref: `${category}/${model}`,
      dir,
      category,
      slug,
      id: ms.modelArtifacts.name,
      weights: ms.modelArtifacts.uri,
      weightsSource: weightsSource(ms.modelArtifacts.uri),
      weightsInfo: meta.weights,
      drainSeconds: meta.drainSeconds,
      weightsGiB: meta.weights?.sizeGiB,
      vllm: isVllm(ms),
      tensorParallel: tensorParallel(ms),
      ownedBy: meta.ownedBy,
      nodeGroup: meta.nodeGroup,
      servingPort: servingPort(ms),
      replicas: ms.decode.replicas ?? MODELSERVICE_DEFAULTS.replicas,
      gpus: gpuDemand(ms),
      maxConcurrency: meta.maxConcurrency ?? (numericFlag(args, "--max-num-seqs") as number),
      // vLLM needs the flag; the llm-d simulator always answers `tools` with tool calls.
      toolCalling: hasFlag(args, "--enable-auto-tool-choice") || ms.decode.containers.some((c) => c.image.includes(SIMULATOR_IMAGE_MARKER)),
      poolApiGroup: (pool.inferencePool.apiVersion ?? "inference.networking.k8s.io/v1").split("/")[0] as string,
      routing: meta.routing,
      local: meta.local ?? {},
      ...(meta.lora ? { lora: meta.lora } : {}),
      serverArgs: args,
      serverValues: ms,
      poolValues: pool,
    },
  };
}

/** An adapter's name is an id clients send too: never a model's id, never another adapter's, in any folder. */
export function adapterNameProblems(models: readonly ModelDefinition[]): string[] {
  const ids = new Map(models.map((m) => [m.id, m]));
  const seen = new Map<string, { model: ModelDefinition; index: number }>();
  const problems: string[] = [];
  for (const m of models) {
    m.lora?.adapters.forEach((a, i) => {
      const field = `model.yaml lora.adapters[${i}].name "${a.name}"`;
      const model = ids.get(a.name);
      const other = seen.get(a.name);
      if (model) problems.push(`${displayPath(m.dir)}: [${RULES.uniqueId}] ${field} is the model id of ${displayPath(model.dir)}`);
      else if (other) problems.push(`${displayPath(m.dir)}: [${RULES.uniqueId}] ${field} is also lora.adapters[${other.index}] of ${displayPath(other.model.dir)}`);
      else seen.set(a.name, { model: m, index: i });
    });
  }
  return problems;
}

/**
 * Loads every model folder under `root` (default `deployments/models`). Throws one ModelFolderError naming each
 * folder and rule when anything is wrong, including folders the stack does not reference.
 */
export function loadModelFolders(root: string = DEFAULT_MODELS_DIR): ModelDefinition[] {
  if (!fs.existsSync(root)) return [];
  const problems: string[] = [];
  const models: ModelDefinition[] = [];
  for (const category of subdirs(root)) {
    if (!(CATEGORIES as readonly string[]).includes(category)) {
      problems.push(`${displayPath(path.join(root, category))}: [${RULES.category}] must be one of ${CATEGORIES.join(", ")}`);
      continue;
    }
    for (const model of subdirs(path.join(root, category))) {
      const r = loadModelFolder(root, category as Category, model);
      const where = displayPath(path.join(root, category, model));
      if (r.ok) models.push(r.value);
      else problems.push(...r.problems.map((p) => `${where}: ${p}`));
    }
  }
  // Ids are what clients send and slugs name releases in one namespace: both must be unique.
  for (const [key, rule] of [["id", RULES.uniqueId], ["slug", RULES.uniqueSlug]] as const) {
    const seen = new Map<string, ModelDefinition>();
    for (const m of models) {
      const other = seen.get(m[key]);
      if (other) problems.push(`${displayPath(m.dir)}: [${rule}] ${key} "${m[key]}" is also used by ${displayPath(other.dir)}`);
      else seen.set(m[key], m);
    }
  }
  problems.push(...adapterNameProblems(models));
  if (problems.length > 0) throw new ModelFolderError(problems);
  // Generative models first: the first model is what examples and the quickstart use for chat.
  return models.sort((a, b) => CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category) || a.ref.localeCompare(b.ref));
}
