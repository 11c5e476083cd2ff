// The `serving:` configuration namespace: one zod schema, validated in one pass so that `pulumi preview` prints
// every offending key at once (same error style as `monitoring:`).
import * as pulumi from "@pulumi/pulumi";
import * as path from "path";
import { z } from "zod";
import { type ChartArchiveUse, chartArchivePath, REPO_ROOT } from "../platform/charts";
import { endpointRegionIssue } from "../platform/s3-endpoint";
import { chartVersion, DEFAULT_S3_REGION, dnsLabel, dnsSubdomain, nonEmpty, pinnedImage, s3Region } from "../platform/schema-rules";
import { ConfigError, doc, issuesToLines, readNamespace, schemaInput, secretPresence } from "../platform/config";
import { checkLabelDomain, LABEL_DOMAIN_KEY } from "../platform/labels";
import { CATEGORIES, CONFIG_NAMESPACE, DEFAULT_DRAIN_SECONDS, DEFAULT_MODELS_DIR, DEFAULT_NAMESPACE, PINNED_CHARTS } from "./constants";
import { type AutoscalingOverride, AutoscalingOverrideSchema } from "./autoscaling";
import { nodeGroupSchema } from "./folder-schemas";
import { DEFAULT_DOWNLOAD_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, type StartupTimeout } from "./startup";
import { DEFAULT_S3_DOWNLOADER_IMAGE } from "./weights";

/** Keys that Pulumi passes JSON-encoded (lists, maps, booleans). */
const STRUCTURED_KEYS = new Set([
  "models",
  "gpuCapacity",
  "replicas",
  "autoscaling",
  "replaces",
  "parentGateway",
  "createNamespace",
  "startupTimeout",
  "downloadTimeout",
  "awaitModelServers",
  "weightsCache",
  "weightsS3",
  "networkPolicy",
  "responsesStore",
  "drainSeconds",
]);

/** Keys that hold secrets: read only with `config.requireSecret`, never parsed as plain values. */
export const SECRET_KEYS = ["hfToken", "weightsS3SecretKey"] as const;
export const QUALIFIED_SECRET_KEYS: readonly string[] = SECRET_KEYS.map((k) => `${CONFIG_NAMESPACE}:${k}`);

const waitSchema = (what: string, floor: number, perGiB: number) =>
  z
    .strictObject({
      floorMinutes: z.number().int().min(1).max(24 * 60).default(floor).meta(doc(`Minutes every ${what} gets.`)),
      secondsPerGiB: z.number().min(0).max(3600).default(perGiB).meta(doc("Seconds more per GiB of `weights.sizeGiB`.")),
    })
    .prefault({});

const modelRef = z.string().regex(new RegExp(`^(${CATEGORIES.join("|")})/[A-Za-z0-9._-]+$`), `must be <category>/<model> with <category> one of ${CATEGORIES.join(", ")}`);
const httpUrl = (example: string) => z.url({ protocol: /^https?$/, error: `must be an http(s) URL such as ${example}` });

export const servingSchema = z
  .strictObject({
    models: z
      .array(modelRef)
      .refine((l) => new Set(l).size === l.length, "must not list a model twice")
      .meta(doc("Models to deploy: `<category>/<model>` folders under `modelsDir`.", ["generative/qwen3-8b", "embedder/bge-small-en"])),
    namespace: dnsLabel.default(DEFAULT_NAMESPACE).meta(doc("Namespace of the model servers.")),
    createNamespace: z.boolean().default(true).meta(doc("false when another stack owns the namespace.")),
    modelsDir: z.string().min(1).optional().meta(doc("Root of the model folders; default `deployments/models`.")),
    modelServiceVersion: chartVersion.default(PINNED_CHARTS["llm-d-modelservice"].version).meta(doc("llm-d-modelservice chart version.")),
    inferencePoolVersion: chartVersion
      .default(PINNED_CHARTS.inferencepool.version)
      .meta(doc("GAIE inferencepool chart version, and of the InferencePool CRDs.")),
    modelServiceChartPath: z.string().min(1).optional().meta(doc("Default `charts/llm-d-modelservice-<version>.tgz`.")),
    inferencePoolChartPath: z.string().min(1).optional().meta(doc("Default `charts/inferencepool-<version>.tgz`.")),
    gpuCapacity: z
      .record(z.union([z.literal("default"), nodeGroupSchema]), z.number().int().min(0, "must be a GPU count >= 0"))
      .default({})
      .meta(doc("GPUs per node group (`default`: the `workload: gpu` nodes), for the preflight ([models.md](models.md#gpu-capacity-and-the-preflight)).", { default: 8, "gpu-small": 2 })),
    replicas: z
      .record(modelRef, z.number().int().min(0, "must be a replica count >= 0"))
      .default({})
      .meta(doc("Per-model decode replicas, over the folder's `decode.replicas`.", { "generative/qwen3-8b": 0 })),
    autoscaling: z
      .record(modelRef, AutoscalingOverrideSchema)
      .default({})
      .meta(
        doc(
          "Per-model autoscaling, over the folder's `decode.autoscaling` ([models.md](models.md#autoscaling)).",
          { "generative/qwen3-8b": { minReplicas: 0, maxReplicas: 2 } },
        ),
      ),
    parentGateway: z
      .strictObject({
        name: dnsLabel.meta(doc("Its name.")),
        namespace: dnsLabel.optional().meta(doc("Its namespace; default the serving namespace.")),
        sectionName: dnsLabel.optional().meta(doc("The listener to attach to.", "http")),
      })
      .optional()
      .meta(doc("Another stack's Gateway the per-model HTTPRoutes attach to; none without it.", { name: "inference-gateway", namespace: "gateway-system" })),
    inferenceGatewayUrl: httpUrl("http://inference-gateway.gateway-system.svc.cluster.local")
      .optional()
      .meta(doc("That Gateway's in-cluster URL: pool mode ([models.md](models.md#the-catalog-the-gateway-reads)).", "http://inference-gateway.gateway-system.svc.cluster.local")),
    gatewayProvider: z
      .enum(["none", "istio", "gke"])
      .optional()
      .meta(doc("GAIE `provider.name` of the cluster's Gateway implementation.")),
    modelRegistryUrl: httpUrl("https://models.registry.internal/api/huggingface")
      .optional()
      .meta(doc("HF-compatible registry of `hf://` weights (HF_ENDPOINT); default the Hub.", "https://models.registry.internal/api/huggingface")),
    startupTimeout: waitSchema("model server", DEFAULT_STARTUP_TIMEOUT.floorMinutes, DEFAULT_STARTUP_TIMEOUT.secondsPerGiB).meta(
      doc(
        "`pulumi up`'s wait for a model server, and its startup probe's budget ([models.md](models.md#startup-and-shutdown)).",
      ),
    ),
    downloadTimeout: waitSchema("weights download", DEFAULT_DOWNLOAD_TIMEOUT.floorMinutes, DEFAULT_DOWNLOAD_TIMEOUT.secondsPerGiB).meta(
      doc("`pulumi up`'s wait for a weights download Job."),
    ),
    weightsCache: z
      .strictObject({
        accessMode: z
          .enum(["ReadWriteMany", "ReadWriteOnce"])
          .default("ReadWriteMany")
          .meta(doc("ReadWriteMany (NFS, CephFS, a filestore): one copy for every replica; ReadWriteOnce: one replica.")),
        storageClass: dnsSubdomain.optional().meta(doc("Default: the cluster's, which must offer the access mode.", "nfs-client")),
        retain: z.boolean().default(true).meta(doc("Keep a removed model's cache volume.")),
      })
      .prefault({})
      .meta(doc("The volumes `weights-<slug>` ([models.md](models.md#weights)).")),
    hfToken: secretPresence
      .optional()
      .meta(doc("Hugging Face token for gated weights, read only by the download Jobs.")),
    weightsS3: z
      .strictObject({
        endpoint: httpUrl("http://objectstore.app-shaide.svc.cluster.local:9000").meta(doc("Object store URL.")),
        accessKeyId: nonEmpty.meta(doc("Access key id.", "model-reader")),
        region: s3Region.default(DEFAULT_S3_REGION).meta(doc("Region the download Job signs for: on AWS the bucket's.", "eu-west-1")),
        image: pinnedImage.default(DEFAULT_S3_DOWNLOADER_IMAGE).meta(doc("The download Job's AWS CLI image, by tag (not latest) or digest.")),
      })
      .optional()
      .meta(doc("The object store of `s3://` weights ([models.md](models.md#publishing-weights-to-the-internal-registry)).", { endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", accessKeyId: "model-reader" })),
    weightsS3SecretKey: secretPresence.optional().meta(doc("Its secret key; required with `weightsS3`.")),
    drainSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(DEFAULT_DRAIN_SECONDS)
      .meta(doc("How long a stopping model server finishes what it has in flight ([models.md](models.md#startup-and-shutdown)); model.yaml `drainSeconds` overrides it.", 300)),
    replaces: z
      .record(modelRef, modelRef)
      .default({})
      .meta(
        doc(
          "Swap models on full GPUs, `{incoming: outgoing}` ([models.md](models.md#swapping-models-on-a-full-gpu)).",
          { "generative/llama-3.3-70b": "generative/qwen3-8b" },
        ),
      ),
    responsesStore: z
      .boolean()
      .default(false)
      .meta(
        doc(
          "Let vLLM store Responses API answers (`previous_response_id`, `GET /v1/responses/{id}`), in memory, never evicted, lost on restart.",
        ),
      ),
    networkPolicy: z
      .boolean()
      .default(true)
      .meta(doc("The model servers' NetworkPolicy ([models.md](models.md#who-reaches-the-model-servers)).")),
    gatewayNamespace: dnsLabel
      .optional()
      .meta(doc("The gateway's namespace, which the NetworkPolicy admits; default this program's gateway's, else ai-gateway.")),
    monitoringNamespace: dnsLabel.default("monitoring").meta(doc("The metrics server's namespace.")),
    awaitModelServers: z
      .boolean()
      .default(true)
      .meta(doc("false: `pulumi up` does not wait for model servers ([models.md](models.md#startup-and-shutdown)).")),
  })
  .superRefine(
    (value, ctx) => {
      // Runs even when other keys failed, so one message names every offending key.
      const v = value as Partial<typeof value>;
      const listed = new Set(Array.isArray(v.models) ? v.models : []);
      for (const key of Object.keys(v.replicas ?? {})) {
        if (!listed.has(key)) ctx.addIssue({ code: "custom", path: ["replicas", key], message: "is not in serving:models" });
      }
      for (const key of Object.keys(v.autoscaling ?? {})) {
        if (!listed.has(key)) ctx.addIssue({ code: "custom", path: ["autoscaling", key], message: "is not in serving:models" });
        if (v.replicas?.[key] !== undefined) ctx.addIssue({ code: "custom", path: ["replicas", key], message: "must be absent: serving:autoscaling sets this model's replicas (minReplicas, maxReplicas)" });
      }
      for (const [incoming, outgoing] of Object.entries(v.replaces ?? {})) {
        for (const ref of [incoming, outgoing]) if (!listed.has(ref)) ctx.addIssue({ code: "custom", path: ["replaces", incoming], message: `${ref} is not in serving:models` });
        if (incoming === outgoing) ctx.addIssue({ code: "custom", path: ["replaces", incoming], message: "a model cannot replace itself" });
        if (v.autoscaling?.[outgoing] !== undefined) ctx.addIssue({ code: "custom", path: ["autoscaling", outgoing], message: `must be absent: ${outgoing} is being replaced (serving:replaces) and runs at zero` });
        if ((v.replicas?.[outgoing] ?? 0) > 0) ctx.addIssue({ code: "custom", path: ["replicas", outgoing], message: `must be 0 or absent: ${outgoing} is being replaced (serving:replaces)` });
      }
      const outgoing = Object.values(v.replaces ?? {});
      for (const ref of new Set(outgoing.filter((o, i) => outgoing.indexOf(o) !== i))) ctx.addIssue({ code: "custom", path: ["replaces"], message: `${ref} is replaced by more than one model` });
      for (const ref of Object.keys(v.replaces ?? {})) if (outgoing.includes(ref)) ctx.addIssue({ code: "custom", path: ["replaces", ref], message: "is itself being replaced: swap one pair per apply" });
      const present = value as Record<string, unknown>;
      const regionIssue = v.weightsS3 ? endpointRegionIssue(v.weightsS3.endpoint, v.weightsS3.region, "weightsS3.endpoint") : undefined;
      if (regionIssue) ctx.addIssue({ code: "custom", path: ["weightsS3", "region"], message: regionIssue });
      if (v.weightsS3 !== undefined && present.weightsS3SecretKey === undefined) {
        ctx.addIssue({ code: "custom", path: ["weightsS3SecretKey"], message: "required with serving:weightsS3 (pulumi config set --secret serving:weightsS3SecretKey …)" });
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
  /** The two archives, with the keys that chose them (the preview checks they are there). */
  readonly chartArchives: readonly ChartArchiveUse[];
  readonly gpuCapacity: Readonly<Record<string, number>>;
  readonly replicas: Readonly<Record<string, number>>;
  /** `serving:autoscaling`: per model, the fields that win over the folder's `decode.autoscaling`. */
  readonly autoscaling: Readonly<Record<string, AutoscalingOverride>>;
  readonly parentGateway?: { readonly name: string; readonly namespace?: string; readonly sectionName?: string };
  readonly inferenceGatewayUrl?: string;
  readonly gatewayProvider?: "none" | "istio" | "gke";
  readonly modelRegistryUrl?: string;
  readonly startupTimeout: StartupTimeout;
  readonly downloadTimeout: StartupTimeout;
  readonly awaitModelServers: boolean;
  readonly weightsCache: { readonly accessMode: "ReadWriteMany" | "ReadWriteOnce"; readonly storageClass?: string; readonly retain: boolean };
  /** `serving:hfToken` is set (its value is read only as a secret Output, see loadServingSecrets). */
  readonly hasHfToken: boolean;
  readonly weightsS3?: { readonly endpoint: string; readonly accessKeyId: string; readonly region: string; readonly image: string };
  readonly drainSeconds: number;
  /** `{incoming: outgoing}` swaps. */
  readonly replaces: Readonly<Record<string, string>>;
  readonly networkPolicy: boolean;
  /** `serving:responsesStore`: vLLM stores Responses API answers. */
  readonly responsesStore: boolean;
  readonly gatewayNamespace?: string;
  readonly monitoringNamespace: string;
}

/** A serving chart's archive: the pinned file, or the operator's override of it. */
function servingChart(component: string, version: string, versionKey: string, overrideKey: string, override: string | undefined): ChartArchiveUse {
  const key = (k: string) => `${CONFIG_NAMESPACE}:${k}`;
  return {
    file: override ?? chartArchivePath(component, version),
    version,
    versionKey: key(versionKey),
    overrideKey: key(overrideKey),
    ...(override !== undefined ? { overriddenBy: key(overrideKey) } : {}),
  };
}

/**
 * Validates the raw namespace (strings as in PULUMI_CONFIG, without the `serving:` prefix) plus the shared
 * `platform:labelDomain` (stamped on every model-server pod). Throws one ConfigError naming every offending key.
 */
export function parseServingConfig(raw: Readonly<Record<string, string>>, labelDomain: string | undefined): ServingConfig {
  const input = schemaInput(raw, SECRET_KEYS, STRUCTURED_KEYS);
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
    chartArchives: [
      servingChart("llm-d-modelservice", c.modelServiceVersion, "modelServiceVersion", "modelServiceChartPath", c.modelServiceChartPath),
      servingChart("inferencepool", c.inferencePoolVersion, "inferencePoolVersion", "inferencePoolChartPath", c.inferencePoolChartPath),
    ],
    gpuCapacity: c.gpuCapacity,
    replicas: c.replicas,
    autoscaling: c.autoscaling,
    parentGateway: c.parentGateway,
    inferenceGatewayUrl: c.inferenceGatewayUrl?.replace(/\/+$/, ""),
    gatewayProvider: c.gatewayProvider,
    modelRegistryUrl: c.modelRegistryUrl,
    startupTimeout: c.startupTimeout,
    downloadTimeout: c.downloadTimeout,
    awaitModelServers: c.awaitModelServers,
    weightsCache: c.weightsCache,
    hasHfToken: c.hfToken !== undefined,
    weightsS3: c.weightsS3,
    drainSeconds: c.drainSeconds,
    replaces: c.replaces,
    networkPolicy: c.networkPolicy,
    responsesStore: c.responsesStore,
    gatewayNamespace: c.gatewayNamespace,
    monitoringNamespace: c.monitoringNamespace,
  };
}

/** Reads and validates the stack's `serving:` namespace. */
export function loadServingConfig(): ServingConfig {
  return parseServingConfig(readNamespace(CONFIG_NAMESPACE), pulumi.runtime.allConfig()[LABEL_DOMAIN_KEY]);
}

export interface ServingSecrets {
  readonly hfToken?: pulumi.Output<string>;
  readonly weightsS3SecretKey?: pulumi.Output<string>;
}

/** The secrets, only ever as secret Outputs. Call after `loadServingConfig` succeeded. */
export function loadServingSecrets(cfg: ServingConfig): ServingSecrets {
  const config = new pulumi.Config(CONFIG_NAMESPACE);
  return {
    hfToken: cfg.hasHfToken ? config.requireSecret("hfToken") : undefined,
    weightsS3SecretKey: cfg.weightsS3 ? config.requireSecret("weightsS3SecretKey") : undefined,
  };
}
