// The six dashboards: titles, datasources, real panels, and every expression parsed by the official grammars.
import { parser as logqlParser } from "@grafana/lezer-logql";
import { parser as promqlParser } from "@prometheus-io/lezer-promql";
import { dashboardJson, selectDashboards } from "../dashboards";
import { logDashboards, metricsDashboards } from "./definitions";
import type { Dashboard } from "./model";

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
  test("the six dashboards of the spec plus the gateway's, with unique uids", () => {
    expect(all.map((d) => d.title)).toEqual([
      "AI Platform · Overview",
      "AI Platform · Error Explorer",
      "app-shaide · Log Explorer",
      "app-serving · Model Log Explorer",
      "Cluster · Node Metrics",
      "Cluster · Pod Resource Usage",
      "AI Platform · Gateway",
    ]);
    expect(new Set(all.map((d) => d.uid)).size).toBe(7);
    expect(selectDashboards(false)).toHaveLength(4);
    expect(selectDashboards(true)).toHaveLength(7);
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
    for (const e of exprs(d)) expect({ e, errors: errors(promqlParser.parse(e)) }).toEqual({ e, errors: 0 });
  });

  test("the grammars do reject broken expressions (the check can fail)", () => {
    expect(errors(logqlParser.parse('sum(rate({platform="ai-platform"} [5m]'))).toBeGreaterThan(0);
    expect(errors(promqlParser.parse("rate(node_cpu_seconds_total[5m]"))).toBeGreaterThan(0);
  });

  test("every $variable an expression uses is defined by its dashboard", () => {
    for (const d of all) {
      const defined = new Set(d.templating.list.map((v) => v.name));
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
