// The platform's own health: a Watchdog that always fires (its silence, seen by a service outside the cluster, is
// the page when the metrics server or the path to the Alertmanager dies), and one rule per component that pages or
// tickets when it stops answering.
//
// A component's rule fires when its workload exists and wants pods but none of them answers the metrics server's
// scrape (`up == 1`). That is `absent()` scoped to what kube-state-metrics says is deployed: it covers crash loops,
// Pending pods (never a target), pods gone and a scrape the network no longer lets through, and it stays quiet where
// a part is not deployed (the parts may run in other stacks, in namespaces the monitoring part cannot know). Pods
// join their workload by name, as the controllers name them. kube-state-metrics itself, deployed with the metrics
// server, has a plain `absent()`; the metrics server is watched from outside by the Watchdog.
import { APP_NAME as GATEWAY_NAME } from "../gateway/constants";
import { DECODE_ROLE_LABEL, PART_OF as SERVING_PART_OF, POOL_PREFIX } from "../serving/constants";
import type { AlertRule } from "./rule-types";
import { COLLECTOR_NAME } from "./collector-values";
import { NAMESPACE, SERVICES } from "./constants";
import { METRICS_STORAGE } from "./metrics-values";

/** Thresholds of the health rules, in one place. */
export const HEALTH_THRESHOLDS = {
  /** Share of a volume in use (free space as the kubelet sees it) past which it is filling. */
  volumeUsage: 0.85,
  /** Days left on a certificate: cert-manager renews a 90-day certificate 30 days ahead, so 14 means renewal failed for 16. */
  certificateDays: 14,
} as const;

/** The job that scrapes annotated pods, and the one that scrapes annotated Services (kube-state-metrics). */
const PODS_JOB = "kubernetes-pods";
const SERVICES_JOB = "kubernetes-service-endpoints";
/** kube-state-metrics' Service: the subchart's `<release>-kube-state-metrics`, release `metrics` (metrics.ts). */
export const KUBE_STATE_METRICS_SERVICE = "metrics-kube-state-metrics";

type WorkloadKind = "deployment" | "statefulset" | "daemonset";

/** How many pods a workload wants (kube-state-metrics), and how its pods are named after it. */
const WORKLOADS: Readonly<Record<WorkloadKind, { readonly wanted: string; readonly podName: string }>> = {
  deployment: { wanted: "kube_deployment_spec_replicas", podName: "(.+)-[^-]+-[^-]+" },
  statefulset: { wanted: "kube_statefulset_replicas", podName: "(.+)-[0-9]+" },
  daemonset: { wanted: "kube_daemonset_status_desired_number_scheduled", podName: "(.+)-[a-z0-9]{5}" },
};

/**
 * The workloads of `kind` matching `selector` that want pods (or, with `count`, have pods by another count) while
 * none of their pods answers a scrape: one series per namespace and workload. `scope` narrows them by an expression
 * on the same labels.
 */
export function noPodAnswering(kind: WorkloadKind, selector: string, opts: { readonly scope?: string; readonly count?: string } = {}): string {
  const w = WORKLOADS[kind];
  const wanted = `${opts.count ?? w.wanted}${selector ? `{${selector}}` : ""} > 0${opts.scope ? ` and on (namespace, ${kind}) ${opts.scope}` : ""}`;
  const answering = `label_replace(up{job="${PODS_JOB}"} == 1, "${kind}", "$1", "pod", "${w.podName}")`;
  return `max by (namespace, ${kind}) (${wanted}) unless on (namespace, ${kind}) max by (namespace, ${kind}) (${answering})`;
}

/**
 * The Deployments matching `selector` that want replicas while none is available (ready): one series per namespace
 * and Deployment. `scope` narrows them as in `noPodAnswering`.
 */
export function noReplicaAvailable(selector: string, opts: { readonly scope?: string } = {}): string {
  const wanted = `kube_deployment_spec_replicas{${selector}} > 0${opts.scope ? ` and on (namespace, deployment) ${opts.scope}` : ""}`;
  return `max by (namespace, deployment) (${wanted}) and on (namespace, deployment) max by (namespace, deployment) (kube_deployment_status_replicas_available{${selector}} == 0)`;
}

/**
 * The pod labels that tell a model server's decode pod: the platform's (app.kubernetes.io/part-of) and the chart's
 * role. The chart labels the Deployment itself only with its own labels, and a folder's `fullnameOverride` renames
 * it, so model servers are found by their pods' labels, as kube-state-metrics copies them (metrics-values.ts).
 */
export const MODEL_SERVER_POD_LABELS: Readonly<Record<string, string>> = { "app.kubernetes.io/part-of": SERVING_PART_OF, [DECODE_ROLE_LABEL.key]: DECODE_ROLE_LABEL.value };

/** A label as kube-state-metrics names it in `kube_<kind>_labels`. */
const ksmLabel = (key: string) => `label_${key.replace(/[^a-zA-Z0-9]/g, "_")}`;

/** The model servers' decode Deployments, named after their pods. */
const MODEL_SERVER_DECODE_DEPLOYMENTS = `max by (namespace, deployment) (label_replace(kube_pod_labels{${Object.entries(MODEL_SERVER_POD_LABELS)
  .map(([k, v]) => `${ksmLabel(k)}="${v}"`)
  .join(", ")}}, "deployment", "$1", "pod", "${WORKLOADS.deployment.podName}"))`;

const t = HEALTH_THRESHOLDS;
const GATEWAY_SELECTOR = `deployment="${GATEWAY_NAME}"`;
const GATEWAY_SCOPE = `kube_deployment_labels{label_app_kubernetes_io_component="${GATEWAY_NAME}"}`;

export const HEALTH_RULES: readonly AlertRule[] = [
  {
    alert: "Watchdog",
    expr: "vector(1)",
    for: "0m",
    severity: "none",
    summary: "Always firing: the metrics server evaluates rules and reaches the Alertmanager.",
    description: "The dead-man's switch. The Alertmanager sends it to a heartbeat service outside the cluster, which pages when it stops arriving.",
    runbook:
      "Never silence it. The heartbeat service paging means no Watchdog arrived: `kubectl -n monitoring get pods` (metrics server Running?), `curl -s localhost:9090/api/v1/alertmanagers` (port-forward as in Metrics server) and `prometheus_notifications_errors_total` on its `/metrics`, then the Alertmanager and its heartbeat route.",
  },
  {
    alert: "GatewayDown",
    // The platform's gateway by the component label kube-state-metrics keeps (metrics-values.ts), not only its name.
    // Its metrics have a port of their own, so pods that answer the scrape while none is ready (the Service sends
    // clients nowhere, and the objectives see no request) are down too.
    expr: `${noPodAnswering("deployment", GATEWAY_SELECTOR, { scope: GATEWAY_SCOPE })} or ${noReplicaAvailable(GATEWAY_SELECTOR, { scope: GATEWAY_SCOPE })}`,
    for: "5m",
    severity: "critical",
    summary: "No gateway pod in {{ $labels.namespace }} answers or is ready: the API is down.",
    description: "The gateway Deployment wants replicas and none of its pods answers the metrics server, or none is available to its Service.",
    runbook:
      "`kubectl -n <gateway namespace> get pods -l app.kubernetes.io/name=gateway`: `Pending`: no CPU node fits; a crash loop: `kubectl logs --previous` says why (a keys or catalog file refused); `Running` but not ready: `kubectl describe pod` shows the failing `/readyz`; pods ready: the metrics server cannot reach port 9090 (a NetworkPolicy).",
  },
  {
    alert: "RateLimitStoreDown",
    expr: "count by (namespace) (gateway_rate_limit_store_up == 0) > 0",
    for: "5m",
    severity: "warning",
    summary: "{{ $value }} gateway pod(s) in {{ $labels.namespace }} cannot reach the shared rate-limit store.",
    description: "Per-key limits no longer hold across replicas (failing open, the default) or requests are refused (failing closed).",
    runbook:
      "`kubectl -n <gateway namespace> get pods -l app.kubernetes.io/name=gateway-redis` and its log; with an external store, check `gateway:redisUrl` and the gateway's egress to it (`gateway:redisEgress`). The gateway reconnects by itself.",
  },
  {
    alert: "EndpointPickerDown",
    expr: noPodAnswering("deployment", `deployment=~"${POOL_PREFIX}.+-epp"`),
    for: "10m",
    severity: "warning",
    summary: "Endpoint picker {{ $labels.deployment }} in {{ $labels.namespace }} has no pod answering.",
    description: "Routes through its InferencePool (HTTPRoutes of a Gateway API implementation) fail; the gateway's own routing does not use it.",
    runbook:
      "`kubectl -n app-serving get pods -l inferencepool=<deployment>` and `kubectl logs`: a picker unable to watch its pool's pods logs RBAC errors; `Running` and ready: the metrics server cannot reach port 9090.",
  },
  {
    alert: "ModelServerMetricsMissing",
    // Available replicas, not wanted ones: a model server loading its weights (up to its startup budget) serves no
    // /metrics yet and is not available either.
    expr: noPodAnswering("deployment", "", { count: "kube_deployment_status_replicas_available", scope: MODEL_SERVER_DECODE_DEPLOYMENTS }),
    for: "15m",
    severity: "warning",
    summary: "Model servers of {{ $labels.deployment }} are available but none answers the metrics server.",
    description: "Their dashboards are empty and an autoscaled model no longer sees its queue; serving goes on.",
    runbook:
      "`kubectl -n app-serving get pod <pod> -o yaml`: the `prometheus.io/port` annotation must be vLLM's port (8200 behind the routing sidecar, else 8000), and the `model-servers` NetworkPolicy must admit the monitoring namespace.",
  },
  {
    alert: "LogstoreDown",
    expr: noPodAnswering("statefulset", `namespace="${NAMESPACE}", statefulset="${SERVICES.logstore.name}"`),
    for: "10m",
    severity: "warning",
    summary: "The log store answers no scrape: logs are not stored and log dashboards are empty.",
    description: "The log store StatefulSet wants a pod and none answers.",
    runbook:
      "`kubectl -n monitoring describe pod logstore-0` and `kubectl -n monitoring logs logstore-0`: an object store error (credentials, bucket), a full volume (VolumeFilling) or `Pending` for its volume. The collector keeps its read positions and catches up while node logs last.",
  },
  {
    alert: "CollectorDown",
    expr: noPodAnswering("daemonset", `namespace="${NAMESPACE}", daemonset="${COLLECTOR_NAME}"`),
    for: "10m",
    severity: "warning",
    summary: "No collector pod answers on any node: no logs are shipped.",
    description: "The collector DaemonSet wants pods and none answers (CollectorNotOnEveryNode covers some nodes).",
    runbook:
      "`kubectl -n monitoring get pods -l app.kubernetes.io/instance=collector -o wide` and one's log: a refused configuration names the line; pods Running and ready: the metrics server cannot reach port 12345.",
  },
  {
    alert: "ViewerDown",
    // The viewer is not scraped: its Deployment's available replicas are the signal.
    expr: noReplicaAvailable(`namespace="${NAMESPACE}", deployment="${SERVICES.viewer.name}"`),
    for: "10m",
    severity: "warning",
    summary: "The viewer has no available replica: dashboards are unreachable.",
    description: "The viewer Deployment wants replicas and none is ready.",
    runbook:
      "`kubectl -n monitoring describe pod -l app.kubernetes.io/instance=viewer` and its log: a password Secret not found, a datasource URL refused, or `Pending` for CPU or memory.",
  },
  {
    alert: "KubeStateMetricsDown",
    expr: `absent(up{job="${SERVICES_JOB}", service="${KUBE_STATE_METRICS_SERVICE}"} == 1)`,
    for: "10m",
    severity: "critical",
    summary: "kube-state-metrics answers no scrape: the component rules (GatewayDown and the others) cannot fire.",
    description: "The workload facts every component rule reads are gone.",
    runbook: "`kubectl -n monitoring get pods -l app.kubernetes.io/name=kube-state-metrics` and its log: an RBAC refusal names the resource; `OOMKilled` needs a higher limit on a large cluster.",
  },
  {
    alert: "CertificateExpiringSoon",
    // A certificate the operator provides, as the gateway reads it from the Secret: the newest any pod has read (a pod
    // whose mount lags a renewal by a minute must not hold the alert).
    expr:
      `min by (namespace, name) (certmanager_certificate_expiration_timestamp_seconds) - time() < ${t.certificateDays} * 86400` +
      ` or label_replace(max by (namespace) (gateway_tls_certificate_expiry_timestamp_seconds), "name", "gateway:exposure.tls.secretName", "", "") - time() < ${t.certificateDays} * 86400`,
    for: "1h",
    severity: "warning",
    summary: "Certificate {{ $labels.namespace }}/{{ $labels.name }} expires in under 14 days.",
    description: "A certificate expires within 14 days: cert-manager's renewal fails, or your `tls.secretName` Secret was not renewed.",
    runbook:
      "Name `gateway:exposure.tls.secretName`: renew your Secret (operations.md, Rotate secrets). Else `kubectl -n <namespace> describe certificate <name>`, its CertificateRequest and Order: an HTTP-01 challenge not routed, DNS elsewhere, an issuer rate limit.",
  },
  {
    alert: "VolumeFilling",
    expr: `max by (namespace, persistentvolumeclaim) (1 - kubelet_volume_stats_available_bytes / kubelet_volume_stats_capacity_bytes) > ${t.volumeUsage}`,
    for: "15m",
    severity: "warning",
    summary: "Volume {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }} is over 85% full.",
    description: "A persistent volume has less than 15% free (its kubelet's figures).",
    runbook:
      `\`kubectl get pvc -A\`: the metrics server keeps at most ${METRICS_STORAGE.retentionSize} of its ${METRICS_STORAGE.volume}, so over 85% its write-ahead log grew (a burst of new series); the log store's holds its WAL and compactor work and fills when the object store refuses uploads (LogstoreIngestionErrors). Grow the claim where its storage class allows expansion.`,
  },
];
