// The model-serving part of the program: every model referenced in `serving:models`, each as an InferencePool
// release then a model-server release, and the model catalog the gateway reads (exported, see docs/models.md).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { CatalogInput } from "../gateway/src/config/catalog";
import type { Cluster } from "../infra/platform/cluster";
import { eppPodLabels, eppPodMetadataTransform, eppScrapeAnnotations, modelServerScrapeAnnotations } from "../infra/monitoring/serving-observability";
import { ConfigError } from "../infra/platform/config";
import { serviceUrl } from "../infra/platform/cluster-config";
import { SERVICES as MONITORING_SERVICES } from "../infra/monitoring/constants";
import { secretDigest } from "../infra/platform/secret-digest";
import { RETAIN } from "../infra/platform/retain";
import { podSecurityLabels } from "../infra/platform/pod-security";
import { selectorLabels as gatewaySelectorLabels } from "../infra/gateway/labels";
import {
  API_KEY_SECRET,
  assertGpuCapacity,
  buildCatalog,
  buildModelServerPolicy,
  catalogYaml,
  checkModelNeeds,
  CONFIG_NAMESPACE,
  DOWNLOAD_IDENTITY,
  gpuHeadroomWarnings,
  gpuUsage,
  HF_TOKEN_SECRET,
  loadModelFolders,
  MODEL_SERVER_POLICY_NAME,
  PART_OF,
  SERVING_POD_SECURITY_LEVEL,
  planModels,
  type PlannedModel,
  planRollouts,
  poolReleaseName,
  type Rollout,
  ServedModel,
  type ServingConfig,
  type ServingSecrets,
  WEIGHTS_S3_SECRET,
} from "../infra/serving";

/** Where the gateway runs when neither this program nor serving:gatewayNamespace says (gateway:namespace's default). */
const DEFAULT_GATEWAY_NAMESPACE = "ai-gateway";
const GATEWAY_POD_LABELS = gatewaySelectorLabels();

export interface ServingOutputs {
  readonly namespace: pulumi.Output<string> | string;
  /** `<category>/<model>` of every deployed model. */
  readonly models: string[];
  /** The gateway's catalog (CatalogSchema input form) and the same as YAML, ready for a ConfigMap. */
  readonly catalog: CatalogInput;
  readonly catalogYaml: string;
  /** GPUs per node group against `serving:gpuCapacity`: at every model's maxReplicas, and as created (what must fit). */
  readonly gpus: Record<string, { requested: number; base: number; capacity: number }>;
  /** How each model rolls (rollout.ts): RollingUpdate with the GPUs its surge borrows, or Recreate and why. */
  readonly rollouts: Record<string, Rollout>;
  /** The key the model servers require (secret): the gateway sends it upstream. */
  readonly upstreamApiKey: pulumi.Output<string>;
}

/** What the serving part will deploy, checked before anything is declared. */
export interface ServingPlan {
  readonly cfg: ServingConfig;
  readonly models: readonly PlannedModel[];
  /** The gateway's catalog of these models (CatalogSchema input form). */
  readonly catalog: CatalogInput;
  readonly rollouts: ReadonlyMap<string, Rollout>;
  /** Namespace of the gateway pods the NetworkPolicy admits. */
  readonly gatewayNamespace: string;
  /** Node groups that cannot hold the autoscaled models at maxReplicas (a report; gpu-preflight.ts). */
  readonly warnings: readonly string[];
}

/**
 * Folders (all of them), references, what each model needs from the stack, GPU capacity, then the catalog the gateway
 * will read: any problem fails here, before a resource exists. `clusterDomain` places the models' in-cluster
 * addresses; `gatewayNamespace` is the gateway part's namespace when this program deploys it.
 */
export function planServing(cfg: ServingConfig, clusterDomain: string, gatewayNamespace?: string): ServingPlan {
  const folders = loadModelFolders(cfg.modelsDir);
  const models = planModels(cfg.models, cfg.replicas, folders, cfg.modelsDir, cfg.replaces, cfg.autoscaling);
  const problems = checkModelNeeds(models, { hasHfToken: cfg.hasHfToken, hasS3: cfg.weightsS3 !== undefined, cacheAccessMode: cfg.weightsCache.accessMode });
  if (gatewayNamespace !== undefined && cfg.gatewayNamespace !== undefined && cfg.gatewayNamespace !== gatewayNamespace) {
    problems.push(`${CONFIG_NAMESPACE}:gatewayNamespace: is ${cfg.gatewayNamespace} but this program deploys the gateway in ${gatewayNamespace} (gateway:namespace); omit the key`);
  }
  if (problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, problems);
  assertGpuCapacity(models, cfg.gpuCapacity);
  const cached = new Set(models.filter((m) => m.def.weightsSource.kind !== "volume").map((m) => m.def.ref));
  const rollouts = planRollouts(models, { capacity: cfg.gpuCapacity, cacheAccessMode: cfg.weightsCache.accessMode, cached });
  const catalog = buildCatalog(models, { namespace: cfg.namespace, clusterDomain, inferenceGatewayUrl: cfg.inferenceGatewayUrl });
  return { cfg, models, catalog, rollouts, gatewayNamespace: cfg.gatewayNamespace ?? gatewayNamespace ?? DEFAULT_GATEWAY_NAMESPACE, warnings: gpuHeadroomWarnings(models, cfg.gpuCapacity) };
}

/** The CRDs the plan's objects need: the InferencePool kinds the folders use, and HTTPRoute when routes are on. */
export function servingCrdNeeds(plan: ServingPlan): { inferencePool: string[]; gatewayApi: boolean } {
  const groups = [...new Set(plan.models.map((m) => m.def.poolApiGroup))].sort();
  return { inferencePool: groups.map((g) => `inferencepools.${g}`), gatewayApi: plan.cfg.parentGateway !== undefined };
}

export interface ServingCrds {
  readonly inferencePool: pulumi.Resource[];
  readonly gatewayApi: pulumi.Resource[];
}

/**
 * What the metrics server and the log collector need from a model's releases (infra/monitoring's builders, wired
 * here): vLLM's scrape annotations on its pods, and on the endpoint picker's pod the platform labels, its scrape
 * annotations and metrics served without a token (the metrics server has none).
 */
function observabilityOf(model: PlannedModel, labelDomain: string) {
  const routing = model.def.serverValues.routing ?? {};
  const pool = poolReleaseName(model.def.slug);
  return {
    serverPodAnnotations: { decode: modelServerScrapeAnnotations(routing, "decode"), prefill: modelServerScrapeAnnotations(routing, "prefill") },
    poolTransforms: [eppPodMetadataTransform(pool, { labels: eppPodLabels(labelDomain, model.def), annotations: eppScrapeAnnotations() })],
    eppMetricsAuth: false,
  };
}

/** A Secret in the serving namespace holding one secret value per key. */
function secret(cluster: Cluster, name: string, namespace: pulumi.Input<string>, data: Record<string, pulumi.Input<string>>): k8s.core.v1.Secret {
  return new k8s.core.v1.Secret(
    name,
    { metadata: { name, namespace, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" } }, type: "Opaque", stringData: data },
    { provider: cluster.provider },
  );
}

export interface ServingDeployment {
  readonly cluster: Cluster;
  readonly plan: ServingPlan;
  /** servingNamespace's. */
  readonly namespace: pulumi.Output<string> | string;
  readonly secrets: ServingSecrets;
  readonly crds: ServingCrds;
  /** What the ScaledObjects of autoscaled models wait for: KEDA's CRDs and its release (or the checks of it). */
  readonly autoscaler?: pulumi.Resource[];
  /** The stack's key for secret digests on pod templates (platform/secret-digest.ts). */
  readonly digestKey: pulumi.Input<string>;
}

/**
 * The serving namespace: created (and kept: other things may live in it) unless `serving:createNamespace` is false.
 * Its name as an Output, so what lives in it (KEDA's RoleBinding too) waits for it.
 */
export function servingNamespace(cluster: Cluster, cfg: ServingConfig): pulumi.Output<string> | string {
  return cfg.createNamespace
    ? new k8s.core.v1.Namespace(
        cfg.namespace,
        { metadata: { name: cfg.namespace, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi", ...podSecurityLabels(SERVING_POD_SECURITY_LEVEL) } } },
        { ...RETAIN, provider: cluster.provider },
      ).metadata.name
    : cfg.namespace;
}

export function deployServing({ cluster, plan, namespace, secrets, crds, autoscaler, digestKey }: ServingDeployment): ServingOutputs {
  const { cfg, models: planned, catalog } = plan;
  for (const warning of plan.warnings) void pulumi.log.warn(`GPU preflight: ${warning}`);
  // KEDA's Prometheus triggers query the metrics server that scrapes the model servers (serving:monitoringNamespace).
  const metricsServer = serviceUrl(MONITORING_SERVICES.metrics.name, cfg.monitoringNamespace, MONITORING_SERVICES.metrics.port, cluster.domain);


  // The model servers' API key: made once, kept in the stack's state; the gateway holds the same value.
  const apiKey = new random.RandomPassword("model-server-api-key", { length: 48, special: false }).result;
  const apiKeySecret = secret(cluster, API_KEY_SECRET.name, namespace, { [API_KEY_SECRET.key]: apiKey });
  const apiKeyDigest = secretDigest(digestKey, "model-server-api-key", apiKey);
  const tokenSecret = secrets.hfToken ? secret(cluster, HF_TOKEN_SECRET, namespace, { HF_TOKEN: secrets.hfToken }) : undefined;
  const s3Secret =
    cfg.weightsS3 && secrets.weightsS3SecretKey
      ? secret(cluster, WEIGHTS_S3_SECRET, namespace, { AWS_ACCESS_KEY_ID: cfg.weightsS3.accessKeyId, AWS_SECRET_ACCESS_KEY: secrets.weightsS3SecretKey })
      : undefined;

  if (cfg.networkPolicy) {
    const policy = buildModelServerPolicy({
      namespace: cfg.namespace,
      labelDomain: cfg.labelDomain,
      gateway: { namespace: plan.gatewayNamespace, podLabels: GATEWAY_POD_LABELS },
      monitoringNamespace: cfg.monitoringNamespace,
      inferenceGatewayNamespace: cfg.parentGateway ? (cfg.parentGateway.namespace ?? cfg.namespace) : undefined,
      pools: planned.map((m) => poolReleaseName(m.def.slug)),
    });
    new k8s.networking.v1.NetworkPolicy(MODEL_SERVER_POLICY_NAME, { ...policy, metadata: { ...(policy.metadata as object), namespace } } as k8s.networking.v1.NetworkPolicyArgs, {
      provider: cluster.provider,
    });
  }

  const served = new Map<string, ServedModel>();
  // Outgoing models of a swap first, so the incoming ones can wait for them.
  const ordered = [...planned].sort((a, b) => Number(b.replaced) - Number(a.replaced));
  for (const model of ordered) {
    const outgoing = model.replaces ? served.get(model.replaces) : undefined;
    served.set(
      model.def.ref,
      new ServedModel(
        model.def.slug,
        {
          model,
          namespace,
          namespaceName: cfg.namespace,
          labelDomain: cfg.labelDomain,
          charts: cfg.charts,
          parentGateway: cfg.parentGateway,
          gatewayProvider: cfg.gatewayProvider,
          clusterDomain: cluster.domain,
          startupTimeout: cfg.startupTimeout,
          awaitModelServers: cfg.awaitModelServers,
          weights: {
            cache: cfg.weightsCache,
            downloadTimeout: cfg.downloadTimeout,
            registryUrl: cfg.modelRegistryUrl,
            tokenSecret: tokenSecret ? HF_TOKEN_SECRET : undefined,
            s3: cfg.weightsS3 && s3Secret ? { endpoint: cfg.weightsS3.endpoint, region: cfg.weightsS3.region, credentialsSecret: WEIGHTS_S3_SECRET, image: cfg.weightsS3.image } : undefined,
            identity: cluster.fixedUserIds ? DOWNLOAD_IDENTITY : undefined,
          },
          rollout: plan.rollouts.get(model.def.ref) as Rollout,
          drainSeconds: cfg.drainSeconds,
          responsesStore: cfg.responsesStore,
          apiKey: apiKeySecret,
          apiKeyDigest,
          after: outgoing ? [outgoing.server] : undefined,
          observability: observabilityOf(model, cfg.labelDomain),
          autoscaler: { serverAddress: metricsServer, gatewayNamespace: plan.gatewayNamespace, ready: autoscaler ?? [] },
          crds,
        },
        { providers: { kubernetes: cluster.provider }, dependsOn: [...(tokenSecret ? [tokenSecret] : []), ...(s3Secret ? [s3Secret] : [])] },
      ),
    );
  }

  return {
    namespace,
    models: planned.map((m) => m.def.ref),
    catalog,
    catalogYaml: catalogYaml(catalog),
    gpus: Object.fromEntries(gpuUsage(planned, cfg.gpuCapacity).map((u) => [u.pool, { requested: u.requested, base: u.base, capacity: u.capacity ?? 0 }])),
    rollouts: Object.fromEntries(plan.rollouts),
    upstreamApiKey: pulumi.secret(apiKey),
  };
}
