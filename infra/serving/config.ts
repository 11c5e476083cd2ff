// The `serving:` configuration namespace: one zod schema, validated in one pass so that `pulumi preview` prints
// every offending key at once (same error style as `monitoring:`).
import * as pulumi from "@pulumi/pulumi";
import * as path from "path";
import { z } from "zod";
import { CHART_VERSION_PATTERN, chartArchivePath, REPO_ROOT } from "../platform/charts";
import { ConfigError, decodeStructured, issuesToLines, readNamespace } from "../platform/config";
import { checkLabelDomain, LABEL_DOMAIN_KEY } from "../platform/labels";
import { CATEGORIES, CONFIG_NAMESPACE, DEFAULT_MODELS_DIR, DEFAULT_NAMESPACE, PINNED_CHARTS } from "./constants";
import { nodeGroupSchema } from "./folder-schemas";
import { DEFAULT_STARTUP_TIMEOUT, type StartupTimeout } from "./startup";

/** Keys that Pulumi passes JSON-encoded (lists, maps, booleans). */
const STRUCTURED_KEYS = new Set(["models", "gpuCapacity", "replicas", "parentGateway", "createNamespace", "startupTimeout", "awaitModelServers"]);

const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "must be a DNS label (lowercase letters, digits and '-')");
const chartVersion = z.string().regex(CHART_VERSION_PATTERN, "must be a chart version such as v1.3.0");
const modelRef = z.string().regex(new RegExp(`^(${CATEGORIES.join("|")})/[A-Za-z0-9._-]+$`), `must be <category>/<model> with <category> one of ${CATEGORIES.join(", ")}`);
const httpUrl = (example: string) => z.url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` });

export const servingSchema = z
  .strictObject({
    /** Models to deploy, as `<category>/<model>` folders under modelsDir. Removing one and applying stops serving it. */
    models: z.array(modelRef).refine((l) => new Set(l).size === l.length, "must not list a model twice"),
    namespace: dnsLabel.default(DEFAULT_NAMESPACE),
    /** false when the namespace belongs to another stack. */
    createNamespace: z.boolean().default(true),
    /** Folder of the model folders; default deployments/models (relative paths are from the repository root). */
    modelsDir: z.string().min(1).optional(),
    modelServiceVersion: chartVersion.default(PINNED_CHARTS["llm-d-modelservice"].version),
    inferencePoolVersion: chartVersion.default(PINNED_CHARTS.inferencepool.version),
    modelServiceChartPath: z.string().min(1).optional(),
    inferencePoolChartPath: z.string().min(1).optional(),
    /** Accelerators per node group (`default` = on-prem `workload: gpu` nodes); the GPU preflight checks against it. */
    gpuCapacity: z.record(z.union([z.literal("default"), nodeGroupSchema]), z.number().int().min(0, "must be a GPU count >= 0")).default({}),
    /** Per-model decode replicas, overriding the folder's `decode.replicas` (0 = scaled to zero, e.g. before a GPU swap). */
    replicas: z.record(modelRef, z.number().int().min(0, "must be a replica count >= 0")).default({}),
    /** Gateway API Gateway the per-model HTTPRoutes attach to (owned by another stack). No key, no HTTPRoutes. */
    parentGateway: z.strictObject({ name: dnsLabel, namespace: dnsLabel.optional(), sectionName: dnsLabel.optional() }).optional(),
    /** In-cluster URL of that Gateway; when set, the catalog sends each model to its InferencePool through it. */
    inferenceGatewayUrl: httpUrl("http://inference-gateway.gateway-system.svc.cluster.local").optional(),
    /** GAIE `provider.name` for the cluster's Gateway implementation (istio also gets the EPP DestinationRule host). */
    gatewayProvider: z.enum(["none", "istio", "gke"]).optional(),
    /** HF-compatible endpoint of the internal weights registry: set as HF_ENDPOINT on model servers that download weights. */
    modelRegistryUrl: httpUrl("https://models.registry.internal/api/huggingface").optional(),
    /**
     * How long `pulumi up` waits for a model server to become ready: floorMinutes plus secondsPerGiB for every GiB
     * of the model's `modelArtifacts.size` (weights download and load).
     */
    startupTimeout: z
      .strictObject({
        floorMinutes: z.number().int().min(1).max(24 * 60).default(DEFAULT_STARTUP_TIMEOUT.floorMinutes),
        secondsPerGiB: z.number().min(0).max(3600).default(DEFAULT_STARTUP_TIMEOUT.secondsPerGiB),
      })
      .prefault({}),
    /** false: `pulumi up` does not wait for model servers (the gateway lists a model once a replica is ready). */
    awaitModelServers: z.boolean().default(true),
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
