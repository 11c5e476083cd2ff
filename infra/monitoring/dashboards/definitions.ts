// The six dashboards of the spec. Log dashboards are scoped to the stream label platform="ai-platform" (every
// selector starts with it); metrics dashboards are cluster-wide.
import { PLATFORM_NAME } from "../../platform/labels";
import { BUDGET_SHARE, BUDGET_THRESHOLDS } from "../usage-rules";
import { type Dashboard, dashboard, type PanelSpec, variable } from "./model";

const PLATFORM = `platform="${PLATFORM_NAME}"`;
/**
 * Error lines (RE2, as LogQL runs it): a level field of error severity in logfmt (`level=error`, Loki, Alloy,
 * Grafana, Prometheus) or JSON (`"level":"error"` from the endpoint pickers; pino's numeric `"level":50` and `60`
 * from the gateway), a line that starts with the level (vLLM's `ERROR 07-10 …`), a Python traceback or a Go panic.
 * Not a bare "error" anywhere: the gateway's request lines carry `errorCode` keys for refused requests (401, 429).
 */
export const ERROR_LINE_REGEX = String.raw`(?i)(\blevel="?(error|fatal|critical|panic)\b|"level":\s*"?(error|fatal|critical|panic|50|60)\b|^(error|critical|fatal)\b|traceback \(most recent call last\)|\bpanic:)`;
const ERROR_FILTER = `|~ ${JSON.stringify(ERROR_LINE_REGEX)}`;

export function overviewDashboard(): Dashboard {
  return dashboard({
    uid: "ai-platform-overview",
    title: "AI Platform · Overview",
    description: "The first dashboard to open: is the platform logging, and how much of it is errors.",
    tags: ["ai-platform", "logs"],
    kind: "logstore",
    panels: [
      {
        type: "timeseries",
        title: "Log rate by subsystem",
        description: "Lines per second by app.kubernetes.io/part-of (app-shaide, app-serving). A subsystem at zero stopped logging, or the collector stopped shipping it.",
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
        description: "Error lines over all lines. A jump matters more than the level.",
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
    description: "From \"there are errors\" to the lines.",
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
      { type: "logs", title: "Error lines", description: "A gateway line's requestId finds the request in the model server's log (sent as x-request-id). Choosing a model leaves out the gateway (no model_slug).", exprs: [{ expr: `${sel} ${ERROR_FILTER}` }], w: 24, h: 14 },
    ],
  });
}

export function shaideLogExplorerDashboard(): Dashboard {
  const sel = `{${PLATFORM}, part_of="app-shaide", component=~"$component"}`;
  return dashboard({
    uid: "app-shaide-logs",
    title: "app-shaide · Log Explorer",
    description: "The other stack's platform pods; empty while none carries the platform label.",
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
    description: "The model servers, as the serving part labels them.",
    tags: ["ai-platform", "logs", "app-serving"],
    kind: "logstore",
    variables: [
      variable("logstore", "category", "Category", { label: "model_category", selector: base }),
      variable("logstore", "model", "Model", { label: "model_slug", selector: base }),
      variable("logstore", "nodegroup", "Node group", { label: "nodegroup", selector: base }),
    ],
    panels: [
      { type: "timeseries", title: "Log rate by category", exprs: [{ expr: `sum by (model_category) (rate(${sel}[5m]))`, legend: "{{model_category}}" }], w: 8 },
      { type: "timeseries", title: "Log rate by model", description: "A model going flat while others log has stopped serving.", exprs: [{ expr: `sum by (model_slug) (rate(${sel}[5m]))`, legend: "{{model_slug}}" }], w: 8 },
      { type: "timeseries", title: "Log rate by node group", description: "Only models with a nodeGroup appear here.", exprs: [{ expr: `sum by (nodegroup) (rate(${sel}[5m]))`, legend: "{{nodegroup}}" }], w: 8 },
      {
        type: "timeseries",
        title: "Errors by model",
        exprs: [{ expr: `sum by (model_slug) (count_over_time(${sel} ${ERROR_FILTER} [5m]))`, legend: "{{model_slug}}" }],
        w: 24,
      },
      { type: "logs", title: "Model server logs", description: "vLLM's output: weight loading, CUDA errors, out-of-memory (requests are in the gateway's log).", exprs: [{ expr: sel }], w: 24, h: 16 },
    ],
  });
}

/** The GPU panels' data comes from an exporter the platform does not deploy; the panels say so. */
const DCGM_NOTE =
  "From the NVIDIA DCGM exporter (DCGM_FI_*), not deployed by the platform (the NVIDIA GPU Operator ships it; annotate it for scraping): empty without it.";

export function nodeMetricsDashboard(): Dashboard {
  const inst = `instance=~"$instance"`;
  const fs = `fstype!~"tmpfs|overlay|squashfs", ${inst}`;
  const nic = `device!~"lo|veth.*|cali.*|flannel.*|cni.*", ${inst}`;
  return dashboard({
    uid: "cluster-node-metrics",
    title: "Cluster · Node Metrics",
    description: "Nodes, from node-exporter; GPUs, from a DCGM exporter when one is installed.",
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
        title: "GPU utilisation (needs a DCGM exporter)",
        description: DCGM_NOTE,
        exprs: [{ expr: `avg by (Hostname, gpu) (DCGM_FI_DEV_GPU_UTIL)`, legend: "{{Hostname}} GPU {{gpu}}" }],
        unit: "percent",
      },
      {
        type: "timeseries",
        title: "GPU memory used (needs a DCGM exporter)",
        description: DCGM_NOTE,
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
    description: "CPU, memory, restarts and readiness of every pod, from cAdvisor and kube-state-metrics.",
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
        description: "What the kubelet compares with the memory limit.",
        exprs: [{ expr: `sum by (namespace, pod) (container_memory_working_set_bytes{container!="", ${sel}})`, legend: "{{namespace}}/{{pod}}" }],
        unit: "bytes",
      },
      {
        type: "timeseries",
        title: "Container restarts (1h)",
        description: "A model server restarting during its first load: its startup probe gave up before the weights loaded (docs/models.md, Startup and shutdown).",
        exprs: [{ expr: `sum by (namespace, pod) (increase(kube_pod_container_status_restarts_total{${sel}}[1h]))`, legend: "{{namespace}}/{{pod}}" }],
      },
      {
        type: "stat",
        title: "Pods not ready",
        description: "Running or Pending pods whose Ready condition is false; completed and failed pods (a finished Job's) are not counted.",
        exprs: [{ expr: `sum(kube_pod_status_ready{condition="false", ${sel}} and on (namespace, pod) (kube_pod_status_phase{phase=~"Pending|Running", ${sel}} == 1)) or vector(0)` }],
      },
    ],
  });
}

/** p50, p90 and p99 of a histogram, summed over the pods that report it, by `by`. */
function quantiles(metric: string, by: string, selector: string) {
  return [0.5, 0.9, 0.99].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (le, ${by}) (rate(${metric}_bucket{${selector}}[5m])))`,
    legend: `p${q * 100} {{${by}}}`,
  }));
}

/**
 * The gateway's own metrics (gateway/src/observability/metrics.ts), scraped from its pods by the
 * `kubernetes-pods` job through the prometheus.io annotations. The top panels compare the models; below them one row
 * per model selected in `$model` (Grafana repeats it) shows that model alone.
 */
export function gatewayDashboard(): Dashboard {
  const m = `model=~"$model"`;
  const inference = `endpoint=~"/v1/chat/completions|/v1/completions|/v1/responses|/v1/embeddings", ${m}`;
  // One row per model: inside it `$model` is that model alone.
  const one = `model="$model"`;
  return dashboard({
    uid: "ai-platform-gateway",
    title: "AI Platform · Gateway",
    description: "The gateway's own metrics, per gateway pod, summed by the panels (or each replica counted once). The top rows compare the models; the last repeats per model selected.",
    tags: ["ai-platform", "metrics", "gateway"],
    kind: "metrics",
    // Models and their LoRA adapters, each a model of its own in the gateway's metrics.
    variables: [variable("metrics", "model", "Model", { label: "model", selector: '{__name__=~"gateway_models_ready|gateway_adapters_ready"}' })],
    panels: [
      { type: "row", title: "All models", exprs: [] },
      { type: "timeseries", title: "Requests per second by model", exprs: [{ expr: `sum by (model) (rate(gateway_requests_total{${inference}}[5m]))`, legend: "{{model}}" }], unit: "reqps" },
      {
        type: "timeseries",
        title: "Errors by status",
        description: "429: saturation or a per-key limit (the refusals panel tells which), 503 no ready replica, 502/504 the model servers, 499 a client gone.",
        exprs: [{ expr: `sum by (status) (rate(gateway_requests_total{status!~"2..", ${m}}[5m]))`, legend: "{{status}}" }],
        unit: "reqps",
      },
      { type: "timeseries", title: "Time to first token (streams)", description: "Queueing, prefill and the gateway's wait queue together.", exprs: quantiles("gateway_time_to_first_token_seconds", "model", m), unit: "s" },
      { type: "timeseries", title: "Request latency", exprs: quantiles("gateway_request_duration_seconds", "model", m), unit: "s" },
      { type: "timeseries", title: "Inter-token latency", description: "Rises as a model server's batch fills.", exprs: quantiles("gateway_inter_token_latency_seconds", "model", m), unit: "s" },
      {
        type: "timeseries",
        title: "Tokens per second by model",
        description: "As the model servers report them, the numbers the per-key token limits charge.",
        exprs: [{ expr: `sum by (model, type) (rate(gateway_tokens_total{${m}}[5m]))`, legend: "{{model}} {{type}}" }],
        unit: "short",
      },
      {
        type: "timeseries",
        title: "Saturated replicas (share)",
        description: "Share of a model's replicas at their concurrency cap or load thresholds: at 1 new requests queue, then get 429 model_saturated; near 1 for long, add replicas. Averaged: every gateway pod reports every replica.",
        exprs: [{ expr: `avg by (model) (gateway_replica_saturated{${m}})`, legend: "{{model}}" }],
        unit: "percentunit",
      },
      {
        type: "timeseries",
        title: "Waiting for room",
        description: "Requests waiting for a replica of the model, by the key's priority, and the p90 wait of those placed; refusals by reason (queue_full, displaced, timeout, no_memory, no_replica).",
        exprs: [
          { expr: `sum by (model, priority) (gateway_model_queued_requests{${m}})`, legend: "{{model}} {{priority}} waiting" },
          { expr: `histogram_quantile(0.9, sum by (le, model) (rate(gateway_queue_wait_seconds_bucket{${m}}[5m])))`, legend: "{{model}} p90 wait (s)" },
          { expr: `sum by (model, reason) (rate(gateway_queue_refusals_total{${m}}[5m]))`, legend: "{{model}} refused: {{reason}}" },
        ],
      },
      {
        type: "timeseries",
        title: "Ready replicas and requests in flight",
        description: "Ready replicas, each counted once (ready when any gateway pod sees it so); 0: the model answers 503, unlisted (alert ModelDown).",
        exprs: [
          { expr: `sum by (model) (max by (model, replica) (gateway_replica_ready{${m}}))`, legend: "{{model}} ready replicas" },
          { expr: `sum by (model) (gateway_requests_in_flight{${m}})`, legend: "{{model}} in flight" },
        ],
      },
      {
        type: "timeseries",
        title: "Rate-limit refusals by key",
        description: "Refusals by per-key limits, by key name (limit: requests, tokens, concurrency, budget_tokens, budget_requests, or store_unavailable when Redis is down and the gateway fails closed).",
        exprs: [{ expr: `sum by (key, limit) (rate(gateway_rate_limit_refusals_total[5m]))`, legend: "{{key}} {{limit}}" }],
        unit: "reqps",
      },
      {
        type: "timeseries",
        title: "Event loop delay",
        description: "How late each gateway pod's event loop ran in the window its last scrape closed (30 s or more), p99 and longest: every request the pod holds waits that long (alert GatewayEventLoopDelay).",
        exprs: [
          { expr: "max by (pod) (gateway_event_loop_delay_p99_seconds)", legend: "{{pod}} p99" },
          { expr: "max by (pod) (gateway_event_loop_delay_max_seconds)", legend: "{{pod}} longest" },
        ],
        unit: "s",
      },
      { type: "row", title: "Usage by key", exprs: [] },
      {
        type: "timeseries",
        title: "Tokens per second by key",
        exprs: [{ expr: `sum by (key, type) (rate(gateway_tokens_total{${m}}[5m]))`, legend: "{{key}} {{type}}" }],
        unit: "short",
        w: 12,
      },
      {
        type: "table",
        title: "Tokens by key and model over the dashboard's time range",
        description: "Each key's counters' increase, summed over gateway pods, within the metrics server's retention; the billing record is the usage ledger (`npm run usage`).",
        exprs: [{ expr: `sum by (key, model, type) (increase(gateway_tokens_total{${m}}[$__range]))`, legend: "{{key}} {{model}} {{type}}" }],
        unit: "short",
        w: 12,
      },
      {
        type: "bargauge",
        title: "Budget used by key",
        description: "Each key's share of each budget, the newest read of any gateway pod: orange from 80% (alert KeyBudgetNearlySpent), red at 100% (KeyBudgetSpent).",
        exprs: [{ expr: BUDGET_SHARE, legend: "{{key}} {{resource}} per {{period}}" }],
        unit: "percentunit",
        max: BUDGET_THRESHOLDS.spent,
        thresholds: [BUDGET_THRESHOLDS.nearlySpent, BUDGET_THRESHOLDS.spent],
        w: 12,
      },
      {
        type: "timeseries",
        title: "Usage ledger writes",
        description: "Per gateway pod: writes in 5 minutes by outcome, hours of counts unwritten, seconds since a write succeeded (an idle pod writes nothing). Pending with no success: UsageLedgerWritesFailing.",
        exprs: [
          { expr: "sum by (pod, outcome) (increase(gateway_usage_ledger_writes_total[5m]))", legend: "{{pod}} {{outcome}}" },
          { expr: "max by (pod) (gateway_usage_ledger_pending_objects)", legend: "{{pod}} pending" },
          { expr: "time() - max by (pod) (gateway_usage_ledger_last_write_timestamp_seconds)", legend: "{{pod}} s since a write" },
        ],
        w: 12,
      },
      { type: "row", title: "Model $model", repeat: "model", exprs: [] },
      {
        type: "timeseries",
        title: "Requests per second by status",
        exprs: [{ expr: `sum by (status) (rate(gateway_requests_total{${one}}[5m]))`, legend: "{{status}}" }],
        unit: "reqps",
        w: 8,
      },
      { type: "timeseries", title: "Time to first token", exprs: quantiles("gateway_time_to_first_token_seconds", "model", one), unit: "s", w: 8 },
      { type: "timeseries", title: "Time between tokens", exprs: quantiles("gateway_inter_token_latency_seconds", "model", one), unit: "s", w: 8 },
      {
        type: "timeseries",
        title: "Replicas: ready, saturated, requests in flight",
        description: "Which replica is out, full or busy.",
        exprs: [
          { expr: `max by (replica) (gateway_replica_ready{${one}})`, legend: "ready {{replica}}" },
          { expr: `max by (replica) (gateway_replica_saturated{${one}})`, legend: "saturated {{replica}}" },
          { expr: `sum by (replica) (gateway_replica_in_flight{${one}})`, legend: "in flight {{replica}}" },
        ],
        w: 12,
      },
      {
        type: "timeseries",
        title: "Tokens per second",
        exprs: [{ expr: `sum by (type) (rate(gateway_tokens_total{${one}}[5m]))`, legend: "{{type}}" }],
        unit: "short",
        w: 12,
      },
    ],
  });
}

/**
 * The model servers themselves (vLLM's metrics, from the pods the scrape annotations expose: see
 * infra/monitoring/serving-observability.ts) and their endpoint pickers. `$model` is vLLM's `model_name` (the
 * served model name, the id clients send); one row per selected model, panels per pod inside it.
 */
/** The model servers' decode Deployments (the modelservice chart's `<fullname>-decode`), which KEDA scales. */
const DECODE = 'deployment=~".+-decode"';

export function modelServingDashboard(): Dashboard {
  const one = `model_name="$model"`;
  const byPod = (metric: string) => `sum by (pod) (${metric}{${one}})`;
  return dashboard({
    uid: "ai-platform-model-serving",
    title: "AI Platform · Model Serving",
    description: "The model servers' own metrics (vLLM's) and their endpoint pickers'; the last row repeats per model selected, with panels per pod.",
    tags: ["ai-platform", "metrics", "serving"],
    kind: "metrics",
    variables: [variable("metrics", "model", "Model", { label: "model_name", selector: "vllm:num_requests_running" })],
    panels: [
      { type: "row", title: "Endpoint pickers", exprs: [] },
      {
        type: "timeseries",
        title: "Ready pods per pool",
        description: "Model-server pods each endpoint picker (InferencePool gaie-<slug>) can route to; 0: its route answers 503.",
        exprs: [{ expr: "max by (name) (inference_pool_ready_pods)", legend: "{{name}}" }],
        w: 8,
      },
      {
        type: "timeseries",
        title: "Average queue per pool",
        exprs: [{ expr: "max by (name) (inference_pool_average_queue_size)", legend: "{{name}}" }],
        w: 8,
      },
      {
        type: "timeseries",
        title: "Average KV-cache use per pool",
        exprs: [{ expr: "max by (name) (inference_pool_average_kv_cache_utilization)", legend: "{{name}}" }],
        unit: "percentunit",
        w: 8,
      },
      { type: "row", title: "Autoscaling", exprs: [] },
      {
        type: "timeseries",
        title: "Replicas per model",
        description: "Decode Deployments (`ms-<slug>-…-decode`): the count KEDA and its HPA ask for, and ready pods.",
        exprs: [
          { expr: `sum by (deployment) (kube_deployment_spec_replicas{${DECODE}})`, legend: "{{deployment}} desired" },
          { expr: `sum by (deployment) (kube_deployment_status_replicas_ready{${DECODE}})`, legend: "{{deployment}} ready" },
        ],
        w: 8,
      },
      {
        type: "timeseries",
        title: "Held requests",
        description: "Requests the gateway holds for a model at zero replicas while it wakes, and how they ended.",
        exprs: [
          { expr: "sum by (model) (gateway_model_held_requests)", legend: "{{model}} held" },
          { expr: "sum by (model, outcome) (rate(gateway_held_requests_total[5m]))", legend: "{{model}} {{outcome}}" },
        ],
        w: 8,
      },
      {
        type: "timeseries",
        title: "Time to wake",
        description: "p90 from the first held request to the first ready replica.",
        exprs: [{ expr: "histogram_quantile(0.9, sum by (le, model) (rate(gateway_model_wake_seconds_bucket[5m])))", legend: "p90 {{model}}" }],
        unit: "s",
        w: 8,
      },
      {
        type: "timeseries",
        title: "Scale events",
        description: "Wakes from zero, and changes of each decode Deployment's desired replicas, per hour.",
        exprs: [
          { expr: "sum by (model) (increase(gateway_model_wakes_total[1h]))", legend: "{{model}} wakes" },
          { expr: `sum by (deployment) (changes(kube_deployment_spec_replicas{${DECODE}}[1h]))`, legend: "{{deployment}} replica changes" },
        ],
        w: 12,
      },
      {
        type: "timeseries",
        title: "Autoscaler errors",
        description: "Failed trigger queries per ScaledObject: meanwhile KEDA does not scale, a model at zero cannot wake.",
        exprs: [{ expr: "sum by (scaledObject) (rate(keda_scaler_detail_errors_total[5m]))", legend: "{{scaledObject}}" }],
        unit: "reqps",
        w: 12,
      },
      ...loraPanels(),
      { type: "row", title: "Model $model", repeat: "model", exprs: [] },
      {
        type: "timeseries",
        title: "Requests running and waiting",
        description: "Per pod. Waiting above 0 for long: the pod is at --max-num-seqs or out of KV cache.",
        exprs: [
          { expr: byPod("vllm:num_requests_running"), legend: "running {{pod}}" },
          { expr: byPod("vllm:num_requests_waiting"), legend: "waiting {{pod}}" },
        ],
        w: 8,
      },
      {
        type: "timeseries",
        title: "KV-cache usage",
        description: "Share of KV-cache blocks in use, per pod (0–1). Near 1: requests queue or are preempted (alert KVCacheSaturated at 0.9).",
        exprs: [{ expr: `max by (pod) (vllm:kv_cache_usage_perc{${one}})`, legend: "{{pod}}" }],
        unit: "percentunit",
        w: 8,
      },
      {
        type: "timeseries",
        title: "Prefix-cache hit rate",
        description: "Share of prompt tokens found in the prefix cache, per pod: prefix-aware routing shows here.",
        exprs: [{ expr: `sum by (pod) (rate(vllm:prefix_cache_hits_total{${one}}[5m])) / sum by (pod) (rate(vllm:prefix_cache_queries_total{${one}}[5m]))`, legend: "{{pod}}" }],
        unit: "percentunit",
        w: 8,
      },
      {
        type: "timeseries",
        title: "Time to first token",
        description: "At the model server (queueing and prefill), whatever the request's path; alert TimeToFirstTokenSLO at p90 > 2 s.",
        exprs: quantiles("vllm:time_to_first_token_seconds", "model_name", one),
        unit: "s",
        w: 8,
      },
      {
        type: "timeseries",
        title: "Inter-token latency",
        exprs: quantiles("vllm:inter_token_latency_seconds", "model_name", one),
        unit: "s",
        w: 8,
      },
      {
        type: "timeseries",
        title: "Tokens per second",
        description: "Prompt tokens processed and tokens generated, per pod.",
        exprs: [
          { expr: `sum by (pod) (rate(vllm:prompt_tokens_total{${one}}[5m]))`, legend: "prompt {{pod}}" },
          { expr: `sum by (pod) (rate(vllm:generation_tokens_total{${one}}[5m]))`, legend: "generated {{pod}}" },
        ],
        unit: "short",
        w: 8,
      },
    ],
  });
}

/** Keeps a per-`model` series of the gateway's only for LoRA adapters (vLLM's own metrics count them under the base model). */
export const ADAPTERS_ONLY = "and on (model) gateway_adapters_ready";

/** The LoRA adapters as the gateway sees them: each a model of its own (requests, tokens, latency), and their loads. */
function loraPanels(): PanelSpec[] {
  return [
    { type: "row", title: "LoRA adapters", exprs: [] },
    {
      type: "timeseries",
      title: "Requests per second by adapter",
      exprs: [{ expr: `sum by (model) (rate(gateway_requests_total[5m])) ${ADAPTERS_ONLY}`, legend: "{{model}}" }],
      unit: "reqps",
      w: 8,
    },
    {
      type: "timeseries",
      title: "Tokens per second by adapter",
      exprs: [{ expr: `sum by (model, type) (rate(gateway_tokens_total[5m])) ${ADAPTERS_ONLY}`, legend: "{{model}} {{type}}" }],
      unit: "short",
      w: 8,
    },
    {
      type: "timeseries",
      title: "Request latency by adapter (p90)",
      description: "At the gateway, including the first request on a replica waiting for the adapter's load.",
      exprs: [{ expr: `histogram_quantile(0.9, sum by (le, model) (rate(gateway_request_duration_seconds_bucket[5m]))) ${ADAPTERS_ONLY}`, legend: "p90 {{model}}" }],
      unit: "s",
      w: 8,
    },
    {
      type: "timeseries",
      title: "Adapter loads and evictions",
      description: "Loads the gateway made on a replica (a failure answered its requests 503 adapter_load_failed), and adapters it unloaded for another. Many evictions: too few slots or replicas.",
      exprs: [
        { expr: "sum by (adapter, outcome) (increase(gateway_lora_adapter_loads_total[5m]))", legend: "{{adapter}} load {{outcome}}" },
        { expr: "sum by (adapter) (increase(gateway_lora_adapter_evictions_total[5m]))", legend: "{{adapter}} evicted" },
      ],
      w: 12,
    },
    {
      type: "timeseries",
      title: "Adapter load time (p90)",
      exprs: [{ expr: "histogram_quantile(0.9, sum by (le, model) (rate(gateway_lora_adapter_load_seconds_bucket[5m])))", legend: "p90 {{model}}" }],
      unit: "s",
      w: 12,
    },
  ];
}

/** Dashboards deployed when `dashboards` (and `viewer`) are enabled. */
export function logDashboards(): Dashboard[] {
  return [overviewDashboard(), errorExplorerDashboard(), shaideLogExplorerDashboard(), servingLogExplorerDashboard()];
}

/** Dashboards deployed when `dashboards` and `metrics` are enabled. */
export function metricsDashboards(): Dashboard[] {
  return [nodeMetricsDashboard(), podResourcesDashboard(), gatewayDashboard(), modelServingDashboard()];
}
