// `npm run model:add`: writes a model folder pair that the loader accepts, from a few choices. The output is
// checked with the same loader `pulumi preview` uses; a folder that would not load is removed again.
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { type Category, DEFAULT_MODELS_DIR, POOL_PREFIX, SERVER_PREFIX } from "./constants";
import { METADATA_FILE, VALUES_FILE, type ModelDefinition, ModelFolderError, displayPath, loadModelFolder } from "./model-folders";
import { slugSchema } from "./folder-schemas";

export const VLLM_IMAGE = "ghcr.io/llm-d/llm-d-cuda:v0.5.0";
export const SIMULATOR_IMAGE = "ghcr.io/llm-d/llm-d-inference-sim:v0.6.1";
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
  /** Weights in the internal registry (`hf://org/name` or `pvc://claim/path`); not needed with `simulated`. */
  readonly weights?: string;
  readonly image?: string;
  /** GPUs per replica (tensor parallel size); 0 = CPU. Default 1, 0 when simulated. */
  readonly gpus?: number;
  readonly replicas?: number;
  readonly maxNumSeqs?: number;
  readonly nodeGroup?: string;
  readonly ownedBy?: string;
  /** vLLM tool calling (`--enable-auto-tool-choice --tool-call-parser=<parser>`), generative only. */
  readonly toolCallParser?: string;
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
  return [
    ...(o.category === "embedder" ? ["--runner=pooling"] : []),
    "--gpu-memory-utilization=0.90",
    `--max-num-seqs=${maxNumSeqs}`,
    ...(o.toolCallParser && o.category === "generative" ? ["--enable-auto-tool-choice", `--tool-call-parser=${o.toolCallParser}`] : []),
    "--disable-uvicorn-access-log",
  ];
}

/** The three files of the folder, as objects (pure). */
export function scaffoldFiles(o: ScaffoldOptions): { slug: string; pool: object; server: object; metadata: object } {
  const slug = o.slug ?? o.model.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  const id = o.id ?? o.model;
  const gpus = o.gpus ?? (o.simulated ? 0 : 1);
  const maxNumSeqs = o.maxNumSeqs ?? (o.simulated ? 16 : 32);
  if (!o.simulated && !o.weights) throw new Error("--weights is required (hf://<org>/<name> or pvc://<claim>/<path> in the internal registry), unless --simulated");
  const labels = { "llm-d.ai/inference-serving": "true", "llm-d.ai/model": slug };
  const pool = {
    inferenceExtension: { replicas: 1, image: { ...EPP_IMAGE }, pluginsConfigFile: "default-plugins.yaml", flags: { "kv-cache-usage-percentage-metric": "vllm:kv_cache_usage_perc" } },
    inferencePool: { apiVersion: "inference.networking.k8s.io/v1", modelServerType: "vllm", targetPorts: [{ number: PORT }], modelServers: { matchLabels: labels } },
  };
  const gpuLimits = gpus > 0 ? { "nvidia.com/gpu": String(gpus) } : {};
  const server = {
    modelArtifacts: {
      name: id,
      uri: o.simulated ? "hf://random" : o.weights,
      size: o.simulated ? "5Mi" : "20Gi",
      mountPath: "/model-cache",
      labels,
    },
    multinode: false,
    accelerator: { type: gpus > 0 ? "nvidia" : "cpu" },
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
            limits: { cpu: o.simulated ? "500m" : "8", memory: o.simulated ? "256Mi" : "32Gi", ...gpuLimits },
            requests: { cpu: o.simulated ? "100m" : "4", memory: o.simulated ? "64Mi" : "32Gi", ...gpuLimits },
          },
          mountModelVolume: !o.simulated,
          // Weights download and warm-up can take minutes: the startup probe allows 20.
          ...(o.simulated ? {} : { startupProbe: probe("/v1/models", 10, 120) }),
          readinessProbe: probe("/v1/models", 5),
          livenessProbe: probe("/health", 10),
        },
      ],
    },
    prefill: { create: false },
  };
  const metadata = { ownedBy: o.ownedBy ?? "ai-platform", ...(o.nodeGroup ? { nodeGroup: o.nodeGroup } : {}) };
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
