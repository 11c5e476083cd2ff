// The dashboards: titles, datasources, real panels, every expression parsed by the official grammars, every metric
// one its exporter really exposes, and the queries that had bugs evaluated by the real promtool on synthetic series.
import { parser as logqlParser } from "@grafana/lezer-logql";
import { parser as promqlParser } from "@prometheus-io/lezer-promql";
import { dashboardJson, selectDashboards } from "../dashboards";
import { ERROR_LINE_REGEX, gatewayDashboard, logDashboards, metricsDashboards, podResourcesDashboard } from "./definitions";
import { referencedMetrics, sourceOf } from "./metric-catalogue";
import { GRAFANA_TIME_VARIABLES, withGrafanaTimes, type Dashboard } from "./model";
import { promtool, withPromtool } from "../promtool-testing";

type Tree = ReturnType<typeof logqlParser.parse>;

/** Error nodes (`⚠`) anywhere in the tree mean the expression is invalid. */
function errors(tree: Tree): number {
  let n = 0;
  tree.iterate({ enter: (node) => void (node.type.isError && n++) });
  return n;
}

/** Texts of all nodes of one type. */
function nodesOf(tree: Tree, source: string, type: string): string[] {
  const out: string[] = [];
  tree.iterate({ enter: (node) => void (node.type.name === type && out.push(source.slice(node.from, node.to))) });
  return out;
}

const exprs = (d: Dashboard) => d.panels.flatMap((p) => p.targets.map((t) => t.expr));
const all = [...logDashboards(), ...metricsDashboards()];

describe("dashboards", () => {
  test("the six dashboards of the spec plus the gateway's and the model servers', with unique uids", () => {
    expect(all.map((d) => d.title)).toEqual([
      "AI Platform · Overview",
      "AI Platform · Error Explorer",
      "app-shaide · Log Explorer",
      "app-serving · Model Log Explorer",
      "Cluster · Node Metrics",
      "Cluster · Pod Resource Usage",
      "AI Platform · Gateway",
      "AI Platform · Model Serving",
    ]);
    expect(new Set(all.map((d) => d.uid)).size).toBe(8);
    expect(selectDashboards(false)).toHaveLength(4);
    expect(selectDashboards(true)).toHaveLength(8);
  });

  test.each(logDashboards().map((d) => [d.title, d] as const))("%s: log store datasource, LogQL parses, scoped to platform", (_t, d) => {
    expect(d.panels.length).toBeGreaterThanOrEqual(2);
    for (const p of d.panels) {
      expect(p.datasource).toEqual({ type: "loki", uid: "logstore" });
      for (const t of p.targets) expect(t.datasource).toEqual({ type: "loki", uid: "logstore" });
    }
    for (const e of exprs(d)) {
      const tree = logqlParser.parse(e);
      expect({ e, errors: errors(tree) }).toEqual({ e, errors: 0 });
      const selectors = nodesOf(tree, e, "Selector");
      expect(selectors.length).toBeGreaterThan(0);
      for (const s of selectors) expect(s).toMatch(/^\{platform="ai-platform"[,}]/);
    }
    expect(d.panels.some((p) => p.type === "timeseries")).toBe(true);
  });

  test.each(metricsDashboards().map((d) => [d.title, d] as const))("%s: metrics datasource, PromQL parses", (_t, d) => {
    for (const p of d.panels) expect(p.datasource).toEqual({ type: "prometheus", uid: "metrics" });
    for (const e of exprs(d)) expect({ e, errors: errors(promqlParser.parse(withGrafanaTimes(e))) }).toEqual({ e, errors: 0 });
  });

  test.each(metricsDashboards().map((d) => [d.title, d] as const))("%s: every metric is one its exporter exposes", (_t, d) => {
    for (const e of exprs(d)) {
      const metrics = referencedMetrics(e);
      expect(metrics.length).toBeGreaterThan(0);
      for (const m of metrics) expect({ e, m, known: sourceOf(m) !== undefined }).toEqual({ e, m, known: true });
    }
  });

  test("the catalogue does reject an unknown or misspelt metric (the check can fail)", () => {
    expect(sourceOf("vllm:gpu_cache_usage_perc")).toBeUndefined();
    expect(sourceOf("gateway_request_total")).toBeUndefined();
    expect(sourceOf("vllm:time_to_first_token_seconds_bucket")?.exposedBy).toMatch(/vLLM/);
    expect(sourceOf("gateway_requests_total")?.reference).toBe("gateway/src/observability/metrics.ts");
  });

  test("rows: the gateway and model-serving dashboards repeat a row per selected model", () => {
    for (const d of [gatewayDashboard(), ...metricsDashboards().filter((x) => x.uid === "ai-platform-model-serving")]) {
      const rows = d.panels.filter((p) => p.type === "row");
      const repeated = rows.find((p) => p.repeat === "model");
      expect(repeated?.title).toBe("Model $model");
      const v = d.templating.list.find((x) => x.name === "model");
      expect(v).toMatchObject({ multi: true, includeAll: true });
      // The panels after the repeated row select that one model exactly.
      const after = d.panels.slice(d.panels.indexOf(repeated as (typeof d.panels)[number]) + 1);
      expect(after.length).toBeGreaterThan(3);
      for (const p of after) for (const t of p.targets) expect(t.expr).toMatch(/model(_name)?="\$model"/);
    }
  });

  test("the error filter matches error lines of every component, not errorCode keys or lower pino levels", () => {
    // LogQL's regex is RE2: `(?i)` becomes the i flag; the constructs used (\b, \s, ^) mean the same in JS.
    const re = new RegExp(ERROR_LINE_REGEX.replace(/^\(\?i\)/, ""), "i");
    const errors = [
      '{"level":50,"time":"2026-01-01T00:00:00Z","service":"gateway","msg":"upstream failed"}',
      '{"level":60,"msg":"fatal"}',
      '{"level":"error","ts":"2026-01-01T00:00:00Z","msg":"failed to refresh metrics"}',
      'level=error ts=2026-01-01T00:00:00Z caller=flush.go msg="failed to flush"',
      'time=2026-01-01T00:00:00Z level=ERROR source=main.go msg="opening storage failed"',
      "ERROR 07-10 12:00:00 [engine.py:123] EngineCore failed to start.",
      "Traceback (most recent call last):",
      "panic: runtime error: invalid memory address",
    ];
    const others = [
      '{"level":30,"msg":"request","status":429,"errorCode":"model_saturated"}',
      '{"level":40,"msg":"retrying","errorCode":"upstream_reset"}',
      'level=info msg="no error found"',
      "INFO 07-10 12:00:00 [api_server.py:1] Started server process",
      '{"level":"info","msg":"error budget ok"}',
    ];
    for (const l of errors) expect({ l, match: re.test(l) }).toEqual({ l, match: true });
    for (const l of others) expect({ l, match: re.test(l) }).toEqual({ l, match: false });
  });

  withPromtool("fixed queries, evaluated by promtool: not-ready pods skip finished Job pods; ready replicas are not multiplied by gateway pods", () => {
    const notReady = podResourcesDashboard().panels.find((p) => p.title === "Pods not ready")?.targets[0]?.expr as string;
    const ready = gatewayDashboard().panels.find((p) => p.title === "Ready replicas and requests in flight")?.targets[0]?.expr as string;
    const anything = (e: string) => e.replace(/\$\w+/g, ".*");
    const tests = [
      {
        interval: "1m",
        input_series: [
          // A running pod not ready, a ready one, and the bucket Job's completed pod (Ready false, phase Succeeded).
          { series: 'kube_pod_status_ready{namespace="app", pod="web-1", condition="false"}', values: "1x5" },
          { series: 'kube_pod_status_phase{namespace="app", pod="web-1", phase="Running"}', values: "1x5" },
          { series: 'kube_pod_status_ready{namespace="app", pod="web-2", condition="false"}', values: "0x5" },
          { series: 'kube_pod_status_phase{namespace="app", pod="web-2", phase="Running"}', values: "1x5" },
          { series: 'kube_pod_status_ready{namespace="monitoring", pod="logstore-create-bucket-x", condition="false"}', values: "1x5" },
          { series: 'kube_pod_status_phase{namespace="monitoring", pod="logstore-create-bucket-x", phase="Succeeded"}', values: "1x5" },
          { series: 'kube_pod_status_phase{namespace="monitoring", pod="logstore-create-bucket-x", phase="Running"}', values: "0x5" },
          // Two gateway pods each see the same two ready replicas of model m.
          ...["gw-1", "gw-2"].flatMap((gw) => ["http://10.0.0.1:8000", "http://10.0.0.2:8000"].map((replica) => ({ series: `gateway_replica_ready{model="m", replica="${replica}", pod="${gw}"}`, values: "1x5" }))),
        ],
        promql_expr_test: [
          { expr: anything(notReady), eval_time: "2m", exp_samples: [{ labels: "{}", value: 1 }] },
          { expr: anything(ready), eval_time: "2m", exp_samples: [{ labels: '{model="m"}', value: 2 }] },
        ],
      },
    ];
    expect(promtool("test", { groups: [] }, tests)).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool("LoRA adapters on the model-serving dashboard: the gateway's series of adapters only, not of their base models", () => {
    const panel = (title: string) => metricsDashboards().find((d) => d.uid === "ai-platform-model-serving")!.panels.find((p) => p.title === title)!.targets[0]!.expr;
    const tests = [
      {
        interval: "1m",
        input_series: [
          ...["gw-1", "gw-2"].map((pod) => ({ series: `gateway_adapters_ready{model="base-sql", parent="base", pod="${pod}"}`, values: "1x5" })),
          { series: 'gateway_requests_total{model="base-sql", endpoint="/v1/chat/completions", status="200", key="k", pod="gw-1"}', values: "0+60x5" },
          { series: 'gateway_requests_total{model="base-sql", endpoint="/v1/chat/completions", status="200", key="k", pod="gw-2"}', values: "0+60x5" },
          { series: 'gateway_requests_total{model="base", endpoint="/v1/chat/completions", status="200", key="k", pod="gw-1"}', values: "0+600x5" },
        ],
        promql_expr_test: [{ expr: panel("Requests per second by adapter"), eval_time: "5m", exp_samples: [{ labels: '{model="base-sql"}', value: 2 }] }],
      },
    ];
    expect(promtool("test", { groups: [] }, tests)).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  withPromtool("budgets on the gateway dashboard: each key's share of each budget is the newest read of any pod, not a sum over pods", () => {
    const share = gatewayDashboard().panels.find((p) => p.title === "Budget used by key")!.targets[0]!.expr;
    const series = (pod: string, key: string, resource: string, limit: number, used: number) => {
      const labels = `namespace="ai-gateway", pod="${pod}", key="${key}", resource="${resource}", period="month"`;
      return [
        { series: `gateway_key_budget_limit{${labels}}`, values: `${limit}x5` },
        { series: `gateway_key_budget_used{${labels}}`, values: `${used}x5` },
      ];
    };
    const tests = [
      {
        interval: "1m",
        // Two pods read team-a's tokens at different times (600 then 900 of 1000); team-a's requests on one pod.
        input_series: [...series("gw-1", "team-a", "tokens", 1000, 600), ...series("gw-2", "team-a", "tokens", 1000, 900), ...series("gw-1", "team-a", "requests", 200, 50)],
        promql_expr_test: [
          {
            expr: share,
            eval_time: "2m",
            exp_samples: [
              { labels: '{namespace="ai-gateway", key="team-a", resource="tokens", period="month"}', value: 0.9 },
              { labels: '{namespace="ai-gateway", key="team-a", resource="requests", period="month"}', value: 0.25 },
            ],
          },
        ],
      },
    ];
    expect(promtool("test", { groups: [] }, tests)).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });

  test("the grammars do reject broken expressions (the check can fail)", () => {
    expect(errors(logqlParser.parse('sum(rate({platform="ai-platform"} [5m]'))).toBeGreaterThan(0);
    expect(errors(promqlParser.parse("rate(node_cpu_seconds_total[5m]"))).toBeGreaterThan(0);
  });

  test("every $variable an expression uses is defined by its dashboard", () => {
    for (const d of all) {
      const defined = new Set<string>([...d.templating.list.map((v) => v.name), ...GRAFANA_TIME_VARIABLES]);
      for (const e of exprs(d)) for (const [, name] of e.matchAll(/\$(\w+)/g)) expect([d.uid, name, defined.has(name ?? "")]).toEqual([d.uid, name, true]);
    }
  });

  test("content per the spec table", () => {
    const text = (uid: string) => JSON.stringify(all.find((d) => d.uid === uid));
    const titles = (uid: string) => all.find((d) => d.uid === uid)?.panels.map((p) => p.title) ?? [];
    expect(titles("ai-platform-overview")).toEqual(expect.arrayContaining(["Log rate by subsystem", "Error rate by subsystem"]));
    for (const v of ["namespace", "component", "model"]) expect(text("ai-platform-errors")).toContain(`"name":"${v}"`);
    expect(titles("app-shaide-logs")).toEqual(["Log rate by component", "Log stream"]);
    for (const l of ["model_category", "model_slug", "nodegroup"]) expect(text("app-serving-model-logs")).toContain(`sum by (${l})`);
    const node = text("cluster-node-metrics");
    for (const m of ["node_cpu_seconds_total", "node_memory_MemAvailable_bytes", "node_filesystem_avail_bytes", "node_network_receive_bytes_total", "node_load1", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"]) {
      expect(node).toContain(m);
    }
    const pod = all.find((d) => d.uid === "cluster-pod-resources");
    expect(pod?.templating.list.map((v) => v.name)).toEqual(["namespace", "pod"]);
    for (const m of ["container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "kube_pod_container_status_restarts_total", "kube_pod_status_ready"]) {
      expect(JSON.stringify(pod)).toContain(m);
    }
  });

  test("ConfigMap payload is valid Grafana JSON without our bookkeeping field", () => {
    for (const d of all) {
      const json = JSON.parse(dashboardJson(d)) as Record<string, unknown>;
      expect(json.uid).toBe(d.uid);
      expect(json).not.toHaveProperty("datasourceKind");
      expect(Array.isArray(json.panels)).toBe(true);
    }
  });
});
