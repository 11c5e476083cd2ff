// `npm run model:add`: writes a model folder pair that the loader accepts, from a few choices. The output is
// checked with the same loader `pulumi preview` uses; a folder that would not load is removed again.
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { type Category, DEFAULT_MODELS_DIR, POOL_PREFIX, SERVER_PREFIX } from "./constants";
import { METADATA_FILE, VALUES_FILE, type ModelDefinition, ModelFolderError, displayPath, loadModelFolder } from "./model-folders";
import { FAMILY_NAMES, type FamilyName, MODEL_FAMILIES, type ModelFamily } from "./families";
import { slugSchema } from "./folder-schemas";
import { LLMD_INFERENCE_SIM, VLLM } from "./model-server-facts";

export const VLLM_IMAGE = VLLM.image;
export const SIMULATOR_IMAGE = LLMD_INFERENCE_SIM.image;
export const EPP_IMAGE = { name: "llm-d-inference-scheduler", hub: "ghcr.io/llm-d", tag: "v0.5.0" } as const;
const PORT = 8000;

export interface ScaffoldOptions {
  readonly category: Category;
  /** Folder name under the category. */
  readonly model: string;
  /** Release slug; default: the folder name. */
  readonly slug?: string;
  /** Client-facing model id; default: the folder name. */
  readonly id?: string;
  /** Weights in the internal registry (`hf://org/name`, `s3://bucket/prefix` or `pvc://claim/path`); not with `simulated`. */
  readonly weights?: string;
  /** On-disk size of the weights in GiB: the cache volume and the startup waits are sized from it. */
  readonly weightsGiB?: number;
  /** The repository needs a token (serving:hfToken). */
  readonly gated?: boolean;
  /** Model family (families.ts): the tool-call and reasoning parsers follow from it. */
  readonly family?: FamilyName;
  /** The model's maximum context (its config's max_position_embeddings). */
  readonly contextLength?: number;
  /** vLLM --max-model-len; default the context, at most 32768 (KV cache must fit beside the weights). */
  readonly maxModelLen?: number;
  readonly image?: string;
  /** GPUs per replica (tensor parallel size); 0 = CPU (needs a vLLM CPU build as --image). Default 1, 0 when simulated. */
  readonly gpus?: number;
  /** The accelerator resource to request instead of whole GPUs: a MIG slice or a time-sliced share (docs/models.md). */
  readonly gpuResource?: string;
  readonly replicas?: number;
  readonly maxNumSeqs?: number;
  readonly nodeGroup?: string;
  readonly ownedBy?: string;
  /** vLLM tool calling (`--enable-auto-tool-choice` with the family's parser), generative only. */
  readonly tools?: boolean;
  /** The llm-d inference simulator instead of vLLM: no GPU, no weights. */
  readonly simulated?: boolean;
  /** Root of the model folders; default deployments/models. */
  readonly root?: string;
}

const probe = (p: string, period: number, failureThreshold?: number) => ({
  httpGet: { path: p, port: "vllm" },
  periodSeconds: period,
  ...(failureThreshold ? { failureThreshold } : {}),
});

function vllmArgs(o: ScaffoldOptions, maxNumSeqs: number): string[] {
  if (o.simulated) return ["--mode=random", `--max-num-seqs=${maxNumSeqs}`];
  const family: ModelFamily = o.family ? MODEL_FAMILIES[o.family] : {};
  const maxModelLen = o.maxModelLen ?? Math.min(o.contextLength ?? 32768, 32768);
  return [
    ...(o.category === "embedder" ? ["--runner=pooling"] : []),
    `--max-model-len=${maxModelLen}`,
    // An embedder needs little memory: a small share leaves the GPU (or its time-sliced share) to others.
    `--gpu-memory-utilization=${o.category === "embedder" ? "0.10" : "0.90"}`,
    `--max-num-seqs=${maxNumSeqs}`,
    ...(o.tools && o.category === "generative" && family.toolParser ? ["--enable-auto-tool-choice", `--tool-call-parser=${family.toolParser}`] : []),
    ...(o.category === "generative" && family.reasoningParser ? [`--reasoning-parser=${family.reasoningParser}`] : []),
    "--disable-uvicorn-access-log",
  ];
}

/** The three files of the folder, as objects (pure). */
export function scaffoldFiles(o: ScaffoldOptions): { slug: string; pool: object; server: object; metadata: object } {
  const slug = o.slug ?? o.model.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  const id = o.id ?? o.model;
  const gpus = o.gpus ?? (o.simulated ? 0 : 1);
  const maxNumSeqs = o.maxNumSeqs ?? (o.simulated ? 16 : 32);
  if (o.simulated && o.category === "embedder") {
    throw new Error(`--simulated serves chat only: llm-d-inference-sim ${LLMD_INFERENCE_SIM.version} has no /v1/embeddings. An embedder runs vLLM (--weights …); npm start simulates it locally`);
  }
  if (!o.simulated && !o.weights) throw new Error("--weights is required (hf://<org>/<name>, s3://<bucket>/<prefix> or pvc://<claim>/<path>), unless --simulated");
  if (!o.simulated && !o.weights?.startsWith("pvc") && o.weightsGiB === undefined) {
    throw new Error("--weights-size is required: the size of the weights in GiB (the cache volume and the startup waits are sized from it)");
  }
  if (!o.simulated && (o.contextLength === undefined || o.family === undefined)) {
    throw new Error(`--family (${FAMILY_NAMES.join(", ")}) and --context-length (the model's max_position_embeddings) are required for a vLLM model`);
  }
  if (!o.simulated && gpus === 0 && !o.image) {
    throw new Error("--gpus 0 runs vLLM on CPU: give --image with a vLLM CPU build (e.g. public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:<vLLM version>)");
  }
  const labels = { "llm-d.ai/inference-serving": "true", "llm-d.ai/model": slug };
  const pool = {
    inferenceExtension: { replicas: 1, image: { ...EPP_IMAGE }, pluginsConfigFile: "default-plugins.yaml", flags: { "kv-cache-usage-percentage-metric": "vllm:kv_cache_usage_perc" } },
    inferencePool: { apiVersion: "inference.networking.k8s.io/v1", modelServerType: "vllm", targetPorts: [{ number: PORT }], modelServers: { matchLabels: labels } },
  };
  const resource = o.gpuResource ?? "nvidia.com/gpu";
  const gpuLimits = gpus > 0 ? { [resource]: String(gpus) } : {};
  // Host memory: loading goes through it and /dev/shm (8 GiB per tensor-parallel GPU) counts against the limit.
  const cpu = o.simulated ? "500m" : String(Math.min(64, 8 * Math.max(1, gpus)));
  const memory = o.simulated ? "256Mi" : `${o.category === "embedder" ? 8 : 32 * Math.max(1, gpus)}Gi`;
  const server = {
    modelArtifacts: {
      name: id,
      uri: o.simulated ? "hf://random" : o.weights,
      mountPath: "/model-cache",
      labels,
    },
    multinode: false,
    accelerator: { type: gpus > 0 ? "nvidia" : "cpu", ...(o.gpuResource ? { resources: { nvidia: o.gpuResource } } : {}) },
    routing: { servicePort: PORT, proxy: { enabled: false } },
    decode: {
      create: true,
      replicas: o.replicas ?? 1,
      ...(gpus > 0 ? { parallelism: { tensor: gpus } } : {}),
      containers: [
        {
          name: "vllm",
          image: o.image ?? (o.simulated ? SIMULATOR_IMAGE : VLLM_IMAGE),
          modelCommand: o.simulated ? "imageDefault" : "vllmServe",
          args: vllmArgs(o, maxNumSeqs),
          ports: [{ containerPort: PORT, name: "vllm", protocol: "TCP" }],
          resources: {
            limits: { cpu, memory, ...gpuLimits },
            requests: { cpu: o.simulated ? "100m" : cpu, memory: o.simulated ? "64Mi" : memory, ...gpuLimits },
          },
          mountModelVolume: !o.simulated,
          // llm-d's images write vLLM's config and torch.compile caches under / (their HOME).
          ...(o.simulated ? {} : { volumeMounts: [{ name: "metrics-volume", mountPath: "/.config" }, { name: "torch-compile-cache", mountPath: "/.cache" }] }),
          // /health, not /v1/models: the platform gives vLLM an API key, which /v1 paths require. The startup
          // budget is set by the platform from the weights size (startup.ts).
          ...(o.simulated ? {} : { startupProbe: probe("/health", 10) }),
          readinessProbe: probe("/health", 5),
          livenessProbe: probe("/health", 10),
        },
      ],
      ...(o.simulated ? {} : { volumes: [{ name: "metrics-volume", emptyDir: {} }, { name: "torch-compile-cache", emptyDir: {} }] }),
    },
    prefill: { create: false },
  };
  const metadata = {
    ownedBy: o.ownedBy ?? "ai-platform",
    ...(o.nodeGroup ? { nodeGroup: o.nodeGroup } : {}),
    ...(o.family ? { family: o.family } : {}),
    ...(o.contextLength ? { contextLength: o.contextLength } : {}),
    ...(o.weightsGiB !== undefined ? { weights: { sizeGiB: o.weightsGiB, ...(o.gated ? { gated: true } : {}) } } : {}),
  };
  return { slug, pool, server, metadata };
}

function header(text: string): string {
  return text
    .split("\n")
    .map((l) => `# ${l}`)
    .join("\n");
}

/** Writes the folder pair and returns the loaded definition; refuses to overwrite and rolls back a folder that would not load. */
export function scaffoldModel(o: ScaffoldOptions): ModelDefinition {
  const root = o.root ?? DEFAULT_MODELS_DIR;
  const dir = path.join(root, o.category, o.model);
  if (fs.existsSync(dir)) throw new Error(`${displayPath(dir)} already exists`);
  const files = scaffoldFiles(o);
  const slugOk = slugSchema.safeParse(files.slug);
  if (!slugOk.success) throw new Error(`slug "${files.slug}" ${slugOk.error.issues[0]?.message} (choose one with --slug)`);
  const write = (rel: string, comment: string, doc: object) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), `${header(comment)}\n${stringify(doc)}`);
  };
  write(`${POOL_PREFIX}${files.slug}/${VALUES_FILE}`, "GAIE inferencepool chart values (v1.3.0). Generated by npm run model:add; edit freely.", files.pool);
  write(`${SERVER_PREFIX}${files.slug}/${VALUES_FILE}`, "llm-d-modelservice chart values (v0.4.5). modelArtifacts.name is the model id clients send.", files.server);
  write(METADATA_FILE, "Platform metadata (docs/models.md \"model.yaml\").", files.metadata);

  const loaded = loadModelFolder(root, o.category, o.model);
  const clash = loaded.ok ? duplicateOf(root, loaded.value) : undefined;
  if (!loaded.ok || clash) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new ModelFolderError(loaded.ok ? [`${displayPath(dir)}: ${clash}`] : loaded.problems.map((p) => `${displayPath(dir)}: ${p}`));
  }
  return loaded.value;
}

/** Another loadable folder with the same id or slug (folders that do not load are the loader's business). */
function duplicateOf(root: string, def: ModelDefinition): string | undefined {
  for (const category of ["generative", "embedder"] as const) {
    const catDir = path.join(root, category);
    if (!fs.existsSync(catDir)) continue;
    for (const model of fs.readdirSync(catDir)) {
      if (path.join(catDir, model) === def.dir || !fs.statSync(path.join(catDir, model)).isDirectory()) continue;
      const other = loadModelFolder(root, category, model);
      if (!other.ok) continue;
      if (other.value.id === def.id) return `[unique id] id "${def.id}" is also used by ${displayPath(other.value.dir)} (choose another with --id)`;
      if (other.value.slug === def.slug) return `[unique slug] slug "${def.slug}" is also used by ${displayPath(other.value.dir)} (choose another with --slug)`;
    }
  }
  return undefined;
}
