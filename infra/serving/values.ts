// Pure builders: what the platform adds to a model folder's chart values, and the objects it declares next to
// the two releases (the headless replica Service and the HTTPRoute). No Pulumi here.
import { serviceHost } from "../platform/cluster-config";
import { PLATFORM_NAME, platformLabelKeys } from "../platform/labels";
import { DECODE_ROLE_LABEL, LEAVE_DELAY_SECONDS, ONPREM_GPU_SELECTOR, PART_OF, POOL_PREFIX } from "./constants";
import type { ContainerValues, ModelServerValues, RoleValues } from "./folder-schemas";
import { wholeGpuResource } from "./gpus";
import { loraServerArgs, loraServerEnv, withLoraPicker } from "./lora";
import { hasFlag } from "./server-args";
import { sharedMemoryGiB } from "./server-checks";
import type { PlannedModel } from "./plan";
import { awaitAnnotations, type StartupTimeout, startupTimeoutSeconds } from "./startup";
import { cachedUri, MODEL_CACHE_MOUNT } from "./weights";
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

/**
 * The endpoint picker's Deployment, Service and pod label value of a pool release: its name lowered, trimmed and cut
 * to 40 characters, then `-epp` (GAIE chart v1.3.0 helper `gateway-api-inference-extension.name`).
 */
export function pickerName(release: string): string {
  return `${release.toLowerCase().trim().slice(0, 40)}-epp`;
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
  const keys = usesGpus ? [...new Set([def.gpus.resource as string, wholeGpuResource(def.gpus.resource as string)])] : [];
  const tolerations = keys.map((key) => ({ key, operator: "Exists", effect: "NoSchedule" }));
  return { nodeSelector, tolerations };
}

function place(role: RoleValues, placement: ReturnType<typeof nodePlacement>): void {
  const nodeSelector = { ...(role.nodeSelector ?? {}), ...placement.nodeSelector };
  if (Object.keys(nodeSelector).length > 0) role.nodeSelector = nodeSelector;
  const existing = (role.tolerations ?? []) as Toleration[];
  const added = placement.tolerations.filter((t) => !existing.some((e) => e.key === t.key));
  if (existing.length + added.length > 0) role.tolerations = [...existing, ...added];
}

/** The Secret holding the model servers' API key (vLLM reads VLLM_API_KEY; /v1 paths then require it). */
export const API_KEY_SECRET = { name: "model-server-api-key", key: "api-key" } as const;

/** Kubelet margin after the drain before SIGKILL: vLLM's own shutdown (engine, workers) takes seconds. */
export const TERMINATION_MARGIN_SECONDS = 30;

/** The pod's grace period: the preStop delay, the drain, and the margin for the process's own exit. */
export function terminationGraceSeconds(drainSeconds: number): number {
  return LEAVE_DELAY_SECONDS + drainSeconds + TERMINATION_MARGIN_SECONDS;
}

/**
 * preStop of a vLLM container: keep serving for the leave delay (the gateway and the picker stop sending it
 * requests), then wait until the server has nothing running or waiting (its own /metrics), at most the drain budget.
 * It works with every vLLM version (`--shutdown-timeout`, which drains after SIGTERM, needs v0.18).
 */
export const DRAIN_METRICS = ["vllm:num_requests_running", "vllm:num_requests_waiting"] as const;
export const DRAIN_SCRIPT = [
  "import sys, time, urllib.request",
  "port, budget, settle = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])",
  "time.sleep(settle)",
  "deadline = time.monotonic() + budget",
  "while time.monotonic() < deadline:",
  "    try:",
  "        text = urllib.request.urlopen('http://127.0.0.1:%s/metrics' % port, timeout=2).read().decode()",
  "    except Exception:",
  "        break",
  `    busy = sum(float(l.rsplit(' ', 1)[1]) for l in text.splitlines() if l.startswith((${DRAIN_METRICS.map((m) => `'${m}'`).join(", ")})))`,
  "    if busy == 0:",
  "        break",
  "    time.sleep(1)",
].join("\n");

/** What the platform sets on a vLLM container: no privilege escalation, no capabilities, the default seccomp profile. */
export const MODEL_SERVER_SECURITY_CONTEXT = {
  allowPrivilegeEscalation: false,
  privileged: false,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
} as const;

export interface ModelServerValuesArgs {
  readonly labelDomain: string;
  /** Decode replicas to deploy (an autoscaled model's `minReplicas`: only its first count); 0 also scales prefill to 0. */
  readonly replicas: number;
  /** Annotations on the model-server Deployments (how long `pulumi up` waits for them, see startup.ts). */
  readonly deploymentAnnotations?: Readonly<Record<string, string>>;
  /** The cache volume's `modelArtifacts.uri` (weights.ts cachedUri), or undefined to serve the folder's uri as is. */
  readonly cachedUri?: string;
  /** model.yaml `weights.revision`: the snapshot vLLM loads from the cache. */
  readonly revision?: string;
  /** How long the startup probe lets a server load before the kubelet restarts it. */
  readonly startupBudgetSeconds: number;
  /** How long a stopping server drains its in-flight requests. */
  readonly drainSeconds: number;
  /** Give vLLM the platform's API key (from API_KEY_SECRET). */
  readonly apiKey: boolean;
  /** Let vLLM store Responses API answers (`serving:responsesStore`). */
  readonly responsesStore?: boolean;
  /** Pod annotations per role (the metrics server's scrape annotations, from the composition root). */
  readonly podAnnotations?: Readonly<Partial<Record<"decode" | "prefill", Readonly<Record<string, string>>>>>;
}

type ProbeValues = { periodSeconds?: number; failureThreshold?: number; [k: string]: unknown };

function setEnv(c: ContainerValues, entry: { name: string; [k: string]: unknown }): void {
  if (c.env?.some((e) => e.name === entry.name)) return;
  c.env = [...(c.env ?? []), entry];
}

/** The platform's part of a vLLM container: API key, offline cache, revision, probe budget, drain hook, security. */
function serveVllm(c: ContainerValues, role: RoleValues, port: number, args: ModelServerValuesArgs, cachedHf: boolean): void {
  if (args.apiKey) setEnv(c, { name: "VLLM_API_KEY", valueFrom: { secretKeyRef: { name: API_KEY_SECRET.name, key: API_KEY_SECRET.key } } });
  // Without it vLLM accepts `store` and stores nothing: follow-ups of stored responses get its 404.
  if (args.responsesStore) setEnv(c, { name: "VLLM_ENABLE_RESPONSES_API_STORE", value: "1" });
  if (cachedHf) {
    // The download Job filled the cache: load from it, never from the network (a registry outage cannot stop a restart).
    setEnv(c, { name: "HF_HUB_OFFLINE", value: "1" });
    if (args.revision && !hasFlag(c.args ?? [], "--revision")) c.args = [...(c.args ?? []), `--revision=${args.revision}`];
  }
  const probe = c.startupProbe as ProbeValues | undefined;
  if (probe) {
    const period = probe.periodSeconds ?? 10;
    c.startupProbe = { ...probe, periodSeconds: period, failureThreshold: Math.max(probe.failureThreshold ?? 0, Math.ceil(args.startupBudgetSeconds / period)) };
  }
  const extra = ((c as { extraConfig?: Record<string, unknown> }).extraConfig ??= {});
  extra.lifecycle ??= { preStop: { exec: { command: ["python3", "-c", DRAIN_SCRIPT, String(port), String(args.drainSeconds), String(LEAVE_DELAY_SECONDS)] } } };
  if (!("securityContext" in c) && extra.securityContext === undefined) extra.securityContext = structuredClone(MODEL_SERVER_SECURITY_CONTEXT);
}

/**
 * Every model server leaves without failing a request: it keeps serving for LEAVE_DELAY_SECONDS after the pod starts
 * terminating (vLLM: in its drain hook, above; any other image: Kubernetes' own `sleep` action, on by default since
 * 1.30, no binary needed), and the grace period covers that, the drain and the exit.
 */
function leaveGracefully(c: ContainerValues, role: RoleValues, drainSeconds: number): void {
  const extra = ((c as { extraConfig?: Record<string, unknown> }).extraConfig ??= {});
  extra.lifecycle ??= { preStop: { sleep: { seconds: LEAVE_DELAY_SECONDS } } };
  const r = role as RoleValues & { terminationGracePeriodSeconds?: number };
  r.terminationGracePeriodSeconds = Math.max(r.terminationGracePeriodSeconds ?? 0, terminationGraceSeconds(drainSeconds));
}

/** The model's adapters on its server: the flags after the folder's own, and the environment of runtime loading. */
function addLora(c: ContainerValues, def: ModelDefinition): void {
  const lora = def.lora as NonNullable<ModelDefinition["lora"]>;
  c.args = [...(c.args ?? []), ...loraServerArgs(lora, def.id, def.vllm)];
  for (const entry of loraServerEnv(lora, def.vllm)) setEnv(c, entry);
}

/** NCCL between tensor-parallel workers needs a /dev/shm far above the container runtime's 64 MiB default. */
function addSharedMemory(role: RoleValues, c: ContainerValues, tp: number): void {
  const r = role as RoleValues & { volumes?: { name: string }[] };
  if (!r.volumes?.some((v) => v.name === "shm")) r.volumes = [...(r.volumes ?? []), { name: "shm", emptyDir: { medium: "Memory", sizeLimit: `${sharedMemoryGiB(tp)}Gi` } } as { name: string }];
  const mounts = ((c as { volumeMounts?: { name: string; mountPath: string }[] }).volumeMounts ??= []);
  if (!mounts.some((m) => m.mountPath === "/dev/shm")) mounts.push({ name: "shm", mountPath: "/dev/shm" });
}

/** The stack's settings that shape every model's server values. */
export interface ServerSettings {
  readonly labelDomain: string;
  readonly startupTimeout: StartupTimeout;
  readonly awaitModelServers: boolean;
  /** serving:drainSeconds (a folder's model.yaml drainSeconds wins). */
  readonly drainSeconds: number;
  /** serving:responsesStore. */
  readonly responsesStore?: boolean;
  /** Pod annotations of a model's server pods, per role (the composition root's: monitoring's scrape annotations). */
  readonly podAnnotations?: (def: ModelDefinition) => ModelServerValuesArgs["podAnnotations"];
}

/** The model's cache volume `modelArtifacts.uri`, when its weights are downloaded into one (weights.ts). */
export function cacheUriOf(def: ModelDefinition): string | undefined {
  return def.weightsInfo ? cachedUri(def.slug, def.weightsSource) : undefined;
}

/** Everything the platform adds for a planned model, as ServedModel passes it to the chart. */
export function serverValuesFor(model: PlannedModel, s: ServerSettings): Record<string, unknown> {
  const { def } = model;
  return buildModelServerValues(def, {
    labelDomain: s.labelDomain,
    replicas: model.replicas,
    deploymentAnnotations: awaitAnnotations(def.weightsGiB, s.startupTimeout, s.awaitModelServers),
    cachedUri: cacheUriOf(def),
    revision: def.weightsInfo?.revision,
    startupBudgetSeconds: startupTimeoutSeconds(def.weightsGiB, s.startupTimeout),
    drainSeconds: def.drainSeconds ?? s.drainSeconds,
    apiKey: true,
    responsesStore: s.responsesStore,
    podAnnotations: s.podAnnotations?.(def),
  });
}

/** llm-d-modelservice values: the folder's, plus platform pod labels, placement, replicas, cache, probes and drain. */
export function buildModelServerValues(def: ModelDefinition, args: ModelServerValuesArgs): Record<string, unknown> {
  const v = structuredClone(def.serverValues) as ModelServerValues;
  v.modelArtifacts.labels = { ...v.modelArtifacts.labels, ...platformPodLabels(def, args.labelDomain) };
  v.decode.replicas = args.replicas;
  // The platform's autoscaling block is KEDA's (scaled-object.ts); the chart's values schema refuses its keys.
  delete v.decode.autoscaling;
  if (args.replicas === 0 && v.prefill) v.prefill.replicas = 0;
  const roles: ["decode" | "prefill", RoleValues][] = [["decode", v.decode]];
  if (v.prefill && v.prefill.create !== false) roles.push(["prefill", v.prefill]);
  if (args.cachedUri) {
    v.modelArtifacts.uri = args.cachedUri;
    // The chart sets HF_HUB_CACHE under /model-cache whatever mountPath says (templates/_helpers.tpl hfEnv).
    v.modelArtifacts.mountPath = MODEL_CACHE_MOUNT;
    delete v.modelArtifacts.size;
  }
  const placement = nodePlacement(def, args.labelDomain);
  for (const [name, role] of roles) {
    if (args.deploymentAnnotations) role.annotations = { ...((role.annotations as Labels | undefined) ?? {}), ...args.deploymentAnnotations };
    const extra = args.podAnnotations?.[name];
    if (extra) role.podAnnotations = { ...extra, ...((role.podAnnotations as Labels | undefined) ?? {}) };
    place(role, placement);
    const server = role.containers?.[0];
    if (server && def.lora) addLora(server, def);
    if (!server) continue;
    if (def.vllm) serveVllm(server, role, def.servingPort, args, args.cachedUri?.startsWith("pvc+hf://") === true);
    leaveGracefully(server, role, args.drainSeconds);
    if (!def.vllm) continue;
    const tp = role.parallelism?.tensor ?? 1;
    if (tp > 1) addSharedMemory(role, server, tp);
  }
  return v;
}

export interface InferencePoolValuesArgs {
  readonly labelDomain: string;
  readonly namespace: string;
  /** The cluster's DNS domain (the EPP host Istio's DestinationRule names). */
  readonly clusterDomain: string;
  readonly gatewayProvider?: "none" | "istio" | "gke";
  /** false: the endpoint picker serves /metrics without a Kubernetes token (`--metrics-endpoint-auth=false`). */
  readonly eppMetricsAuth?: boolean;
}

/**
 * GAIE inferencepool values: the folder's, with the pool selector narrowed to this model's slug (so a loose
 * selector such as `llm-d.ai/inference-serving: "true"` can never pick another model's pods) and the provider.
 */
export function buildInferencePoolValues(def: ModelDefinition, args: InferencePoolValuesArgs): Record<string, unknown> {
  // A model with adapters: its picker also scores by the adapters each pod holds (lora.ts).
  const v = structuredClone(def.lora ? withLoraPicker(def.poolValues) : def.poolValues);
  v.inferencePool.modelServers.matchLabels = { ...v.inferencePool.modelServers.matchLabels, [platformLabelKeys(args.labelDomain).modelSlug]: def.slug };
  if (args.eppMetricsAuth !== undefined) {
    // inferenceExtension.monitoring.prometheus.auth.enabled (chart v1.3.0 values), keeping the folder's siblings.
    const ext = ((v as Record<string, unknown>).inferenceExtension ??= {}) as Record<string, Record<string, Record<string, unknown>>>;
    const monitoring = (ext.monitoring ??= {});
    const prometheus = (monitoring.prometheus ??= {});
    prometheus.auth = { ...((prometheus.auth as object | undefined) ?? {}), enabled: args.eppMetricsAuth };
  }
  if (args.gatewayProvider) {
    const release = poolReleaseName(def.slug);
    v.provider = {
      ...(v.provider ?? {}),
      name: args.gatewayProvider,
      // As the llm-d helmfiles do: Istio needs the EPP Service host for its DestinationRule.
      ...(args.gatewayProvider === "istio" ? { istio: { destinationRule: { host: serviceHost(pickerName(release), args.namespace, args.clusterDomain) } } } : {}),
    };
  }
  return v;
}

/** Labels of the per-model objects the platform declares itself (replica Service, route, disruption budgets). */
export function modelObjectLabels(def: ModelDefinition, labelDomain: string, component: string): Labels {
  return {
    "app.kubernetes.io/name": modelObjectName(def.slug),
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/part-of": PART_OF,
    "app.kubernetes.io/managed-by": "pulumi",
    [platformLabelKeys(labelDomain).modelSlug]: def.slug,
  };
}

/**
 * Headless Service over the model's serving pods: Kubernetes publishes only ready pods in its DNS records (the
 * default, `publishNotReadyAddresses` unset: an explicit false is dropped by the server, a diff no apply settles),
 * which is how the gateway (catalog `mode: dns`) discovers the replicas it balances across.
 */
export function buildReplicaService(def: ModelDefinition, namespace: string, labelDomain: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: modelObjectName(def.slug), namespace, labels: modelObjectLabels(def, labelDomain, "model-replicas") },
    spec: {
      clusterIP: "None",
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
    metadata: { name: modelObjectName(def.slug), namespace, labels: modelObjectLabels(def, labelDomain, "model-route") },
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
