// zod schemas of the three files of a model folder: the two chart values files (only the keys the platform reads
// are typed; every other key passes through to the chart untouched) and the optional platform metadata file.
import { z } from "zod";
import { ModelIdSchema, RoutingSchema } from "../../gateway/src/config/catalog";
import { AutoscalingSchema } from "./autoscaling";
import { FAMILY_NAMES, type FamilyName } from "./families";
import { VLLM_LORA } from "./model-server-facts";
import { quantityGiB } from "./startup";
import { labelKey, labelMap, labelValue, port } from "../platform/schema-rules";

export { labelKey, labelValue };

const count = z.number().int().min(0);
const positive = z.number().int().min(1);
/** Release names are `gaie-<slug>` and `ms-<slug>`; the chart derives `<release>-epp` and `<release>-llm-d-modelservice-decode`. */
export const slugSchema = z.string().regex(/^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$/, "must be 1-40 lowercase letters, digits and '-', starting with a letter");
/** A node group name is stamped as a label value and used in a nodeSelector. */
export const nodeGroupSchema = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "must be a DNS label such as gpu-a100");

const quantity = z.union([z.string(), z.number()]);
export const ContainerSchema = z.looseObject({
  name: z.string().min(1).optional(),
  image: z.string().min(1),
  modelCommand: z.enum(["vllmServe", "imageDefault", "custom"]).optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  ports: z.array(z.looseObject({ containerPort: port, name: z.string().optional() })).optional(),
  resources: z.looseObject({ limits: z.record(z.string(), quantity).optional(), requests: z.record(z.string(), quantity).optional() }).optional(),
  mountModelVolume: z.boolean().optional(),
});
export type ContainerValues = z.infer<typeof ContainerSchema>;

const ParallelismSchema = z.looseObject({ tensor: positive.optional(), data: positive.optional(), dataLocal: positive.optional(), workers: positive.optional() });
export type Parallelism = z.infer<typeof ParallelismSchema>;

const RoleSchema = z.looseObject({
  create: z.boolean().optional(),
  replicas: count.optional(),
  parallelism: ParallelismSchema.optional(),
  nodeSelector: labelMap.optional(),
  tolerations: z.array(z.looseObject({})).optional(),
  containers: z.array(ContainerSchema).optional(),
});
export type RoleValues = z.infer<typeof RoleSchema>;

/** llm-d-modelservice chart values (`ms-<slug>/values.yaml`). */
export const ModelServerValuesSchema = z.looseObject({
  modelArtifacts: z.looseObject({
    /** The chart passes it as vLLM `--served-model-name`: it IS the model id clients send. */
    name: ModelIdSchema,
    /** Where the weights come from (the internal registry): hf://<org>/<name>, pvc://<claim>/<path>. */
    uri: z.string().regex(/^(hf|s3|pvc|pvc\+hf|oci):\/\/\S+$/, "must be hf://…, s3://…, pvc://…, pvc+hf://… or oci://…"),
    /** Volume for the weights (weights plus headroom); also what the startup wait of `pulumi up` grows with. */
    size: z
      .union([z.string(), z.number()])
      .refine((q) => quantityGiB(q) !== undefined, "must be a storage quantity such as 20Gi")
      .optional(),
    labels: labelMap.refine((m) => Object.keys(m).length > 0, "must not be empty (the InferencePool selects pods by these labels)"),
  }),
  // One pod per replica: the GPU preflight and the headless Service assume it (LeaderWorkerSet is not supported).
  multinode: z.literal(false, { error: "multinode (LeaderWorkerSet) is not supported by the platform" }).optional(),
  accelerator: z.looseObject({ type: z.string().min(1).optional(), resources: z.record(z.string(), z.string()).optional() }).optional(),
  routing: z
    .looseObject({
      servicePort: port.optional(),
      proxy: z.looseObject({ enabled: z.boolean().optional(), targetPort: port.optional() }).optional(),
    })
    .optional(),
  decode: RoleSchema.extend({
    containers: z.array(ContainerSchema).min(1, "decode needs at least one container"),
    /** The platform's (KEDA), read and removed before the chart sees the values (its schema allows only `enabled`). */
    autoscaling: AutoscalingSchema.optional(),
  }),
  prefill: RoleSchema.optional(),
});
export type ModelServerValues = z.infer<typeof ModelServerValuesSchema>;

export const POOL_API_VERSIONS = ["inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2"] as const;

/** GAIE inferencepool chart values (`gaie-<slug>/values.yaml`). */
export const InferencePoolValuesSchema = z.looseObject({
  inferencePool: z.looseObject({
    apiVersion: z.enum(POOL_API_VERSIONS).optional(),
    targetPorts: z.array(z.looseObject({ number: port })).min(1).optional(),
    targetPortNumber: port.optional(),
    modelServerType: z.enum(["vllm", "sglang", "triton-tensorrt-llm"]).optional(),
    modelServers: z.looseObject({
      matchLabels: labelMap.refine((m) => Object.keys(m).length > 0, "must not be empty (it would select every pod)"),
    }),
  }),
  provider: z.looseObject({ name: z.string().min(1) }).optional(),
});
export type InferencePoolValues = z.infer<typeof InferencePoolValuesSchema>;

/** `npm start` only: a model that starts with no simulated replica, wakes on its first request and stops when idle. */
export const LocalScaleToZeroSchema = z
  .strictObject({
    loadMs: z
      .number()
      .int()
      .min(0)
      .max(600_000)
      .default(5000)
      .meta({ description: "How long a woken replica takes to load before it answers, ms (the simulator's `startupDelayMs`)." }),
    idleStopMs: z
      .number()
      .int()
      .min(100)
      .max(86_400_000)
      .default(60_000)
      .meta({ description: "How long the model goes without a request before its replicas stop, ms." }),
  })
  .meta({ description: "The model starts with no replica: the first request wakes it, and it stops again when idle." });

/** One LoRA adapter served on the folder's base model, under its own model id. */
export const LoraAdapterSchema = z.strictObject({
  /** The model id clients send for it (vLLM's lora_name); unique across every folder, never a model id. */
  name: ModelIdSchema,
  /** Where its files come from, downloaded into the model's cache volume; vLLM models only (the simulator loads nothing). */
  source: z
    .string()
    .regex(/^(hf|s3):\/\/\S+$/, "must be hf://<org>/<name> or s3://<bucket>/<prefix>")
    .optional(),
  /** Hugging Face revision (branch, tag or commit) of an hf:// source. */
  revision: z.string().min(1).max(128).optional(),
  /** The adapter's LoRA rank (`r` in its adapter_config.json): at most `maxLoraRank`. */
  rank: positive.max(Math.max(...VLLM_LORA.ranks)),
  /** Loaded on every replica at start (`--lora-modules`); else loaded at run time when first asked for. */
  preload: z.boolean().default(false),
  /** Its files on disk in GiB, what the cache volume grows by (default 1). */
  sizeGiB: z.number().positive().max(1000).optional(),
});
export type LoraAdapter = z.infer<typeof LoraAdapterSchema>;

/** The base model's LoRA adapters and vLLM's LoRA limits (`--max-loras`, `--max-lora-rank`). */
export const LoraSchema = z.strictObject({
  /** Adapters in one batch (vLLM --max-loras): GPU slots, at least the preloaded adapters, and more with any on demand. */
  maxLoras: positive.default(VLLM_LORA.defaults.maxLoras),
  /** The largest rank vLLM reserves memory for (--max-lora-rank). */
  maxLoraRank: z
    .number()
    .refine((r) => (VLLM_LORA.ranks as readonly number[]).includes(r), `must be one of ${VLLM_LORA.ranks.join(", ")} (vLLM --max-lora-rank)`)
    .default(VLLM_LORA.defaults.maxLoraRank),
  adapters: z.array(LoraAdapterSchema).min(1, "declare at least one adapter"),
});
export type ModelLora = z.infer<typeof LoraSchema>;

/** Optional `model.yaml` next to the folder pair: what the gateway needs and the chart values do not say. */
export const ModelMetadataSchema = z.strictObject({
  /** `owned_by` in GET /v1/models. */
  ownedBy: z.string().min(1).max(128).default("ai-platform"),
  /** Cloud node group the pods run on; absent = on-prem GPU nodes (`workload: gpu`) or anywhere when no GPU. */
  nodeGroup: nodeGroupSchema.optional(),
  /** Gateway per-replica concurrency cap; defaults to vLLM `--max-num-seqs` and must not exceed it. */
  maxConcurrency: positive.optional(),
  /** Gateway routing of this model (strategy, saturation thresholds); gateway defaults otherwise. */
  routing: RoutingSchema.optional(),
  /** The model family: which tool-call and reasoning parsers vLLM needs (families.ts). Required for vLLM models. */
  family: z.enum(FAMILY_NAMES as [FamilyName, ...FamilyName[]], { error: `must be one of ${FAMILY_NAMES.join(", ")}` }).optional(),
  /** The longest context the model supports (its config's max_position_embeddings): --max-model-len may not exceed it. */
  contextLength: positive.optional(),
  /** The weights: how large they are (the cache volume and the waits are sized from it), which revision, whether gated. */
  weights: z
    .strictObject({
      /** On-disk size of the weights in GiB (the safetensors files plus tokenizer). */
      sizeGiB: z.number().positive().max(10_000),
      /** Hugging Face revision (branch, tag or commit) to download; default the repository's default branch. */
      revision: z.string().min(1).max(128).optional(),
      /** The repository needs a token (serving:hfToken). */
      gated: z.boolean().default(false),
      /** Size of the cache volume in GiB; default the weights plus 20 % and 2 GiB. */
      cacheGiB: z.number().int().positive().max(100_000).optional(),
    })
    .optional(),
  /** LoRA adapters served on this model, each under its own model id. */
  lora: LoraSchema.optional(),
  /** Seconds a stopping server keeps serving its in-flight requests (overrides serving:drainSeconds). */
  drainSeconds: z.number().int().min(0).max(3600).optional(),
  /** `npm start` only: how the local simulator imitates this model. */
  local: z
    .strictObject({
      replicas: z.number().int().min(1).max(4).optional(),
      embeddingDimensions: z.number().int().min(1).max(16384).optional(),
      timeToFirstTokenMs: z.number().nonnegative().optional(),
      interTokenLatencyMs: z.number().nonnegative().optional(),
      scaleToZero: LocalScaleToZeroSchema.optional(),
    })
    .optional(),
});
export type ModelMetadata = z.infer<typeof ModelMetadataSchema>;
