// The alert rules: every expression parses with Prometheus' own grammar (@prometheus-io/lezer-promql), and the rule
// file passes the real promtool: `promtool check rules` (what the server would refuse to load) and `promtool test
// rules` on synthetic series, each alert once where it must fire and once where it must not. promtool comes from
// Debian's `prometheus` package (.ci/apt-packages); without it locally those two tests are skipped, in CI they run.
import { parser as promqlParser } from "@prometheus-io/lezer-promql";
import { ALERT_PLATFORM_LABEL, ALERT_RULES, alertingRulesFile, type AlertRule } from "./alert-rules";
import { referencedMetrics, sourceOf } from "./dashboards/metric-catalogue";
import { promtool, withPromtool } from "./promtool-testing";

function parseErrors(expr: string): number {
  let n = 0;
  promqlParser.parse(expr).iterate({ enter: (node) => void (node.type.isError && n++) });
  return n;
}

/** An alert as promtool expects it: the rule's labels and its annotations with the labels filled in. */
function expected(rule: AlertRule, labels: Record<string, string>, value = "") {
  const fill = (s: string) => s.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, k: string) => labels[k] ?? "").replace(/\{\{ \$value \}\}/g, value);
  return {
    exp_labels: { ...labels, severity: rule.severity, ...ALERT_PLATFORM_LABEL },
    exp_annotations: { summary: fill(rule.summary), runbook: rule.runbook, runbook_url: "docs/monitoring.md#alerts" },
  };
}
const rule = (name: string): AlertRule => {
  const r = ALERT_RULES.find((x) => x.alert === name);
  if (!r) throw new Error(`no alert ${name}`);
  return r;
};

/** One promtool unit test per alert: series where it fires and series where it must not. */
function unitTests() {
  const job = { namespace: "monitoring", job_name: "logstore-create-bucket" };
  const ds = { namespace: "monitoring", daemonset: "collector" };
  return [
    {
      interval: "1m",
      input_series: [
        { series: 'gateway_models_ready{model="down", pod="gw-1"}', values: "0x10" },
        { series: 'gateway_models_ready{model="down", pod="gw-2"}', values: "0x10" },
        { series: 'gateway_models_ready{model="up", pod="gw-1"}', values: "1x10" },
        { series: 'gateway_models_ready{model="up", pod="gw-2"}', values: "0x10" },
        // A model that may sleep, at zero: not down.
        { series: 'gateway_models_ready{model="asleep", pod="gw-1"}', values: "0x10" },
        { series: 'gateway_model_held_requests{model="asleep", pod="gw-1"}', values: "0x10" },
      ],
      alert_rule_test: [
        { eval_time: "3m", alertname: "ModelDown", exp_alerts: [] },
        { eval_time: "7m", alertname: "ModelDown", exp_alerts: [expected(rule("ModelDown"), { model: "down" })] },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'gateway_held_requests_total{model="cold", outcome="timed_out", pod="gw-1"}', values: "0 0 0 0 0 3 3 3 3 3" },
        { series: 'gateway_held_requests_total{model="warm", outcome="released", pod="gw-1"}', values: "0+5x10" },
      ],
      alert_rule_test: [
        { eval_time: "3m", alertname: "ModelWakeTimedOut", exp_alerts: [] },
        { eval_time: "6m", alertname: "ModelWakeTimedOut", exp_alerts: [expected(rule("ModelWakeTimedOut"), { model: "cold" })] },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'gateway_requests_total{model="bad", status="500", endpoint="/v1/chat/completions"}', values: "0+10x30" },
        { series: 'gateway_requests_total{model="bad", status="200", endpoint="/v1/chat/completions"}', values: "0+90x30" },
        { series: 'gateway_requests_total{model="ok", status="503", endpoint="/v1/chat/completions"}', values: "0+1x30" },
        { series: 'gateway_requests_total{model="ok", status="200", endpoint="/v1/chat/completions"}', values: "0+99x30" },
      ],
      alert_rule_test: [{ eval_time: "20m", alertname: "GatewayServerErrors", exp_alerts: [expected(rule("GatewayServerErrors"), { model: "bad" })] }],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'gateway_event_loop_delay_p99_seconds{pod="gw-slow"}', values: "0.02x5 0.3x20" },
        { series: 'gateway_event_loop_delay_p99_seconds{pod="gw-fine"}', values: "0.02x25" },
        { series: 'gateway_event_loop_delay_p99_seconds{pod="gw-blip"}', values: "0.02x5 0.5x3 0.02x17" },
      ],
      alert_rule_test: [
        { eval_time: "10m", alertname: "GatewayEventLoopDelay", exp_alerts: [] },
        { eval_time: "20m", alertname: "GatewayEventLoopDelay", exp_alerts: [expected(rule("GatewayEventLoopDelay"), { pod: "gw-slow" })] },
      ],
    },
    {
      interval: "1m",
      input_series: [
        ...[["0.5", "0"], ["1", "0"], ["2.5", "0"], ["5", "10"], ["+Inf", "10"]].map(([le, inc]) => ({ series: `vllm:time_to_first_token_seconds_bucket{model_name="slow", pod="a", le="${le}"}`, values: `0+${inc}x40` })),
        ...["0.5", "1", "2.5", "5", "+Inf"].map((le) => ({ series: `vllm:time_to_first_token_seconds_bucket{model_name="fast", pod="b", le="${le}"}`, values: "0+10x40" })),
      ],
      alert_rule_test: [
        { eval_time: "10m", alertname: "TimeToFirstTokenSLO", exp_alerts: [] },
        { eval_time: "30m", alertname: "TimeToFirstTokenSLO", exp_alerts: [expected(rule("TimeToFirstTokenSLO"), { model_name: "slow" })] },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'vllm:kv_cache_usage_perc{model_name="m", pod="full", engine="0"}', values: "0.95x20" },
        { series: 'vllm:kv_cache_usage_perc{model_name="m", pod="fine", engine="0"}', values: "0.5x20" },
      ],
      alert_rule_test: [{ eval_time: "16m", alertname: "KVCacheSaturated", exp_alerts: [expected(rule("KVCacheSaturated"), { model_name: "m", pod: "full" })] }],
    },
    {
      // Three models scaled by KEDA: "full" at its maximum with a growing queue (fires), "steady" at its maximum with
      // a queue that does not grow, "room" with a growing queue but replicas left to add.
      interval: "1m",
      input_series: [
        ...(
          [
            ["full", 2, 2, "1+1x40"],
            ["steady", 2, 2, "5x40"],
            ["room", 1, 3, "1+1x40"],
          ] as const
        ).flatMap(([name, current, max, waiting]) => {
          const hpa = `namespace="app-serving", horizontalpodautoscaler="keda-hpa-model-${name}"`;
          const deployment = `ms-${name}-llm-d-modelservice-decode`;
          return [
            { series: `kube_horizontalpodautoscaler_status_current_replicas{${hpa}}`, values: `${current}x40` },
            { series: `kube_horizontalpodautoscaler_spec_max_replicas{${hpa}}`, values: `${max}x40` },
            { series: `kube_horizontalpodautoscaler_info{${hpa}, scaletargetref_kind="Deployment", scaletargetref_name="${deployment}"}`, values: "1x40" },
            ...["7d9f8b6c4-abcde", "7d9f8b6c4-fghij"].map((pod) => ({ series: `vllm:num_requests_waiting{namespace="app-serving", pod="${deployment}-${pod}", model_name="${name}"}`, values: waiting })),
          ];
        }),
      ],
      alert_rule_test: [
        { eval_time: "10m", alertname: "ModelAtMaxReplicasQueueGrowing", exp_alerts: [] },
        {
          eval_time: "35m",
          alertname: "ModelAtMaxReplicasQueueGrowing",
          exp_alerts: [expected(rule("ModelAtMaxReplicasQueueGrowing"), { namespace: "app-serving", deployment: "ms-full-llm-d-modelservice-decode" })],
        },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: 'loki_discarded_samples_total{reason="rate_limited", tenant="fake"}', values: "0+5x20" },
        { series: 'loki_request_duration_seconds_count{route="loki_api_v1_push", status_code="500", method="POST"}', values: "0+2x20" },
        { series: 'loki_request_duration_seconds_count{route="loki_api_v1_push", status_code="204", method="POST"}', values: "0+100x20" },
      ],
      alert_rule_test: [
        {
          eval_time: "15m",
          alertname: "LogstoreIngestionErrors",
          exp_alerts: [expected(rule("LogstoreIngestionErrors"), { reason: "rate_limited" }), expected(rule("LogstoreIngestionErrors"), { status_code: "500" })],
        },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: `kube_job_failed{namespace="monitoring", job_name="logstore-create-bucket", condition="true"}`, values: "0 0 1 1" },
        { series: `kube_job_failed{namespace="monitoring", job_name="logstore-create-bucket", condition="false"}`, values: "1 1 0 0" },
        { series: `kube_job_failed{namespace="other", job_name="logstore-create-bucket", condition="true"}`, values: "1 1 1 1" },
      ],
      alert_rule_test: [
        { eval_time: "1m", alertname: "LogstoreBucketJobFailed", exp_alerts: [] },
        { eval_time: "3m", alertname: "LogstoreBucketJobFailed", exp_alerts: [expected(rule("LogstoreBucketJobFailed"), { ...job, condition: "true" })] },
      ],
    },
    {
      interval: "1m",
      input_series: [
        { series: `kube_daemonset_status_desired_number_scheduled{namespace="monitoring", daemonset="collector"}`, values: "3x30" },
        { series: `kube_daemonset_status_number_available{namespace="monitoring", daemonset="collector"}`, values: "3x5 2x25" },
        { series: `kube_daemonset_status_desired_number_scheduled{namespace="monitoring", daemonset="metrics-prometheus-node-exporter"}`, values: "3x30" },
        { series: `kube_daemonset_status_number_available{namespace="monitoring", daemonset="metrics-prometheus-node-exporter"}`, values: "0x30" },
      ],
      alert_rule_test: [
        { eval_time: "15m", alertname: "CollectorNotOnEveryNode", exp_alerts: [] },
        { eval_time: "25m", alertname: "CollectorNotOnEveryNode", exp_alerts: [expected(rule("CollectorNotOnEveryNode"), ds, "1")] },
      ],
    },
  ];
}

describe("alert rules", () => {
  test("the ten alerts the platform needs, each with a runbook line", () => {
    expect(ALERT_RULES.map((r) => r.alert)).toEqual([
      "ModelDown",
      "ModelWakeTimedOut",
      "GatewayServerErrors",
      "GatewayEventLoopDelay",
      "TimeToFirstTokenSLO",
      "KVCacheSaturated",
      "ModelAtMaxReplicasQueueGrowing",
      "LogstoreIngestionErrors",
      "LogstoreBucketJobFailed",
      "CollectorNotOnEveryNode",
    ]);
    for (const r of ALERT_RULES) expect(r.runbook.split("\n")).toHaveLength(1);
  });

  test.each(ALERT_RULES.map((r) => [r.alert, r.expr] as const))("%s parses as PromQL and reads only metrics their exporters expose", (_name, expr) => {
    expect({ expr, errors: parseErrors(expr) }).toEqual({ expr, errors: 0 });
    const metrics = referencedMetrics(expr);
    expect(metrics.length).toBeGreaterThan(0);
    for (const m of metrics) expect({ m, known: sourceOf(m) !== undefined }).toEqual({ m, known: true });
  });

  test("the grammar does reject a broken rule (the check can fail)", () => {
    expect(parseErrors("max by (model) (gateway_models_ready == 0")).toBeGreaterThan(0);
  });

  withPromtool("promtool check rules accepts the file the server loads", () => {
    expect(promtool("check", alertingRulesFile())).toEqual({ status: 0, out: expect.stringContaining(`SUCCESS: ${ALERT_RULES.length} rules found`) });
  });

  withPromtool("promtool test rules: each alert fires on its symptom, and only there", () => {
    expect(promtool("test", alertingRulesFile(), unitTests())).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool("promtool does fail a rule unit test that expects the wrong thing (the check can fail)", () => {
    const wrong = unitTests().slice(0, 1);
    wrong[0]!.alert_rule_test[0]!.exp_alerts = [expected(rule("ModelDown"), { model: "up" })];
    expect(promtool("test", alertingRulesFile(), wrong).status).not.toBe(0);
  });
});
