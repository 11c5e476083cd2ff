// promtool unit tests (synthetic series, alerts that must and must not fire) of the platform's health rules and of
// the API's burn-rate alerts, and how an alert is expected in them. alert-rules.test.ts runs them.
import { ALERT_PLATFORM_LABEL, ALERT_RULES, alertAnnotations, type AlertRule } from "./alert-rules";
import { BURN_WINDOWS, ratioSeries } from "./slo-rules";

/** An alert as promtool expects it: the rule's labels and its annotations with the labels filled in. */
export function expected(rule: AlertRule, labels: Record<string, string>, value = "") {
  const fill = (s: string) => s.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, k: string) => labels[k] ?? "").replace(/\{\{ \$value \}\}/g, value);
  return {
    exp_labels: { ...labels, severity: rule.severity, ...ALERT_PLATFORM_LABEL },
    exp_annotations: { ...alertAnnotations(rule), summary: fill(rule.summary) },
  };
}

export function rule(name: string): AlertRule {
  const r = ALERT_RULES.find((x) => x.alert === name);
  if (!r) throw new Error(`no alert ${name}`);
  return r;
}

/** kube-state-metrics' series as the metrics server stores them (its own `namespace` label kept: honor_labels). */
const ksm = (name: string, labels: string) => `${name}{job="kubernetes-service-endpoints", service="metrics-kube-state-metrics", ${labels}}`;
const podUp = (namespace: string, pod: string) => `up{job="kubernetes-pods", namespace="${namespace}", pod="${pod}"}`;

/** A Deployment named gateway as kube-state-metrics shows it: wanted and available replicas, and its labels. */
function gateway(namespace: string, r: { wanted: string; available: string; component?: false }) {
  const d = `namespace="${namespace}", deployment="gateway"`;
  return [
    { series: ksm("kube_deployment_spec_replicas", d), values: r.wanted },
    { series: ksm("kube_deployment_status_replicas_available", d), values: r.available },
    { series: ksm("kube_deployment_labels", r.component === false ? d : `${d}, label_app_kubernetes_io_component="gateway"`), values: "1x20" },
  ];
}

/** A model server's decode pod as kube-state-metrics shows it, with the labels the platform and the chart give it. */
const decodePod = (pod: string) => ({
  series: ksm("kube_pod_labels", `namespace="app-serving", pod="${pod}", label_app_kubernetes_io_part_of="app-serving", label_llm_d_ai_role="decode"`),
  values: "1x30",
});

export interface UnitTest {
  interval: string;
  input_series: { series: string; values: string }[];
  alert_rule_test?: { eval_time: string; alertname: string; exp_alerts: ReturnType<typeof expected>[] }[];
  promql_expr_test?: { expr: string; eval_time: string; exp_samples: { labels: string; value: number }[] }[];
}

export function healthUnitTests(): UnitTest[] {
  const day = 86400;
  return [
    {
      interval: "1m",
      input_series: [],
      alert_rule_test: [{ eval_time: "1m", alertname: "Watchdog", exp_alerts: [expected(rule("Watchdog"), {})] }],
    },
    {
      // The platform's gateway loses both pods; its Valkey still answers. A second one's pods answer the scrape on
      // their metrics port but none is ready (no client reaches it). Another team's Deployment named gateway (not the
      // platform's component label) is never scraped nor available, a third platform gateway is fine, a fourth is at 0.
      interval: "1m",
      input_series: [
        ...gateway("ai-gateway", { wanted: "2x20", available: "2x4 0x16" }),
        { series: podUp("ai-gateway", "gateway-7d9f8b6c4-abcde"), values: "1x4 0x16" },
        { series: podUp("ai-gateway", "gateway-7d9f8b6c4-fghij"), values: "1x4 _x16" },
        { series: podUp("ai-gateway", "gateway-redis-5f6d7c8b9-xyz12"), values: "1x20" },
        ...gateway("ai-gateway-unready", { wanted: "2x20", available: "2x4 0x16" }),
        { series: podUp("ai-gateway-unready", "gateway-6b7c8d9e0-aaaaa"), values: "1x20" },
        { series: podUp("ai-gateway-unready", "gateway-6b7c8d9e0-bbbbb"), values: "1x20" },
        ...gateway("team-b", { wanted: "1x20", available: "0x20", component: false }),
        ...gateway("ai-gateway-2", { wanted: "2x20", available: "2x20" }),
        { series: podUp("ai-gateway-2", "gateway-5c6d7e8f9-qwert"), values: "1x20" },
        ...gateway("ai-gateway-idle", { wanted: "0x20", available: "0x20" }),
      ],
      alert_rule_test: [
        { eval_time: "4m", alertname: "GatewayDown", exp_alerts: [] },
        {
          eval_time: "16m",
          alertname: "GatewayDown",
          exp_alerts: [
            expected(rule("GatewayDown"), { namespace: "ai-gateway", deployment: "gateway" }),
            expected(rule("GatewayDown"), { namespace: "ai-gateway-unready", deployment: "gateway" }),
          ],
        },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'gateway_rate_limit_store_up{namespace="ai-gateway", pod="gateway-7d9f8b6c4-abcde", store="redis"}', values: "1x3 0x10" },
        { series: 'gateway_rate_limit_store_up{namespace="ai-gateway", pod="gateway-7d9f8b6c4-fghij", store="redis"}', values: "1x13" },
        { series: 'gateway_rate_limit_store_up{namespace="other", pod="gateway-5c6d7e8f9-qwert", store="redis"}', values: "1x13" },
      ],
      alert_rule_test: [
        { eval_time: "6m", alertname: "RateLimitStoreDown", exp_alerts: [] },
        { eval_time: "10m", alertname: "RateLimitStoreDown", exp_alerts: [expected(rule("RateLimitStoreDown"), { namespace: "ai-gateway" }, "1")] },
      ],
    },
    {
      // One picker's pod fails its scrapes, another answers; a picker of someone else (no gaie- prefix) is ignored.
      interval: "1m",
      input_series: [
        { series: ksm("kube_deployment_spec_replicas", 'namespace="app-serving", deployment="gaie-qwen3-8b-epp"'), values: "1x20" },
        { series: podUp("app-serving", "gaie-qwen3-8b-epp-6c9d7f5b8-k2j4q"), values: "0x20" },
        { series: ksm("kube_deployment_spec_replicas", 'namespace="app-serving", deployment="gaie-bge-small-en-epp"'), values: "1x20" },
        { series: podUp("app-serving", "gaie-bge-small-en-epp-7d8e9f6a5-p3l5m"), values: "1x20" },
        { series: ksm("kube_deployment_spec_replicas", 'namespace="team-b", deployment="pool-epp"'), values: "1x20" },
      ],
      alert_rule_test: [
        { eval_time: "5m", alertname: "EndpointPickerDown", exp_alerts: [] },
        { eval_time: "12m", alertname: "EndpointPickerDown", exp_alerts: [expected(rule("EndpointPickerDown"), { namespace: "app-serving", deployment: "gaie-qwen3-8b-epp" })] },
      ],
    },
    {
      // "a" is available but unscraped; "b" is still loading its weights (none available, no /metrics); "c" is fine;
      // "qwen-decode" is a folder's with `fullnameOverride: qwen`, available and unscraped. Another team's
      // Deployment named like ours, whose pods carry none of the platform's labels, is not watched.
      interval: "1m",
      input_series: [
        { series: ksm("kube_deployment_status_replicas_available", 'namespace="app-serving", deployment="ms-a-llm-d-modelservice-decode"'), values: "1x30" },
        decodePod("ms-a-llm-d-modelservice-decode-7d9f8b6c4-abcde"),
        { series: podUp("app-serving", "ms-a-llm-d-modelservice-decode-7d9f8b6c4-abcde"), values: "0x30" },
        { series: ksm("kube_deployment_status_replicas_available", 'namespace="app-serving", deployment="ms-b-llm-d-modelservice-decode"'), values: "0x30" },
        decodePod("ms-b-llm-d-modelservice-decode-6c8e7a5b4-fghij"),
        { series: podUp("app-serving", "ms-b-llm-d-modelservice-decode-6c8e7a5b4-fghij"), values: "0x30" },
        { series: ksm("kube_deployment_status_replicas_available", 'namespace="app-serving", deployment="ms-c-llm-d-modelservice-decode"'), values: "1x30" },
        decodePod("ms-c-llm-d-modelservice-decode-5b7d6c4a3-klmno"),
        { series: podUp("app-serving", "ms-c-llm-d-modelservice-decode-5b7d6c4a3-klmno"), values: "1x30" },
        { series: ksm("kube_deployment_status_replicas_available", 'namespace="app-serving", deployment="qwen-decode"'), values: "1x30" },
        decodePod("qwen-decode-5f4e3d2c1-pqrst"),
        { series: podUp("app-serving", "qwen-decode-5f4e3d2c1-pqrst"), values: "0x30" },
        { series: ksm("kube_deployment_status_replicas_available", 'namespace="team-b", deployment="ms-x-llm-d-modelservice-decode"'), values: "1x30" },
        { series: ksm("kube_pod_labels", 'namespace="team-b", pod="ms-x-llm-d-modelservice-decode-4d3c2b1a0-uvwxy"'), values: "1x30" },
        { series: podUp("team-b", "ms-x-llm-d-modelservice-decode-4d3c2b1a0-uvwxy"), values: "0x30" },
      ],
      alert_rule_test: [
        { eval_time: "10m", alertname: "ModelServerMetricsMissing", exp_alerts: [] },
        {
          eval_time: "20m",
          alertname: "ModelServerMetricsMissing",
          exp_alerts: [
            expected(rule("ModelServerMetricsMissing"), { namespace: "app-serving", deployment: "ms-a-llm-d-modelservice-decode" }),
            expected(rule("ModelServerMetricsMissing"), { namespace: "app-serving", deployment: "qwen-decode" }),
          ],
        },
      ],
    },
    {
      // The log store's pod disappears (no target at all); every collector pod fails its scrape; the viewer's only
      // replica stops being ready; kube-state-metrics' own scrape fails.
      interval: "1m",
      input_series: [
        { series: ksm("kube_statefulset_replicas", 'namespace="monitoring", statefulset="logstore"'), values: "1x25" },
        { series: podUp("monitoring", "logstore-0"), values: "1x3 _x22" },
        { series: ksm("kube_daemonset_status_desired_number_scheduled", 'namespace="monitoring", daemonset="collector"'), values: "2x25" },
        { series: podUp("monitoring", "collector-x2x4z"), values: "1x3 0x22" },
        { series: podUp("monitoring", "collector-abcde"), values: "1x3 0x22" },
        { series: ksm("kube_deployment_spec_replicas", 'namespace="monitoring", deployment="viewer"'), values: "1x25" },
        { series: ksm("kube_deployment_status_replicas_available", 'namespace="monitoring", deployment="viewer"'), values: "1x3 0x22" },
        { series: 'up{job="kubernetes-service-endpoints", namespace="monitoring", service="metrics-kube-state-metrics"}', values: "1x3 0x22" },
      ],
      alert_rule_test: [
        ...["LogstoreDown", "CollectorDown", "ViewerDown", "KubeStateMetricsDown"].map((alertname) => ({ eval_time: "6m", alertname, exp_alerts: [] })),
        { eval_time: "20m", alertname: "LogstoreDown", exp_alerts: [expected(rule("LogstoreDown"), { namespace: "monitoring", statefulset: "logstore" })] },
        { eval_time: "20m", alertname: "CollectorDown", exp_alerts: [expected(rule("CollectorDown"), { namespace: "monitoring", daemonset: "collector" })] },
        { eval_time: "20m", alertname: "ViewerDown", exp_alerts: [expected(rule("ViewerDown"), { namespace: "monitoring", deployment: "viewer" })] },
        { eval_time: "20m", alertname: "KubeStateMetricsDown", exp_alerts: [expected(rule("KubeStateMetricsDown"), {})] },
      ],
    },
    {
      // time() is the evaluation time: a provided certificate ending at 10 days (one pod still reads it at 9: the
      // newest read counts), one at 60 in another namespace.
      interval: "5m",
      input_series: [
        { series: 'gateway_tls_certificate_expiry_timestamp_seconds{namespace="ai-gateway", pod="gateway-7d9f8b6c4-abcde"}', values: `${10 * day}x30` },
        { series: 'gateway_tls_certificate_expiry_timestamp_seconds{namespace="ai-gateway", pod="gateway-7d9f8b6c4-fghij"}', values: `${9 * day}x30` },
        { series: 'gateway_tls_certificate_expiry_timestamp_seconds{namespace="ai-gateway-b", pod="gateway-5c8d7e9f1-klmno"}', values: `${60 * day}x30` },
      ],
      alert_rule_test: [
        { eval_time: "30m", alertname: "CertificateExpiringSoon", exp_alerts: [] },
        { eval_time: "90m", alertname: "CertificateExpiringSoon", exp_alerts: [expected(rule("CertificateExpiringSoon"), { namespace: "ai-gateway", name: "gateway:exposure.tls.secretName" })] },
      ],
    },
    {
      // time() is the evaluation time: a certificate ending at 10 days, one at 60.
      interval: "5m",
      input_series: [
        { series: 'certmanager_certificate_expiration_timestamp_seconds{namespace="ai-gateway", name="gateway-tls", issuer_name="letsencrypt"}', values: `${10 * day}x30` },
        { series: 'certmanager_certificate_expiration_timestamp_seconds{namespace="ai-gateway", name="fresh-tls", issuer_name="letsencrypt"}', values: `${60 * day}x30` },
      ],
      alert_rule_test: [
        { eval_time: "30m", alertname: "CertificateExpiringSoon", exp_alerts: [] },
        { eval_time: "90m", alertname: "CertificateExpiringSoon", exp_alerts: [expected(rule("CertificateExpiringSoon"), { namespace: "ai-gateway", name: "gateway-tls" })] },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'kubelet_volume_stats_available_bytes{job="kubernetes-nodes", node="n1", namespace="monitoring", persistentvolumeclaim="storage-logstore-0"}', values: "10x30" },
        { series: 'kubelet_volume_stats_capacity_bytes{job="kubernetes-nodes", node="n1", namespace="monitoring", persistentvolumeclaim="storage-logstore-0"}', values: "100x30" },
        { series: 'kubelet_volume_stats_available_bytes{job="kubernetes-nodes", node="n2", namespace="monitoring", persistentvolumeclaim="metrics-server"}', values: "50x30" },
        { series: 'kubelet_volume_stats_capacity_bytes{job="kubernetes-nodes", node="n2", namespace="monitoring", persistentvolumeclaim="metrics-server"}', values: "100x30" },
      ],
      alert_rule_test: [
        { eval_time: "10m", alertname: "VolumeFilling", exp_alerts: [] },
        { eval_time: "20m", alertname: "VolumeFilling", exp_alerts: [expected(rule("VolumeFilling"), { namespace: "monitoring", persistentvolumeclaim: "storage-logstore-0" })] },
      ],
    },
  ];
}

/** Requests per minute by status, as gateway_requests_total counts them. */
function requests(perMinute: Record<string, number>) {
  return Object.entries(perMinute).map(([status, n]) => ({
    series: `gateway_requests_total{model="m", endpoint="/v1/chat/completions", status="${status}", key="team-a", namespace="ai-gateway", pod="gateway-7d9f8b6c4-abcde"}`,
    values: `0+${n}x60`,
  }));
}

/** Streams per minute, and how many of them got their first token within 2.5 s. */
function firstTokens(perMinute: number, fast: number) {
  const labels = 'model="m", namespace="ai-gateway", pod="gateway-7d9f8b6c4-abcde"';
  return [
    { series: `gateway_time_to_first_token_seconds_bucket{${labels}, le="2.5"}`, values: `0+${fast}x60` },
    { series: `gateway_time_to_first_token_seconds_count{${labels}}`, values: `0+${perMinute}x60` },
  ];
}

function burnCase(input: UnitTest["input_series"], objective: "Availability" | "Latency", fires: { fast: boolean; slow: boolean }): UnitTest {
  const at = (speed: "Fast" | "Slow", on: boolean) => {
    const alertname = `Api${objective}Burn${speed}`;
    return { eval_time: "30m", alertname, exp_alerts: on ? [expected(rule(alertname), {})] : [] };
  };
  return { interval: "1m", input_series: input, alert_rule_test: [at("Fast", fires.fast), at("Slow", fires.slow)] };
}

/** A stretch of traffic: so many minutes of `total` events a minute, `bad` of them errors (5xx, or slow first tokens). */
type Stretch = readonly [minutes: number, total: number, bad: number];

/** One count per minute from the first stretch on, after a first sample at minute 0. */
function perMinute(traffic: readonly Stretch[], count: (total: number, bad: number) => number): number[] {
  return traffic.flatMap(([minutes, total, bad]) => Array<number>(minutes).fill(count(total, bad)));
}

/** A counter's samples, one a minute from `base`, in promtool's expanding notation (one term per stretch). */
function counterValues(traffic: readonly Stretch[], count: (total: number, bad: number) => number, base = 1000): string {
  let at = base;
  const terms = [String(base)];
  for (const [minutes, total, bad] of traffic) {
    const n = count(total, bad);
    terms.push(`${at + n}+${n}x${minutes - 1}`);
    at += n * minutes;
  }
  return terms.join(" ");
}

const good = (total: number, bad: number) => total - bad;
const bad = (_total: number, b: number) => b;
const all = (total: number) => total;

/** The objective's counters for `traffic`: answers by status (200 and 503), or streams and those with a fast first token. */
function trafficSeries(objective: "availability" | "latency", traffic: readonly Stretch[]): UnitTest["input_series"] {
  if (objective === "availability") {
    const labels = (status: string) => `gateway_requests_total{model="m", endpoint="/v1/chat/completions", status="${status}", key="team-a", namespace="ai-gateway", pod="gateway-7d9f8b6c4-abcde"}`;
    return [
      { series: labels("200"), values: counterValues(traffic, good) },
      { series: labels("503"), values: counterValues(traffic, bad) },
    ];
  }
  const labels = 'model="m", namespace="ai-gateway", pod="gateway-7d9f8b6c4-abcde"';
  return [
    { series: `gateway_time_to_first_token_seconds_bucket{${labels}, le="2.5"}`, values: counterValues(traffic, good) },
    { series: `gateway_time_to_first_token_seconds_count{${labels}}`, values: counterValues(traffic, all) },
  ];
}

const WINDOW_MINUTES: Readonly<Record<(typeof BURN_WINDOWS)[number], number>> = { "5m": 5, "30m": 30, "1h": 60, "2h": 120, "6h": 360, "1d": 1440, "3d": 4320 };

/** Ratios are compared scaled and rounded (`round(<ratio> * 1e6)`): the server's float arithmetic differs from ours in the last bit. */
const RATIO_SCALE = 1e6;

/**
 * The recorded error ratio of every window at the end of `traffic`, to 6 decimals: errors over events in the window
 * (rate() of each counter, with a sample at each end of the window, is its increase over the window's seconds).
 */
export function expectedRatios(objective: "availability" | "latency", traffic: readonly Stretch[]): { labels: string; value: number }[] {
  const [bads, alls] = [perMinute(traffic, bad), perMinute(traffic, all)];
  const last = (xs: number[], minutes: number) => xs.slice(xs.length - minutes).reduce((a, b) => a + b, 0);
  return BURN_WINDOWS.map((w) => ({ labels: `{}`, value: Math.round((RATIO_SCALE * last(bads, WINDOW_MINUTES[w])) / last(alls, WINDOW_MINUTES[w])) }));
}

/** A traffic whose error ratio differs over each window: errors rise towards the end. 100 events a minute. */
export const RISING_ERRORS: readonly Stretch[] = [
  [10, 100, 0],
  [2880, 100, 1],
  [1080, 100, 2],
  [240, 100, 3],
  [60, 100, 4],
  [30, 100, 5],
  [25, 100, 6],
  [5, 100, 10],
];

const minutesOf = (traffic: readonly Stretch[]) => traffic.reduce((n, [minutes]) => n + minutes, 0);

/** Each window's recorded ratio at the end of `traffic`. */
function recordedRatiosCase(objective: "availability" | "latency", traffic: readonly Stretch[]): UnitTest {
  const evalTime = `${minutesOf(traffic)}m`;
  return {
    interval: "1m",
    input_series: trafficSeries(objective, traffic),
    promql_expr_test: expectedRatios(objective, traffic).map((sample, i) => ({ expr: `round(${ratioSeries(objective, BURN_WINDOWS[i]!)} * ${RATIO_SCALE})`, eval_time: evalTime, exp_samples: [sample] })),
  };
}

/** The availability alerts at given minutes of `traffic`: which fire (`true`) and which stay quiet. */
function availabilityAt(traffic: readonly Stretch[], checks: readonly { minute: number; fast?: boolean; slow?: boolean }[]): UnitTest {
  return {
    interval: "1m",
    input_series: trafficSeries("availability", traffic),
    alert_rule_test: checks.flatMap(({ minute, fast, slow }) =>
      (
        [
          ["ApiAvailabilityBurnFast", fast],
          ["ApiAvailabilityBurnSlow", slow],
        ] as const
      )
        .filter(([, fires]) => fires !== undefined)
        .map(([alertname, fires]) => ({ eval_time: `${minute}m`, alertname, exp_alerts: fires ? [expected(rule(alertname), {})] : [] })),
    ),
  };
}

export function sloUnitTests(): UnitTest[] {
  return [
    // 5% of answers 5xx: 50 times the 0.1% budget.
    burnCase(requests({ "200": 95, "503": 5 }), "Availability", { fast: true, slow: true }),
    // 0.4%: over 3x (0.3%) but under 6x (0.6%).
    burnCase(requests({ "200": 996, "502": 4 }), "Availability", { fast: false, slow: true }),
    // Half refused with 429, some 404 and clients gone: none is the platform's failure.
    burnCase(requests({ "200": 50, "429": 40, "404": 5, "499": 5 }), "Availability", { fast: false, slow: false }),
    // 80% of first tokens slow: over 14.4 times the 5% budget.
    burnCase(firstTokens(10, 2), "Latency", { fast: true, slow: true }),
    // 20%: over 3x (15%) but under 6x (30%).
    burnCase(firstTokens(10, 8), "Latency", { fast: false, slow: true }),
    // 1%: within budget.
    burnCase(firstTokens(100, 99), "Latency", { fast: false, slow: false }),
    // The windows themselves. 3% of answers 5xx (30x) for 40 minutes after 400 clean ones pages while it lasts; 10
    // minutes after it stopped the 1 h ratio is still 2% (over 14.4x) but the 5 min one is clean, and the 6 h one
    // (0.33%) is under 6x: no page.
    availabilityAt(
      [
        [400, 100, 0],
        [40, 100, 3],
        [10, 100, 0],
      ],
      [
        { minute: 440, fast: true },
        { minute: 450, fast: false },
      ],
    ),
    // 10% for the last 5 minutes only: the short windows are over (5 min 10%, 30 min 1.7%), the long ones not (1 h
    // 0.83% under 14.4x, 6 h 0.14% under 6x): no page.
    availabilityAt(
      [
        [400, 100, 0],
        [5, 100, 10],
      ],
      [{ minute: 405, fast: false }],
    ),
  ];
}

/** promtool's evaluation interval for the cases that span days: each minute would take it minutes. */
export const DAYS_EVALUATION_INTERVAL = "10m";

/** Burn-rate cases over days, evaluated every `DAYS_EVALUATION_INTERVAL` (their evaluation times are multiples of it). */
export function sloDaysUnitTests(): UnitTest[] {
  return [
    // 0.2% (2x) after two clean days: one day in, the 3 d ratio (0.067%) is under the budget and nothing fires; three
    // days in, only the 3 d / 6 h pair holds (1 d / 2 h needs 3x): a ticket, no page.
    availabilityAt(
      [
        [2880, 1000, 0],
        [4330, 1000, 2],
      ],
      [
        { minute: 2880 + 1440, fast: false, slow: false },
        { minute: 2880 + 4330, fast: false, slow: true },
      ],
    ),
    // Every window's recorded ratio, each a different value.
    recordedRatiosCase("availability", RISING_ERRORS),
    recordedRatiosCase("latency", RISING_ERRORS),
  ];
}

/** A gateway pod's series of one key's budget: limit, what it last read as used, and the rest. */
function budget(pod: string, key: string, resource: "tokens" | "requests", period: "day" | "month", limit: number, used: string) {
  const labels = `namespace="ai-gateway", pod="${pod}", key="${key}", resource="${resource}", period="${period}"`;
  return [
    { series: `gateway_key_budget_limit{${labels}}`, values: `${limit}x40` },
    { series: `gateway_key_budget_used{${labels}}`, values: used },
  ];
}

/** A gateway pod's usage-ledger series: writes by outcome (counters), and objects pending. */
function ledger(pod: string, r: { success: string; failure: string; pending: string }) {
  const labels = `namespace="ai-gateway", pod="${pod}"`;
  return [
    { series: `gateway_usage_ledger_writes_total{${labels}, outcome="success"}`, values: r.success },
    { series: `gateway_usage_ledger_writes_total{${labels}, outcome="failure"}`, values: r.failure },
    { series: `gateway_usage_ledger_pending_objects{${labels}}`, values: r.pending },
  ];
}

export function usageUnitTests(): UnitTest[] {
  const key = (k: string, resource: string, period: string) => ({ namespace: "ai-gateway", key: k, resource, period });
  return [
    {
      // team-a's monthly tokens: 50%, then 85% as the newest read of one pod (the other lags at 70%), then both read
      // 100%, then the month turns (used 0, one pod a minute later). team-b's daily requests stay at 50%.
      interval: "1m",
      input_series: [
        ...budget("gw-1", "team-a", "tokens", "month", 10000, "5000x5 8500x10 10000x10 0x15"),
        ...budget("gw-2", "team-a", "tokens", "month", 10000, "5000x5 7000x10 10200x10 10200 0x14"),
        ...budget("gw-1", "team-b", "requests", "day", 1000, "500x40"),
      ],
      alert_rule_test: [
        ...["KeyBudgetNearlySpent", "KeyBudgetSpent"].map((alertname) => ({ eval_time: "5m", alertname, exp_alerts: [] })),
        { eval_time: "14m", alertname: "KeyBudgetNearlySpent", exp_alerts: [expected(rule("KeyBudgetNearlySpent"), key("team-a", "tokens", "month"))] },
        { eval_time: "14m", alertname: "KeyBudgetSpent", exp_alerts: [] },
        { eval_time: "24m", alertname: "KeyBudgetNearlySpent", exp_alerts: [] },
        { eval_time: "24m", alertname: "KeyBudgetSpent", exp_alerts: [expected(rule("KeyBudgetSpent"), key("team-a", "tokens", "month"))] },
        // The new month: both resolved once every pod read it.
        ...["KeyBudgetNearlySpent", "KeyBudgetSpent"].map((alertname) => ({ eval_time: "29m", alertname, exp_alerts: [] })),
      ],
    },
    {
      // gw-fails: every write fails from minute 5 while counts pend. gw-blip: 5 minutes of failures, then writes
      // succeed again. gw-idle: nothing pending, no write for long. gw-hung: pending, no write ending at all.
      interval: "1m",
      input_series: [
        ...ledger("gw-fails", { success: "0+6x5 30x35", failure: "0x5 0+6x35", pending: "1x5 2x35" }),
        ...ledger("gw-blip", { success: "0+6x5 30x5 30+6x30", failure: "0x5 0+6x5 30x30", pending: "1x40" }),
        ...ledger("gw-idle", { success: "30x40", failure: "0x40", pending: "0x40" }),
        ...ledger("gw-hung", { success: "0+6x5 30x35", failure: "0x40", pending: "1x40" }),
      ],
      alert_rule_test: [
        { eval_time: "15m", alertname: "UsageLedgerWritesFailing", exp_alerts: [] },
        {
          eval_time: "25m",
          alertname: "UsageLedgerWritesFailing",
          exp_alerts: [
            expected(rule("UsageLedgerWritesFailing"), { namespace: "ai-gateway", pod: "gw-fails" }, "2"),
            expected(rule("UsageLedgerWritesFailing"), { namespace: "ai-gateway", pod: "gw-hung" }, "1"),
          ],
        },
      ],
    },
  ];
}
