// The alert rules: every expression parses with Prometheus' own grammar (@prometheus-io/lezer-promql), and the rule
// file passes the real promtool: `promtool check rules` (what the server would refuse to load) and `promtool test
// rules` on synthetic series, each alert once where it must fire and once where it must not. promtool comes from
// Debian's `prometheus` package (.ci/apt-packages); without it locally those two tests are skipped, in CI they run.
import { parser as promqlParser } from "@prometheus-io/lezer-promql";
import { CatalogSchema } from "../../gateway/src/config/catalog";
import { GatewayMetrics } from "../../gateway/src/observability/metrics";
import { ModelRegistry } from "../../gateway/src/upstream/registry";
import { ALERT_RULES, alertingRulesFile, RECORDING_RULES } from "./alert-rules";
import { DAYS_EVALUATION_INTERVAL, expected, expectedRatios, healthUnitTests, RISING_ERRORS, rule, sloDaysUnitTests, sloUnitTests, usageUnitTests } from "./alert-unit-tests";
import { referencedMetrics, sourceOf } from "./dashboards/metric-catalogue";
import { describeWithCharts, helmTemplate } from "../platform/helm";
import { PINNED_CHARTS } from "../serving/constants";
import { loadModelFolders } from "../serving/model-folders";
import { planModels, type PlannedModel } from "../serving/plan";
import { decodeDeploymentName } from "../serving/scaled-object";
import { DEFAULT_STARTUP_TIMEOUT } from "../serving/startup";
import { serverValuesFor } from "../serving/values";
import { MODEL_SERVER_POD_LABELS } from "./health-rules";
import { buildMetricsValues } from "./metrics-values";
import { promtool, withPromtool } from "./promtool-testing";
import { API_OBJECTIVES } from "./slo-rules";

function parseErrors(expr: string): number {
  let n = 0;
  promqlParser.parse(expr).iterate({ enter: (node) => void (node.type.isError && n++) });
  return n;
}

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
  test("the alerts the platform needs, each with a summary, a description and a runbook line", () => {
    expect(ALERT_RULES.map((r) => r.alert)).toEqual([
      "Watchdog",
      "GatewayDown",
      "RateLimitStoreDown",
      "EndpointPickerDown",
      "ModelServerMetricsMissing",
      "LogstoreDown",
      "CollectorDown",
      "ViewerDown",
      "KubeStateMetricsDown",
      "CertificateExpiringSoon",
      "VolumeFilling",
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
      "KeyBudgetNearlySpent",
      "KeyBudgetSpent",
      "UsageLedgerWritesFailing",
      "ApiAvailabilityBurnFast",
      "ApiAvailabilityBurnSlow",
      "ApiLatencyBurnFast",
      "ApiLatencyBurnSlow",
    ]);
    // Each describes itself in single lines, so a table can be generated from the definitions.
    for (const r of ALERT_RULES) {
      for (const text of [r.summary, r.description, r.runbook]) expect({ alert: r.alert, text, lines: text.split("\n").length, empty: text.trim() === "" }).toEqual({ alert: r.alert, text, lines: 1, empty: false });
    }
    expect(ALERT_RULES.filter((r) => r.severity === "none").map((r) => r.alert)).toEqual(["Watchdog"]);
  });

  const recorded = new Set(RECORDING_RULES.map((r) => r.record));
  test.each([...ALERT_RULES.map((r) => [r.alert, r.expr] as const), ...RECORDING_RULES.map((r) => [r.record, r.expr] as const)])(
    "%s parses as PromQL and reads only metrics their exporters expose, or recorded series",
    (name, expr) => {
      expect({ expr, errors: parseErrors(expr) }).toEqual({ expr, errors: 0 });
      const metrics = referencedMetrics(expr);
      if (name !== "Watchdog") expect(metrics.length).toBeGreaterThan(0);
      for (const m of metrics) expect({ m, known: sourceOf(m) !== undefined || recorded.has(m) }).toEqual({ m, known: true });
    },
  );

  test("every recorded series an alert reads is recorded, and every recorded one is read", () => {
    const read = new Set(ALERT_RULES.flatMap((r) => referencedMetrics(r.expr)).filter((m) => m.includes(":") && !m.startsWith("vllm:")));
    expect([...read].sort()).toEqual([...recorded].sort());
  });

  test("the latency objective's threshold is a bucket bound of the gateway's time-to-first-token histogram, as the server stores it", async () => {
    const metrics = new GatewayMetrics(new ModelRegistry(CatalogSchema.parse({ models: [] })));
    metrics.forModel("m").firstToken(0.1);
    const text = await metrics.registry.metrics();
    const le = String(API_OBJECTIVES.latency.thresholdSeconds);
    expect(text).toContain(`gateway_time_to_first_token_seconds_bucket{le="${le}",model="m"}`);
    // Prometheus 3 writes integer bounds with ".0": a bound without a fraction would select nothing.
    expect(le).toMatch(/\.\d*[1-9]$/);
  });

  test("the object labels the rules read from kube-state-metrics are on its allowlist", () => {
    const ksm = buildMetricsValues({ alertingRules: alertingRulesFile(), fixedUserIds: true })["kube-state-metrics"] as { metricLabelsAllowlist?: string[] };
    const allowed = (ksm.metricLabelsAllowlist ?? []).flatMap((entry) => {
      const [kind, keys] = entry.split("=");
      return (keys ?? "").replace(/^\[|\]$/g, "").split(",").map((k) => `kube_${(kind ?? "").replace(/s$/, "")}_labels:label_${k.replace(/[^a-zA-Z0-9]/g, "_")}`);
    });
    const used = ALERT_RULES.flatMap((r) =>
      [...r.expr.matchAll(/(kube_\w+_labels)\{([^}]*)\}/g)].flatMap((m) => [...(m[2] ?? "").matchAll(/(label_\w+)\s*=/g)].map((l) => `${m[1]}:${l[1]}`)),
    );
    expect(used).toEqual(expect.arrayContaining(["kube_deployment_labels:label_app_kubernetes_io_component", "kube_pod_labels:label_llm_d_ai_role"]));
    for (const u of used) expect(allowed).toContain(u);
  });

  test("the grammar does reject a broken rule (the check can fail)", () => {
    expect(parseErrors("max by (model) (gateway_models_ready == 0")).toBeGreaterThan(0);
  });

  withPromtool("promtool check rules accepts the file the server loads", () => {
    expect(promtool("check", alertingRulesFile())).toEqual({ status: 0, out: expect.stringContaining(`SUCCESS: ${ALERT_RULES.length + RECORDING_RULES.length} rules found`) });
  });

  withPromtool("promtool test rules: each alert fires on its symptom, and only there", () => {
    expect(promtool("test", alertingRulesFile(), unitTests())).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool("promtool test rules: the Watchdog always fires, each component's rule fires when it stops answering and only then", () => {
    expect(promtool("test", alertingRulesFile(), healthUnitTests())).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool("promtool test rules: a key's budget warns at 80% and at 100% by the newest read of any pod, until the period turns; a pod's ledger pages when its counts stay unwritten", () => {
    expect(promtool("test", alertingRulesFile(), usageUnitTests())).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool("promtool does fail a budget alert expected to outlast the period's turn (the check can fail)", () => {
    const wrong = usageUnitTests().slice(0, 1);
    const resolved = wrong[0]!.alert_rule_test!.find((a) => a.alertname === "KeyBudgetSpent" && a.eval_time === "29m")!;
    resolved.exp_alerts = [expected(rule("KeyBudgetSpent"), { namespace: "ai-gateway", key: "team-a", resource: "tokens", period: "month" })];
    expect(promtool("test", alertingRulesFile(), wrong).status).not.toBe(0);
  });

  withPromtool("promtool test rules: the burn-rate alerts page on a fast burn, ticket a slow one, and ignore 4xx, a burn within budget, one that stopped and a burst", () => {
    expect(promtool("test", alertingRulesFile(), sloUnitTests())).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool(
    "promtool test rules over days: a burn at 2x the budget is a ticket only once it lasted about 3 days; each window's ratio is recorded",
    () => {
      expect(promtool("test", alertingRulesFile(), sloDaysUnitTests(), DAYS_EVALUATION_INTERVAL)).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
    },
    60_000,
  );

  test("the traffic that checks the recorded ratios gives each window a different one", () => {
    for (const objective of ["availability", "latency"] as const) {
      const values = expectedRatios(objective, RISING_ERRORS).map((s) => s.value);
      expect(new Set(values).size).toBe(values.length);
      expect(values.every((v) => v > 0)).toBe(true);
    }
  });

  test("every alert fires in at least one promtool case, so a rule without one fails here", () => {
    const firing = new Set([...unitTests(), ...healthUnitTests(), ...usageUnitTests(), ...sloUnitTests(), ...sloDaysUnitTests()].flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    expect(ALERT_RULES.map((r) => r.alert).filter((a) => !firing.has(a))).toEqual([]);
  });

  withPromtool("promtool does fail a component rule that would stay quiet (the check can fail)", () => {
    const wrong = healthUnitTests().filter((t) => t.alert_rule_test?.some((a) => a.alertname === "GatewayDown"));
    for (const t of wrong) for (const a of t.alert_rule_test ?? []) if (a.alertname === "GatewayDown") a.exp_alerts = [];
    expect(promtool("test", alertingRulesFile(), wrong).status).not.toBe(0);
  });

  withPromtool("promtool does fail a rule unit test that expects the wrong thing (the check can fail)", () => {
    const wrong = unitTests().slice(0, 1);
    wrong[0]!.alert_rule_test[0]!.exp_alerts = [expected(rule("ModelDown"), { model: "up" })];
    expect(promtool("test", alertingRulesFile(), wrong).status).not.toBe(0);
  });
});

// ModelServerMetricsMissing finds decode pods by labels: the chart must put them on the pods of the Deployment KEDA
// scales, whatever the folder names it.
describeWithCharts("the model servers' pods carry the labels ModelServerMetricsMissing reads", [{ component: "llm-d-modelservice", version: PINNED_CHARTS["llm-d-modelservice"].version }], ({ helm, archive }) => {
  const [qwen] = planModels(["generative/qwen3-8b"], {}, loadModelFolders(), "deployments/models");
  const renamed: PlannedModel = { ...qwen!, def: { ...qwen!.def, serverValues: { ...qwen!.def.serverValues, fullnameOverride: "qwen" } } };
  test.each([
    ["the folder as shipped", qwen!],
    ["a folder with fullnameOverride", renamed],
  ])("%s", (_name, model) => {
    const values = serverValuesFor(model, { labelDomain: "ai-platform.io", startupTimeout: DEFAULT_STARTUP_TIMEOUT, awaitModelServers: true, drainSeconds: 120 });
    const rendered = helmTemplate(helm, archive("llm-d-modelservice"), `ms-${model.def.slug}`, "app-serving", values);
    const decode = rendered.find((o) => o.kind === "Deployment" && o.metadata.name === decodeDeploymentName(model.def)) as { spec: { template: { metadata: { labels: Record<string, string> } } } } | undefined;
    expect(decode?.spec.template.metadata.labels).toMatchObject(MODEL_SERVER_POD_LABELS);
  });
});
