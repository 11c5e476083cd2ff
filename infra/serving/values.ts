// Pure builders: what the platform adds to a model folder's chart values, and the objects it declares next to
// the two releases (the headless replica Service and the HTTPRoute). No Pulumi here.
import { serviceHost } from "../platform/cluster-config";
import { PLATFORM_NAME, platformLabelKeys } from "../platform/labels";
import { DECODE_ROLE_LABEL, ONPREM_GPU_SELECTOR, PART_OF, POOL_PREFIX } from "./constants";
import type { ModelServerValues, RoleValues } from "./folder-schemas";
import type { ModelDefinition } from "./model-folders";

type Labels = Record<string, string>;
type Toleration = Record<string, unknown>;

/** Name of the per-model objects declared directly (headless Service, HTTPRoute). */
export function modelObjectName(slug: string): string {
  return `model-${slug}`;
}

/** Release (and InferencePool) name of a model's pool, `gaie-<slug>`, as in the llm-d guides. */
export function poolReleaseName(slug: string): string {
  return `${POOL_PREFIX}${slug}`;
}

/** The platform labels every model-server pod carries (collector stream labels, dashboards, the replica Service). */
export function platformPodLabels(def: ModelDefinition, labelDomain: string): Labels {
  const k = platformLabelKeys(labelDomain);
  return {
    [k.platform]: PLATFORM_NAME,
    [k.modelSlug]: def.slug,
    [k.modelCategory]: def.category,
    // On-prem GPU nodes have no node group: their pods carry no nodegroup label.
    ...(def.nodeGroup ? { [k.nodegroup]: def.nodeGroup } : {}),
    "app.kubernetes.io/part-of": PART_OF,
  };
}

/** Labels that pick exactly this model's serving pods (decode role), whatever labels the folder chose. */
export function replicaSelector(def: ModelDefinition, labelDomain: string): Labels {
  const k = platformLabelKeys(labelDomain);
  return { [k.platform]: PLATFORM_NAME, [k.modelSlug]: def.slug, [DECODE_ROLE_LABEL.key]: DECODE_ROLE_LABEL.value };
}

/**
 * Where the pods run: a named node group is selected by `<label_domain>/nodegroup` (the label the node groups
 * carry); a GPU model without one goes to the on-prem GPU nodes (`workload: gpu`); a model without accelerators
 * (the simulator) runs anywhere. GPU nodes are usually tainted with the accelerator resource name.
 */
export function nodePlacement(def: ModelDefinition, labelDomain: string): { nodeSelector: Labels; tolerations: Toleration[] } {
  const usesGpus = def.gpus.resource !== undefined && def.gpus.perDecodeReplica + def.gpus.perPrefillReplica > 0;
  const nodeSelector = def.nodeGroup ? { [platformLabelKeys(labelDomain).nodegroup]: def.nodeGroup } : usesGpus ? { ...ONPREM_GPU_SELECTOR } : {};
  const tolerations = usesGpus ? [{ key: def.gpus.resource, operator: "Exists", effect: "NoSchedule" }] : [];
  return { nodeSelector, tolerations };
}

function place(role: RoleValues, placement: ReturnType<typeof nodePlacement>): void {
  const nodeSelector = { ...(role.nodeSelector ?? {}), ...placement.nodeSelector };
  if (Object.keys(nodeSelector).length > 0) role.nodeSelector = nodeSelector;
  const existing = (role.tolerations ?? []) as Toleration[];
  const added = placement.tolerations.filter((t) => !existing.some((e) => e.key === t.key));
  if (existing.length + added.length > 0) role.tolerations = [...existing, ...added];
}

export interface ModelServerValuesArgs {
  readonly labelDomain: string;
  /** Decode replicas to deploy; 0 also scales prefill to 0 (frees every GPU of the model). */
  readonly replicas: number;
  /** HF-compatible internal registry: HF_ENDPOINT for containers that download weights from `hf://`. */
  readonly modelRegistryUrl?: string;
  /** Annotations on the model-server Deployments (how long `pulumi up` waits for them, see startup.ts). */
  readonly deploymentAnnotations?: Readonly<Record<string, string>>;
}

/** llm-d-modelservice values: the folder's, plus platform pod labels, placement, replicas and registry. */
export function buildModelServerValues(def: ModelDefinition, args: ModelServerValuesArgs): Record<string, unknown> {
  const v = structuredClone(def.serverValues) as ModelServerValues;
  v.modelArtifacts.labels = { ...v.modelArtifacts.labels, ...platformPodLabels(def, args.labelDomain) };
  v.decode.replicas = args.replicas;
  if (args.replicas === 0 && v.prefill) v.prefill.replicas = 0;
  if (args.deploymentAnnotations) {
    for (const role of [v.decode, v.prefill?.create === false ? undefined : v.prefill]) {
      if (role) role.annotations = { ...((role.annotations as Record<string, string> | undefined) ?? {}), ...args.deploymentAnnotations };
    }
  }
  const placement = nodePlacement(def, args.labelDomain);
  place(v.decode, placement);
  if (v.prefill && v.prefill.create !== false) place(v.prefill, placement);
  if (args.modelRegistryUrl && v.modelArtifacts.uri.startsWith("hf://")) {
    for (const c of [...v.decode.containers, ...(v.prefill?.containers ?? [])]) {
      if (c.mountModelVolume === false || c.env?.some((e) => e.name === "HF_ENDPOINT")) continue;
      c.env = [...(c.env ?? []), { name: "HF_ENDPOINT", value: args.modelRegistryUrl }];
    }
  }
  return v;
}

export interface InferencePoolValuesArgs {
  readonly labelDomain: string;
  readonly namespace: string;
  /** The cluster's DNS domain (the EPP host Istio's DestinationRule names). */
  readonly clusterDomain: string;
  readonly gatewayProvider?: "none" | "istio" | "gke";
}

/**
 * GAIE inferencepool values: the folder's, with the pool selector narrowed to this model's slug (so a loose
 * selector such as `llm-d.ai/inference-serving: "true"` can never pick another model's pods) and the provider.
 */
export function buildInferencePoolValues(def: ModelDefinition, args: InferencePoolValuesArgs): Record<string, unknown> {
  const v = structuredClone(def.poolValues);
  v.inferencePool.modelServers.matchLabels = { ...v.inferencePool.modelServers.matchLabels, [platformLabelKeys(args.labelDomain).modelSlug]: def.slug };
  if (args.gatewayProvider) {
    const release = poolReleaseName(def.slug);
    v.provider = {
      ...(v.provider ?? {}),
      name: args.gatewayProvider,
      // As the llm-d helmfiles do: Istio needs the EPP Service host for its DestinationRule.
      ...(args.gatewayProvider === "istio" ? { istio: { destinationRule: { host: serviceHost(`${release}-epp`, args.namespace, args.clusterDomain) } } } : {}),
    };
  }
  return v;
}

function objectLabels(def: ModelDefinition, labelDomain: string, component: string): Labels {
  return {
    "app.kubernetes.io/name": modelObjectName(def.slug),
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/part-of": PART_OF,
    "app.kubernetes.io/managed-by": "pulumi",
    [platformLabelKeys(labelDomain).modelSlug]: def.slug,
  };
}

/**
 * Headless Service over the model's serving pods: Kubernetes publishes only ready pods in its DNS records, which
 * is how the gateway (catalog `mode: dns`) discovers the replicas it balances across.
 */
export function buildReplicaService(def: ModelDefinition, namespace: string, labelDomain: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: modelObjectName(def.slug), namespace, labels: objectLabels(def, labelDomain, "model-replicas") },
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: false,
      selector: replicaSelector(def, labelDomain),
      ports: [{ name: "http", protocol: "TCP", port: def.servingPort, targetPort: def.servingPort }],
    },
  };
}

export interface ParentGateway {
  readonly name: string;
  readonly namespace?: string;
  readonly sectionName?: string;
}

/** Path prefix under which the cluster's inference gateway routes a model to its InferencePool. */
export function poolPathPrefix(slug: string): string {
  return `/${slug}`;
}

/**
 * HTTPRoute from the parent Gateway to the model's InferencePool: `/<slug>/v1/...` is rewritten to `/v1/...` and
 * handed to the pool's endpoint picker. No timeouts: streams of long generations must not be cut.
 */
export function buildHttpRoute(def: ModelDefinition, namespace: string, labelDomain: string, parent: ParentGateway): Record<string, unknown> {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: modelObjectName(def.slug), namespace, labels: objectLabels(def, labelDomain, "model-route") },
    spec: {
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", ...parent }],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: poolPathPrefix(def.slug) } }],
          filters: [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } }],
          backendRefs: [{ group: def.poolApiGroup, kind: "InferencePool", name: poolReleaseName(def.slug), port: def.servingPort }],
          timeouts: { request: "0s", backendRequest: "0s" },
        },
      ],
    },
  };
}
