// The metrics dashboards and alert rules may reference, by who exposes them, with where the name comes from. A
// query that names anything else (a typo, a renamed metric, one the platform does not collect) fails the tests.
// The gateway's names are read from its metrics registry (gateway/src/observability/metrics.ts), so they cannot drift.
import { parser as promqlParser } from "@prometheus-io/lezer-promql";
import { Histogram } from "prom-client";
import { CatalogSchema } from "../../../gateway/src/config/catalog";
import { GatewayMetrics } from "../../../gateway/src/observability/metrics";
import { TLS_CERT_EXPIRY_METRIC } from "../../../gateway/src/observability/tls-certificate-expiry";
import { ModelRegistry } from "../../../gateway/src/upstream/registry";
import { VLLM as VLLM_FACTS } from "../../serving/model-server-facts";
import { withGrafanaTimes } from "./model";

export interface MetricSource {
  readonly exposedBy: string;
  /** Where the names were taken from. */
  readonly reference: string;
  readonly names: readonly string[];
  /** Names among them that are histograms (queried as `_bucket`, `_count`, `_sum`). */
  readonly histograms?: readonly string[];
}

/**
 * vLLM's metrics, as the version the platform deploys exports them (infra/serving/model-server-facts.ts; the llm-d
 * simulator's subset is held against what the platform reads in model-server-facts.test.ts).
 */
const VLLM: MetricSource = {
  exposedBy: `vLLM ${VLLM_FACTS.version} model servers (/metrics on the API port)`,
  reference: VLLM_FACTS.sources.metrics,
  names: VLLM_FACTS.metrics,
  histograms: VLLM_FACTS.histograms,
};

/** The endpoint picker of the GAIE inferencepool chart v1.3.0 (and the llm-d inference scheduler built on it). */
const EPP: MetricSource = {
  exposedBy: "endpoint pickers (/metrics on port 9090)",
  reference: "gateway-api-inference-extension v1.3.0 site-src/guides/metrics-and-observability.md, pkg/epp/metrics/metrics.go",
  names: [
    "inference_pool_ready_pods",
    "inference_pool_average_kv_cache_utilization",
    "inference_pool_average_queue_size",
    "inference_objective_request_total",
    "inference_objective_request_error_total",
  ],
};

const KUBE_STATE_METRICS: MetricSource = {
  exposedBy: "kube-state-metrics (metrics chart)",
  reference: "https://github.com/kubernetes/kube-state-metrics/tree/main/docs (pod, job, daemonset, deployment and horizontalpodautoscaler metrics)",
  names: [
    "kube_deployment_spec_replicas",
    "kube_deployment_status_replicas_ready",
    "kube_deployment_status_replicas_available",
    "kube_deployment_labels",
    "kube_statefulset_replicas",
    "kube_horizontalpodautoscaler_info",
    "kube_horizontalpodautoscaler_spec_max_replicas",
    "kube_horizontalpodautoscaler_status_current_replicas",
    "kube_pod_info",
    "kube_pod_labels",
    "kube_pod_status_ready",
    "kube_pod_status_phase",
    "kube_pod_container_status_restarts_total",
    "kube_job_failed",
    "kube_daemonset_status_desired_number_scheduled",
    "kube_daemonset_status_number_available",
  ],
};

/** What the metrics server records of every target it scrapes. */
const SCRAPES: MetricSource = {
  exposedBy: "the metrics server, for every scrape target",
  reference: "https://prometheus.io/docs/concepts/jobs_instances/ (automatically generated labels and time series)",
  names: ["up"],
};

const KUBELET: MetricSource = {
  exposedBy: "the kubelet (kubernetes-nodes job)",
  reference: "kubernetes pkg/kubelet/metrics/collectors/volume_stats.go",
  names: ["kubelet_volume_stats_available_bytes", "kubelet_volume_stats_capacity_bytes"],
};

/** cert-manager's controller, scraped through the `prometheus.io/scrape` annotation its chart puts on it by default. */
const CERT_MANAGER: MetricSource = {
  exposedBy: "cert-manager's controller (/metrics on 9402), where the cluster runs it",
  reference: "cert-manager pkg/metrics/certificates.go",
  names: ["certmanager_certificate_expiration_timestamp_seconds"],
};

const NODE_EXPORTER: MetricSource = {
  exposedBy: "node-exporter (metrics chart)",
  reference: "https://github.com/prometheus/node_exporter (cpu, meminfo, filesystem, netdev, loadavg, uname collectors)",
  names: [
    "node_uname_info",
    "node_cpu_seconds_total",
    "node_memory_MemAvailable_bytes",
    "node_memory_MemTotal_bytes",
    "node_filesystem_avail_bytes",
    "node_filesystem_size_bytes",
    "node_network_receive_bytes_total",
    "node_network_transmit_bytes_total",
    "node_load1",
    "node_load5",
    "node_load15",
  ],
};

const CADVISOR: MetricSource = {
  exposedBy: "the kubelet's cAdvisor (kubernetes-nodes-cadvisor job)",
  reference: "https://github.com/google/cadvisor/blob/master/docs/storage/prometheus.md",
  names: ["container_cpu_usage_seconds_total", "container_memory_working_set_bytes"],
};

const DCGM: MetricSource = {
  exposedBy: "an NVIDIA DCGM exporter, which the platform does NOT deploy (docs/monitoring.md)",
  reference: "https://github.com/NVIDIA/dcgm-exporter (default counters)",
  names: ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"],
};

/** KEDA's operator (the platform's autoscaler of models, `cluster:keda`). */
const KEDA: MetricSource = {
  exposedBy: "the KEDA operator (/metrics on 8080)",
  reference: "kedacore/keda v2.20.2 pkg/metricscollector/prommetrics.go",
  names: ["keda_scaler_detail_errors_total", "keda_scaler_active"],
};

/**
 * What the gateway exports for models that may sleep (the hold queue of issue #22), as agreed with its
 * implementation. Only the names the gateway's registry does not serve yet: once it does, they come from there and
 * this list is empty (dashboards.test.ts holds that).
 */
export const GATEWAY_WAKE_METRICS = ["gateway_model_held_requests", "gateway_held_requests_total", "gateway_model_wake_seconds", "gateway_model_wakes_total"] as const;
export function gatewayWakeMetrics(): MetricSource {
  const served = new Set(gatewayMetrics().names);
  const names = GATEWAY_WAKE_METRICS.filter((n) => !served.has(n));
  return { exposedBy: "the gateway (/metrics on 9090), hold queue", reference: "issue #22: the gateway's metrics for held requests and wakes", names, histograms: names.filter((n) => n === "gateway_model_wake_seconds") };
}

/**
 * What the gateway exports for per-key budgets and its usage ledger (issue #30), as agreed with its implementation:
 * the names its registry does not serve yet (or serves only once budgets or a ledger are configured).
 */
export const GATEWAY_USAGE_METRICS = [
  "gateway_key_budget_limit",
  "gateway_key_budget_used",
  "gateway_key_budget_remaining",
  "gateway_usage_ledger_writes_total",
  "gateway_usage_ledger_last_write_timestamp_seconds",
  "gateway_usage_ledger_pending_objects",
] as const;
export function gatewayUsageMetrics(): MetricSource {
  const served = new Set(gatewayMetrics().names);
  return { exposedBy: "the gateway (/metrics on 9090), with budgets or a ledger", reference: "issue #30: the gateway's metrics for budgets and the usage ledger", names: GATEWAY_USAGE_METRICS.filter((n) => !served.has(n)) };
}

const LOKI: MetricSource = {
  exposedBy: "the log store (Loki, /metrics on 3100)",
  reference: "https://grafana.com/docs/loki/latest/operations/observability/ (loki_discarded_samples_total; loki_request_duration_seconds by route)",
  names: ["loki_discarded_samples_total", "loki_request_duration_seconds"],
  histograms: ["loki_request_duration_seconds"],
};

/**
 * The gateway's metrics as its registry holds them: a GatewayMetrics built over an empty catalog, with the gauges
 * that exist once the server does. Names and histograms come from the code that serves them, whatever class
 * (prom-client's or the prebuilt series) implements each.
 */
export function gatewayMetrics(): MetricSource {
  return (gatewaySource ??= readGatewayMetrics());
}
let gatewaySource: MetricSource | undefined;

function readGatewayMetrics(): MetricSource {
  const metrics = new GatewayMetrics(new ModelRegistry(CatalogSchema.parse({ models: [] })));
  metrics.observeResources({ openConnections: () => 0, bodyMemoryBytes: () => 0, answerMemoryBytes: () => 0 });
  const all = metrics.registry.getMetricsAsArray().filter((m) => m.name.startsWith("gateway_"));
  const isHistogram = (m: (typeof all)[number]) => m instanceof Histogram || (m as unknown as { type?: string }).type === "histogram";
  return {
    exposedBy: "the gateway (/metrics on 9090)",
    reference: "gateway/src/observability/metrics.ts",
    names: all.map((m) => m.name),
    histograms: all.filter(isHistogram).map((m) => m.name),
  };
}

/** Registered only while GATEWAY_TLS_CERT_FILE reads as a certificate, so not in an empty GatewayMetrics. */
const GATEWAY_TLS: MetricSource = {
  exposedBy: "the gateway (/metrics on 9090), with GATEWAY_TLS_CERT_FILE set",
  reference: "gateway/src/observability/tls-certificate-expiry.ts",
  names: [TLS_CERT_EXPIRY_METRIC],
};

export function metricSources(): MetricSource[] {
  return [gatewayMetrics(), gatewayWakeMetrics(), gatewayUsageMetrics(), GATEWAY_TLS, VLLM, EPP, KUBE_STATE_METRICS, KEDA, NODE_EXPORTER, CADVISOR, DCGM, LOKI, SCRAPES, KUBELET, CERT_MANAGER];
}

/** The metric names a PromQL expression selects, from Prometheus' own grammar. */
export function referencedMetrics(grafanaExpr: string): string[] {
  const out: string[] = [];
  const expr = withGrafanaTimes(grafanaExpr);
  promqlParser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.name === "Identifier" && node.node.parent?.type.name === "VectorSelector") out.push(expr.slice(node.from, node.to));
    },
  });
  return [...new Set(out)];
}

/** The source that exposes a selected series name (histogram series by their base name), if any. */
export function sourceOf(series: string, sources: readonly MetricSource[] = metricSources()): MetricSource | undefined {
  return sources.find((s) => {
    if (s.names.includes(series)) return true;
    const base = series.replace(/_(bucket|count|sum)$/, "");
    return base !== series && (s.histograms ?? []).includes(base);
  });
}
