// The `serving:` configuration namespace: one zod schema, validated in one pass so that `pulumi preview` prints
// every offending key at once (same error style as `monitoring:`).
import * as pulumi from "@pulumi/pulumi";
import * as path from "path";
import { z } from "zod";
import { chartArchivePath, REPO_ROOT } from "../platform/charts";
import { chartVersion, dnsLabel } from "../platform/schema-rules";
import { ConfigError, decodeStructured, doc, issuesToLines, readNamespace } from "../platform/config";
import { checkLabelDomain, LABEL_DOMAIN_KEY } from "../platform/labels";
import { CATEGORIES, CONFIG_NAMESPACE, DEFAULT_MODELS_DIR, DEFAULT_NAMESPACE, PINNED_CHARTS } from "./constants";
import { nodeGroupSchema } from "./folder-schemas";
import { DEFAULT_STARTUP_TIMEOUT, type StartupTimeout } from "./startup";

/** Keys that Pulumi passes JSON-encoded (lists, maps, booleans). */
const STRUCTURED_KEYS = new Set(["models", "gpuCapacity", "replicas", "parentGateway", "createNamespace", "startupTimeout", "awaitModelServers"]);

const modelRef = z.string().regex(new RegExp(`^(${CATEGORIES.join("|")})/[A-Za-z0-9._-]+$`), `must be <category>/<model> with <category> one of ${CATEGORIES.join(", ")}`);
const httpUrl = (example: string) => z.url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` });

export const servingSchema = z
  .strictObject({
    models: z
      .array(modelRef)
      .refine((l) => new Set(l).size === l.length, "must not list a model twice")
      .meta(doc("Models to deploy, as `<category>/<model>` folders under `modelsDir`. Removing one and applying stops serving it (the spec's removal).", ["generative/qwen3-8b", "embedder/bge-small-en"])),
    namespace: dnsLabel.default(DEFAULT_NAMESPACE).meta(doc("Namespace of the model servers.", "app-serving")),
    createNamespace: z.boolean().default(true).meta(doc("false when the namespace belongs to another stack (then it must exist).", false)),
    modelsDir: z.string().min(1).optional().meta(doc("Folder of the model folders; default `deployments/models` (relative paths are from the repository root).", "deployments/models")),
    modelServiceVersion: chartVersion.default(PINNED_CHARTS["llm-d-modelservice"].version).meta(doc("Version of the llm-d-modelservice chart (`charts/llm-d-modelservice-<version>.tgz`).", "v0.4.5")),
    inferencePoolVersion: chartVersion
      .default(PINNED_CHARTS.inferencepool.version)
      .meta(doc("Version of the GAIE inferencepool chart; the InferencePool CRDs come from the same GAIE release.", "v1.3.0")),
    modelServiceChartPath: z.string().min(1).optional().meta(doc("Override of the modelservice chart archive path.", "charts/llm-d-modelservice-v0.4.5.tgz")),
    inferencePoolChartPath: z.string().min(1).optional().meta(doc("Override of the inferencepool chart archive path.", "charts/inferencepool-v1.3.0.tgz")),
    gpuCapacity: z
      .record(z.union([z.literal("default"), nodeGroupSchema]), z.number().int().min(0, "must be a GPU count >= 0"))
      .default({})
      .meta(doc("GPUs per node group (`default` = the on-prem `workload: gpu` nodes). The preflight fails the preview when the referenced models request more.", { default: 8, "gpu-small": 2 })),
    replicas: z
      .record(modelRef, z.number().int().min(0, "must be a replica count >= 0"))
      .default({})
      .meta(doc("Per-model decode replicas, overriding the folder's `decode.replicas`; 0 scales a model to zero (first step of a swap on a full GPU).", { "generative/qwen3-8b": 0 })),
    parentGateway: z
      .strictObject({
        name: dnsLabel.meta(doc("Name of the Gateway.", "inference-gateway")),
        namespace: dnsLabel.optional().meta(doc("Its namespace (default: the serving namespace).", "gateway-system")),
        sectionName: dnsLabel.optional().meta(doc("The Gateway listener to attach to.", "http")),
      })
      .optional()
      .meta(doc("Gateway API Gateway (owned by another stack) the per-model HTTPRoutes attach to; no key, no HTTPRoutes.", { name: "inference-gateway", namespace: "gateway-system" })),
    inferenceGatewayUrl: httpUrl("http://inference-gateway.gateway-system.svc.cluster.local")
      .optional()
      .meta(doc("In-cluster URL of that Gateway; when set, the catalog sends each model to its InferencePool through it (pool mode).", "http://inference-gateway.gateway-system.svc.cluster.local")),
    gatewayProvider: z
      .enum(["none", "istio", "gke"])
      .optional()
      .meta(doc("GAIE `provider.name` for the cluster's Gateway implementation (`istio` also gets the EPP DestinationRule host).", "istio")),
    modelRegistryUrl: httpUrl("https://models.registry.internal/api/huggingface")
      .optional()
      .meta(doc("Hugging Face-compatible endpoint of the internal weights registry, set as HF_ENDPOINT on model servers that download `hf://` weights.", "https://models.registry.internal/api/huggingface")),
    startupTimeout: z
      .strictObject({
        floorMinutes: z.number().int().min(1).max(24 * 60).default(DEFAULT_STARTUP_TIMEOUT.floorMinutes).meta(doc("Minutes every model server gets.", 20)),
        secondsPerGiB: z.number().min(0).max(3600).default(DEFAULT_STARTUP_TIMEOUT.secondsPerGiB).meta(doc("Seconds more per GiB of the folder's `modelArtifacts.size` (download and load).", 30)),
      })
      .prefault({})
      .meta(doc("How long `pulumi up` waits for a model server to become ready (the provider's default is 10 minutes).", { floorMinutes: 30, secondsPerGiB: 45 })),
    awaitModelServers: z
      .boolean()
      .default(true)
      .meta(doc("false: `pulumi up` does not wait for model servers; the gateway lists a model once a replica is ready and answers 503 until then.", false)),
  })
  .superRefine(
    (value, ctx) => {
      // Runs even when other keys failed, so one message names every offending key.
      const v = value as Partial<typeof value>;
      const listed = new Set(Array.isArray(v.models) ? v.models : []);
      for (const key of Object.keys(v.replicas ?? {})) {
        if (!listed.has(key)) ctx.addIssue({ code: "custom", path: ["replicas", key], message: "is not in serving:models" });
      }
      if (v.inferenceGatewayUrl !== undefined && v.parentGateway === undefined) {
        ctx.addIssue({ code: "custom", path: ["inferenceGatewayUrl"], message: "needs serving:parentGateway (the HTTPRoutes that reach the pools)" });
      }
    },
    { when: () => true },
  );

export interface ServingConfig {
  readonly labelDomain: string;
  readonly models: readonly string[];
  readonly namespace: string;
  readonly createNamespace: boolean;
  readonly modelsDir: string;
  readonly charts: { readonly modelService: string; readonly inferencePool: string };
  /** The inferencepool chart's version: the InferencePool CRDs come from the same GAIE release. */
  readonly inferencePoolVersion: string;
  readonly gpuCapacity: Readonly<Record<string, number>>;
  readonly replicas: Readonly<Record<string, number>>;
  readonly parentGateway?: { readonly name: string; readonly namespace?: string; readonly sectionName?: string };
  readonly inferenceGatewayUrl?: string;
  readonly gatewayProvider?: "none" | "istio" | "gke";
  readonly modelRegistryUrl?: string;
  readonly startupTimeout: StartupTimeout;
  readonly awaitModelServers: boolean;
}

/**
 * Validates the raw namespace (strings as in PULUMI_CONFIG, without the `serving:` prefix) plus the shared
 * `platform:labelDomain` (stamped on every model-server pod). Throws one ConfigError naming every offending key.
 */
export function parseServingConfig(raw: Readonly<Record<string, string>>, labelDomain: string | undefined): ServingConfig {
  const input = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, STRUCTURED_KEYS.has(k) ? decodeStructured(v) : v]));
  const parsed = servingSchema.safeParse(input);
  const problems = parsed.success ? [] : issuesToLines(CONFIG_NAMESPACE, parsed.error.issues);
  problems.push(...checkLabelDomain(labelDomain));
  if (!parsed.success || problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, problems);
  const c = parsed.data;
  return {
    labelDomain: labelDomain as string,
    models: c.models,
    namespace: c.namespace,
    createNamespace: c.createNamespace,
    modelsDir: c.modelsDir === undefined ? DEFAULT_MODELS_DIR : path.resolve(REPO_ROOT, c.modelsDir),
    charts: {
      modelService: c.modelServiceChartPath ?? chartArchivePath("llm-d-modelservice", c.modelServiceVersion),
      inferencePool: c.inferencePoolChartPath ?? chartArchivePath("inferencepool", c.inferencePoolVersion),
    },
    inferencePoolVersion: c.inferencePoolVersion,
    gpuCapacity: c.gpuCapacity,
    replicas: c.replicas,
    parentGateway: c.parentGateway,
    inferenceGatewayUrl: c.inferenceGatewayUrl?.replace(/\/+$/, ""),
    gatewayProvider: c.gatewayProvider,
    modelRegistryUrl: c.modelRegistryUrl,
    startupTimeout: c.startupTimeout,
    awaitModelServers: c.awaitModelServers,
  };
}

/** Reads and validates the stack's `serving:` namespace. */
export function loadServingConfig(): ServingConfig {
  return parseServingConfig(readNamespace(CONFIG_NAMESPACE), pulumi.runtime.allConfig()[LABEL_DOMAIN_KEY]);
}
