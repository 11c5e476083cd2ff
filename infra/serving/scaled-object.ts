// The KEDA ScaledObject of an autoscaled model (keda.sh/v1alpha1, KEDA 2.20): it targets the model's decode
// Deployment and reads three Prometheus queries from the platform's metrics server. KEDA moves the Deployment
// between 0 and 1 itself and hands 1..N to the HorizontalPodAutoscaler it creates (`keda-hpa-<name>`).
// KEDA's Prometheus scaler runs an instant query and refuses an answer of more than one series ("returned multiple
// elements"), so each query aggregates to one series and falls back to `vector(0)` when nothing matches (a model
// at zero replicas exports no vLLM series). Only the gateway's count can wake a model at zero: it exists while the
// model sleeps.
import { platformLabelKeys } from "../platform/labels";
import type { Autoscaling } from "./autoscaling";
import { DECODE_ROLE_LABEL, SERVER_PREFIX } from "./constants";
import type { ModelDefinition } from "./model-folders";
import type { PlannedModel } from "./plan";
import { modelObjectName, platformPodLabels } from "./values";

export const SCALED_OBJECT_API_VERSION = "keda.sh/v1alpha1";
const CHART_NAME = "llm-d-modelservice";

/**
 * The decode Deployment's name as the modelservice chart (v0.4.5 `_helpers.tpl` fullname, decodeName) makes it:
 * `fullnameOverride`, else the release name when it contains the chart name, else `<release>-<chart>`, cut to 55
 * characters without a trailing '-', then `-decode`.
 */
export function decodeDeploymentName(def: Pick<ModelDefinition, "slug" | "serverValues">): string {
  const values = def.serverValues as { fullnameOverride?: unknown; nameOverride?: unknown };
  const release = `${SERVER_PREFIX}${def.slug}`;
  const cut = (s: string) => s.slice(0, 55).replace(/-+$/, "");
  const name = typeof values.nameOverride === "string" && values.nameOverride !== "" ? values.nameOverride : CHART_NAME;
  const full =
    typeof values.fullnameOverride === "string" && values.fullnameOverride !== "" ? cut(values.fullnameOverride) : release.includes(name) ? cut(release) : cut(`${release}-${name}`);
  return `${full}-decode`;
}

/** A pod label as the metrics server's `kubernetes-pods` job names it (labelmap of sanitized pod label names). */
export function podLabelOnSeries(key: string): string {
  return key.replace(/[^a-zA-Z0-9_]/g, "_");
}

export interface ScalerQueryArgs {
  readonly namespace: string;
  readonly labelDomain: string;
  /** Namespace of the gateway pods, whose per-model counts wake the model. */
  readonly gatewayNamespace: string;
}

/** The PromQL of each trigger; each returns exactly one series. */
export function scalerQueries(def: ModelDefinition, args: ScalerQueryArgs): { waiting: string; kvCache: string; demand: string } {
  const pods = `namespace="${args.namespace}", ${podLabelOnSeries(platformLabelKeys(args.labelDomain).modelSlug)}="${def.slug}", ${podLabelOnSeries(DECODE_ROLE_LABEL.key)}="${DECODE_ROLE_LABEL.value}"`;
  const gateway = `namespace="${args.gatewayNamespace}", model="${def.id}"`;
  return {
    waiting: `sum(vllm:num_requests_waiting{${pods}}) or vector(0)`,
    kvCache: `avg(vllm:kv_cache_usage_perc{${pods}}) or vector(0)`,
    // In flight includes the requests held while the model wakes (gateway_model_held_requests is a part of it).
    demand: `sum(gateway_requests_in_flight{${gateway}}) or vector(0)`,
  };
}

export interface ScaledObjectArgs extends ScalerQueryArgs {
  /** The metrics server's in-cluster URL (the Prometheus API root). */
  readonly serverAddress: string;
  /** How long the model may take to load: no scale to zero sooner after the ScaledObject is created. */
  readonly startupBudgetSeconds: number;
}

type Trigger = { type: "prometheus"; name: string; metricType: "AverageValue" | "Value"; metadata: Record<string, string> };

/** The triggers: vLLM's queue and KV cache while pods run; the gateway's requests in flight (held ones included), which also wake it. */
export function scaledObjectTriggers(def: ModelDefinition, a: Autoscaling, args: ScaledObjectArgs): Trigger[] {
  const q = scalerQueries(def, args);
  // Trigger metadata is a map of strings in the CRD.
  const prom = (name: string, metricType: Trigger["metricType"], query: string, threshold: number, activation?: number): Trigger => ({
    type: "prometheus",
    name,
    metricType,
    metadata: { serverAddress: args.serverAddress, query, threshold: String(threshold), ...(activation !== undefined ? { activationThreshold: String(activation) } : {}) },
  });
  const triggers: Trigger[] = [];
  // AverageValue: desired replicas = ceil(sum / threshold), so the threshold is per replica.
  if (a.targets.waitingPerReplica !== undefined) triggers.push(prom("vllm-waiting", "AverageValue", q.waiting, a.targets.waitingPerReplica));
  // Value: desired = current × average / threshold.
  if (a.targets.kvCacheUsage !== undefined) triggers.push(prom("vllm-kv-cache", "Value", q.kvCache, a.targets.kvCacheUsage));
  // A replica serves maxConcurrency requests at once: more in flight (held or sent) per replica asks for another.
  triggers.push(prom("gateway-demand", "AverageValue", q.demand, def.maxConcurrency, a.activationRequests));
  return triggers;
}

/** The ScaledObject `model-<slug>` of an autoscaled model, in the serving namespace. */
export function buildScaledObject(model: PlannedModel, labelDomain: string, args: ScaledObjectArgs): Record<string, unknown> {
  const { def } = model;
  const a = model.autoscaling;
  if (!a) throw new Error(`${def.ref} is not autoscaled`);
  return {
    apiVersion: SCALED_OBJECT_API_VERSION,
    kind: "ScaledObject",
    // KEDA copies these labels onto the HPA it creates.
    metadata: { name: modelObjectName(def.slug), namespace: args.namespace, labels: { ...platformPodLabels(def, labelDomain), "app.kubernetes.io/managed-by": "pulumi" } },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: decodeDeploymentName(def) },
      minReplicaCount: a.minReplicas,
      maxReplicaCount: a.maxReplicas,
      pollingInterval: a.pollingSeconds,
      cooldownPeriod: a.cooldownSeconds,
      initialCooldownPeriod: args.startupBudgetSeconds,
      advanced: { horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: a.scaleDownStabilizationSeconds } } } },
      triggers: scaledObjectTriggers(def, a, args),
    },
  };
}

/** Whether a rendered object is the decode Deployment KEDA scales (the one whose `spec.replicas` Pulumi must leave alone). */
export function isScaledDeployment(obj: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } }, def: Pick<ModelDefinition, "slug" | "serverValues">): boolean {
  return obj.apiVersion === "apps/v1" && obj.kind === "Deployment" && obj.metadata?.name === decodeDeploymentName(def);
}
