// The six dashboards of the spec. Log dashboards are scoped to the stream label platform="ai-platform" (every
// selector starts with it); metrics dashboards are cluster-wide.
import { PLATFORM_NAME } from "../../platform/labels";
import { type Dashboard, dashboard, variable } from "./model";

const PLATFORM = `platform="${PLATFORM_NAME}"`;
/** Case-insensitive line filter for error lines (RE2 syntax as LogQL uses). */
const ERROR_FILTER = `|~ "(?i)(level=error|\\"level\\":\\"error\\"|error|exception|fatal|panic|traceback)"`;

export function overviewDashboard(): Dashboard {
  return dashboard({
    uid: "ai-platform-overview",
    title: "AI Platform · Overview",
    tags: ["ai-platform", "logs"],
    kind: "logstore",
    panels: [
      {
        type: "timeseries",
        title: "Log rate by subsystem",
        description: "Lines per second by app.kubernetes.io/part-of (app-shaide, app-serving).",
        exprs: [{ expr: `sum by (part_of) (rate({${PLATFORM}}[5m]))`, legend: "{{part_of}}" }],
        unit: "short",
      },
      {
        type: "timeseries",
        title: "Error rate by subsystem",
        exprs: [{ expr: `sum by (part_of) (rate({${PLATFORM}} ${ERROR_FILTER} [5m]))`, legend: "{{part_of}}" }],
        unit: "short",
      },
      {
        type: "stat",
        title: "Errors in the last hour",
        exprs: [{ expr: `sum(count_over_time({${PLATFORM}} ${ERROR_FILTER} [1h]))` }],
        w: 8,
      },
      {
        type: "stat",
        title: "Error ratio (5m)",
        exprs: [{ expr: `sum(rate({${PLATFORM}} ${ERROR_FILTER} [5m])) / sum(rate({${PLATFORM}}[5m]))` }],
        unit: "percentunit",
        w: 8,
      },
      {
        type: "timeseries",
        title: "Log rate by namespace",
        exprs: [{ expr: `sum by (namespace) (rate({${PLATFORM}}[5m]))`, legend: "{{namespace}}" }],
        w: 8,
      },
    ],
  });
}

export function errorExplorerDashboard(): Dashboard {
  const sel = `{${PLATFORM}, namespace=~"$namespace", component=~"$component", model_slug=~"$model"}`;
  return dashboard({
    uid: "ai-platform-errors",
    title: "AI Platform · Error Explorer",
    tags: ["ai-platform", "logs", "errors"],
    kind: "logstore",
    variables: [
      variable("logstore", "namespace", "Namespace", { label: "namespace", selector: `{${PLATFORM}}` }),
      variable("logstore", "component", "Component", { label: "component", selector: `{${PLATFORM}}` }),
      variable("logstore", "model", "Model", { label: "model_slug", selector: `{${PLATFORM}}` }),
    ],
    panels: [
      {
        type: "timeseries",
        title: "Errors by namespace",
        exprs: [{ expr: `sum by (namespace) (count_over_time(${sel} ${ERROR_FILTER} [5m]))`, legend: "{{namespace}}" }],
      },
      {
        type: "timeseries",
        title: "Errors by component and model",
        exprs: [{ expr: `sum by (component, model_slug) (count_over_time(${sel} ${ERROR_FILTER} [5m]))`, legend: "{{component}} {{model_slug}}" }],
      },
      { type: "logs", title: "Error lines", exprs: [{ expr: `${sel} ${ERROR_FILTER}` }], w: 24, h: 14 },
    ],
  });
}

export function shaideLogExplorerDashboard(): Dashboard {
  const sel = `{${PLATFORM}, part_of="app-shaide", component=~"$component"}`;
  return dashboard({
    uid: "app-shaide-logs",
    title: "app-shaide · Log Explorer",
    tags: ["ai-platform", "logs", "app-shaide"],
    kind: "logstore",
    variables: [variable("logstore", "component", "Component", { label: "component", selector: `{${PLATFORM}, part_of="app-shaide"}` })],
    panels: [
      {
        type: "timeseries",
        title: "Log rate by component",
        exprs: [{ expr: `sum by (component) (rate(${sel}[5m]))`, legend: "{{component}}" }],
        w: 24,
      },
      { type: "logs", title: "Log stream", exprs: [{ expr: sel }], w: 24, h: 16 },
    ],
  });
}

export function servingLogExplorerDashboard(): Dashboard {
  const sel = `{${PLATFORM}, part_of="app-serving", model_category=~"$category", model_slug=~"$model", nodegroup=~"$nodegroup"}`;
  const base = `{${PLATFORM}, part_of="app-serving"}`;
  return dashboard({
    uid: "app-serving-model-logs",
    title: "app-serving · Model Log Explorer",
    tags: ["ai-platform", "logs", "app-serving"],
    kind: "logstore",
    variables: [
      variable("logstore", "category", "Category", { label: "model_category", selector: base }),
      variable("logstore", "model", "Model", { label: "model_slug", selector: base }),
      variable("logstore", "nodegroup", "Node group", { label: "nodegroup", selector: base }),
    ],
    panels: [
      { type: "timeseries", title: "Log rate by category", exprs: [{ expr: `sum by (model_category) (rate(${sel}[5m]))`, legend: "{{model_category}}" }], w: 8 },
      { type: "timeseries", title: "Log rate by model", exprs: [{ expr: `sum by (model_slug) (rate(${sel}[5m]))`, legend: "{{model_slug}}" }], w: 8 },
      { type: "timeseries", title: "Log rate by node group", exprs: [{ expr: `sum by (nodegroup) (rate(${sel}[5m]))`, legend: "{{nodegroup}}" }], w: 8 },
      {
        type: "timeseries",
        title: "Errors by model",
        exprs: [{ expr: `sum by (model_slug) (count_over_time(${sel} ${ERROR_FILTER} [5m]))`, legend: "{{model_slug}}" }],
        w: 24,
      },
      { type: "logs", title: "Model server logs", exprs: [{ expr: sel }], w: 24, h: 16 },
    ],
  });
}

export function nodeMetricsDashboard(): Dashboard {
  const inst = `instance=~"$instance"`;
  const fs = `fstype!~"tmpfs|overlay|squashfs", ${inst}`;
  const nic = `device!~"lo|veth.*|cali.*|flannel.*|cni.*", ${inst}`;
  return dashboard({
    uid: "cluster-node-metrics",
    title: "Cluster · Node Metrics",
    tags: ["ai-platform", "metrics", "nodes"],
    kind: "metrics",
    variables: [variable("metrics", "instance", "Node", { label: "instance", selector: "node_uname_info" })],
    panels: [
      { type: "timeseries", title: "CPU utilisation", exprs: [{ expr: `1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle", ${inst}}[5m]))`, legend: "{{instance}}" }], unit: "percentunit" },
      {
        type: "timeseries",
        title: "Memory utilisation",
        exprs: [{ expr: `1 - (node_memory_MemAvailable_bytes{${inst}} / node_memory_MemTotal_bytes{${inst}})`, legend: "{{instance}}" }],
        unit: "percentunit",
      },
      {
        type: "timeseries",
        title: "Disk usage",
        exprs: [{ expr: `1 - (node_filesystem_avail_bytes{${fs}} / node_filesystem_size_bytes{${fs}})`, legend: "{{instance}} {{mountpoint}}" }],
        unit: "percentunit",
      },
      {
        type: "timeseries",
        title: "Network I/O",
        exprs: [
          { expr: `sum by (instance) (rate(node_network_receive_bytes_total{${nic}}[5m]))`, legend: "{{instance}} rx" },
          { expr: `sum by (instance) (rate(node_network_transmit_bytes_total{${nic}}[5m]))`, legend: "{{instance}} tx" },
        ],
        unit: "Bps",
      },
      {
        type: "timeseries",
        title: "Load average",
        exprs: [
          { expr: `node_load1{${inst}}`, legend: "{{instance}} 1m" },
          { expr: `node_load5{${inst}}`, legend: "{{instance}} 5m" },
          { expr: `node_load15{${inst}}`, legend: "{{instance}} 15m" },
        ],
      },
      {
        type: "timeseries",
        title: "GPU utilisation",
        description: "From the NVIDIA DCGM exporter; no data on nodes without GPUs.",
        exprs: [{ expr: `avg by (Hostname, gpu) (DCGM_FI_DEV_GPU_UTIL)`, legend: "{{Hostname}} GPU {{gpu}}" }],
        unit: "percent",
      },
      {
        type: "timeseries",
        title: "GPU memory used",
        description: "From the NVIDIA DCGM exporter; no data on nodes without GPUs.",
        exprs: [{ expr: `sum by (Hostname, gpu) (DCGM_FI_DEV_FB_USED) / sum by (Hostname, gpu) (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)`, legend: "{{Hostname}} GPU {{gpu}}" }],
        unit: "percentunit",
        w: 24,
      },
    ],
  });
}

export function podResourcesDashboard(): Dashboard {
  const sel = `namespace=~"$namespace", pod=~"$pod"`;
  return dashboard({
    uid: "cluster-pod-resources",
    title: "Cluster · Pod Resource Usage",
    tags: ["ai-platform", "metrics", "pods"],
    kind: "metrics",
    variables: [
      variable("metrics", "namespace", "Namespace", { label: "namespace", selector: "kube_pod_info" }),
      variable("metrics", "pod", "Pod", { label: "pod", selector: `kube_pod_info{namespace=~"$namespace"}` }),
    ],
    panels: [
      {
        type: "timeseries",
        title: "CPU usage by pod",
        exprs: [{ expr: `sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{container!="", ${sel}}[5m]))`, legend: "{{namespace}}/{{pod}}" }],
        unit: "short",
      },
      {
        type: "timeseries",
        title: "Memory working set by pod",
        exprs: [{ expr: `sum by (namespace, pod) (container_memory_working_set_bytes{container!="", ${sel}})`, legend: "{{namespace}}/{{pod}}" }],
        unit: "bytes",
      },
      {
        type: "timeseries",
        title: "Container restarts (1h)",
        exprs: [{ expr: `sum by (namespace, pod) (increase(kube_pod_container_status_restarts_total{${sel}}[1h]))`, legend: "{{namespace}}/{{pod}}" }],
      },
      {
        type: "stat",
        title: "Pods not ready",
        exprs: [{ expr: `sum(kube_pod_status_ready{condition="false", ${sel}})` }],
      },
    ],
  });
}

/**
 * The gateway's own metrics (gateway/src/observability/metrics.ts), scraped from its pods by the
 * `kubernetes-pods` job through the prometheus.io annotations.
 */
export function gatewayDashboard(): Dashboard {
  const m = `model=~"$model"`;
  const inference = `endpoint=~"/v1/chat/completions|/v1/embeddings", ${m}`;
  const quantiles = (metric: string, by: string) =>
    [0.5, 0.9, 0.99].map((q) => ({
      expr: `histogram_quantile(${q}, sum by (le, ${by}) (rate(${metric}_bucket{${m}}[5m])))`,
      legend: `p${q * 100} {{${by}}}`,
    }));
  return dashboard({
    uid: "ai-platform-gateway",
    title: "AI Platform · Gateway",
    tags: ["ai-platform", "metrics", "gateway"],
    kind: "metrics",
    variables: [variable("metrics", "model", "Model", { label: "model", selector: "gateway_models_ready" })],
    panels: [
      { type: "timeseries", title: "Requests per second by model", exprs: [{ expr: `sum by (model) (rate(gateway_requests_total{${inference}}[5m]))`, legend: "{{model}}" }], unit: "reqps" },
      {
        type: "timeseries",
        title: "Errors by status",
        exprs: [{ expr: `sum by (status) (rate(gateway_requests_total{status!~"2..", ${m}}[5m]))`, legend: "{{status}}" }],
        unit: "reqps",
      },
      { type: "timeseries", title: "Time to first token (streams)", exprs: quantiles("gateway_time_to_first_token_seconds", "model"), unit: "s" },
      { type: "timeseries", title: "Request latency", exprs: quantiles("gateway_request_duration_seconds", "model"), unit: "s" },
      { type: "timeseries", title: "Inter-token latency", exprs: quantiles("gateway_inter_token_latency_seconds", "model"), unit: "s" },
      {
        type: "timeseries",
        title: "Tokens per second by model",
        exprs: [{ expr: `sum by (model, type) (rate(gateway_tokens_total{${m}}[5m]))`, legend: "{{model}} {{type}}" }],
        unit: "short",
      },
      {
        type: "timeseries",
        title: "Saturated replicas (share)",
        description: "Share of a model's replicas at their concurrency cap or load thresholds; at 1 new requests get 429.",
        exprs: [{ expr: `sum by (model) (gateway_replica_saturated{${m}}) / count by (model) (gateway_replica_saturated{${m}})`, legend: "{{model}}" }],
        unit: "percentunit",
      },
      {
        type: "timeseries",
        title: "Ready replicas and requests in flight",
        exprs: [
          { expr: `sum by (model) (gateway_replica_ready{${m}})`, legend: "{{model}} ready replicas" },
          { expr: `sum by (model) (gateway_requests_in_flight{${m}})`, legend: "{{model}} in flight" },
        ],
      },
      {
        type: "timeseries",
        title: "Rate-limit refusals by key",
        exprs: [{ expr: `sum by (key, limit) (rate(gateway_rate_limit_refusals_total[5m]))`, legend: "{{key}} {{limit}}" }],
        unit: "reqps",
        w: 24,
      },
    ],
  });
}

/** Dashboards deployed when `dashboards` (and `viewer`) are enabled. */
export function logDashboards(): Dashboard[] {
  return [overviewDashboard(), errorExplorerDashboard(), shaideLogExplorerDashboard(), servingLogExplorerDashboard()];
}

/** Dashboards deployed when `dashboards` and `metrics` are enabled. */
export function metricsDashboards(): Dashboard[] {
  return [nodeMetricsDashboard(), podResourcesDashboard(), gatewayDashboard()];
}
