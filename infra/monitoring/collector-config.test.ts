// The collector's Alloy pipeline against the spec's Collector section and stream label table.
import { buildCollectorConfig, EMPTY_LINE_REGEX, PROBE_LINE_REGEX, podLabelMeta, streamLabels } from "./collector-config";

const DOMAIN = "ai-platform.io";
const config = buildCollectorConfig(DOMAIN, "cluster.local");

/** The `rule { … }` blocks of discovery.relabel, as attribute maps. */
function rules(): Record<string, string>[] {
  const relabel = config.slice(config.indexOf('discovery.relabel "platform_pods"'), config.indexOf("loki.source.kubernetes"));
  return [...relabel.matchAll(/rule \{\n([\s\S]*?)\n {2}\}/g)].map((m) =>
    Object.fromEntries((m[1] ?? "").split("\n").map((l) => l.trim().split(/\s*=\s*/, 2) as [string, string])),
  );
}

describe("collector pipeline", () => {
  test("reads pod logs through the Kubernetes API, discovering pods of its own node", () => {
    expect(config).toMatch(/discovery\.kubernetes "pods" \{\n {2}role = "pod"/);
    expect(config).toContain('field = "spec.nodeName=" + coalesce(sys.env("HOSTNAME"), constants.hostname)');
    expect(config).toContain("loki.source.kubernetes");
    expect(config).not.toContain("local.file_match");
  });

  test("keeps only pods labelled <label_domain>/platform=ai-platform, before anything else", () => {
    expect(rules()[0]).toEqual({ source_labels: '["__meta_kubernetes_pod_label_ai_platform_io_platform"]', regex: '"ai-platform"', action: '"keep"' });
    expect(podLabelMeta("app.kubernetes.io/part-of")).toBe("__meta_kubernetes_pod_label_app_kubernetes_io_part_of");
  });

  const table: [string, string[], boolean][] = [
    ["namespace", ["__meta_kubernetes_namespace"], true],
    ["pod", ["__meta_kubernetes_pod_name"], true],
    ["container", ["__meta_kubernetes_pod_container_name"], true],
    ["job", ["__meta_kubernetes_namespace", "__meta_kubernetes_pod_name"], true],
    ["app", ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], false],
    ["component", ["__meta_kubernetes_pod_label_app_kubernetes_io_component"], false],
    ["part_of", ["__meta_kubernetes_pod_label_app_kubernetes_io_part_of"], false],
    ["managed_by", ["__meta_kubernetes_pod_label_app_kubernetes_io_managed_by"], false],
    ["platform", ["__meta_kubernetes_pod_label_ai_platform_io_platform"], false],
    ["model_slug", ["__meta_kubernetes_pod_label_ai_platform_io_model_slug"], false],
    ["model_category", ["__meta_kubernetes_pod_label_ai_platform_io_model_category"], false],
    ["nodegroup", ["__meta_kubernetes_pod_label_ai_platform_io_nodegroup"], false],
  ];

  test.each(table)("stream label %s from %j (always: %p)", (target, sources, always) => {
    const rule = rules().find((r) => r.target_label === `"${target}"`);
    expect(rule).toBeDefined();
    expect(rule?.source_labels).toBe(`[${sources.map((s) => `"${s}"`).join(", ")}]`);
    // Optional labels only match a non-empty source, so a pod without the label gets no stream label.
    expect(rule?.regex).toBe(always ? '"(.*)"' : '"(.+)"');
    if (target === "job") expect(rule?.separator).toBe('"/"');
  });

  test("exactly the spec's stream labels and nothing else: the last rule keeps only them", () => {
    expect(streamLabels(DOMAIN).map((l) => l.target)).toEqual(table.map((t) => t[0]));
    const last = rules().at(-1);
    expect(last?.action).toBe('"labelkeep"');
    const keep = new RegExp(`^(?:${JSON.parse(last?.regex ?? '""') as string})$`);
    for (const [t] of table) expect(keep.test(t)).toBe(true);
    for (const dropped of ["pod_uid", "pod_ip", "node_ip", "role", "release", "serving", "request_id", "user_id", "path", "instance"]) {
      expect(keep.test(dropped)).toBe(false);
    }
    // Every target label set by a rule is one of the spec's labels.
    const targets = rules().map((r) => r.target_label).filter(Boolean);
    expect(targets.map((t) => JSON.parse(t as string))).toEqual(table.map((t) => t[0]));
  });

  test("drops probe and scrape lines", () => {
    const probe = new RegExp(PROBE_LINE_REGEX);
    for (const line of [
      '10.0.0.1 - - "GET /healthz HTTP/1.1" 200',
      "GET /readyz 200",
      'INFO: 10.1.2.3:5000 - "GET /metrics HTTP/1.1" 200 OK',
      "GET /ready?verbose=1",
      "probe /livez",
      "GET /metrics",
    ]) {
      expect(probe.test(line)).toBe(true);
    }
    for (const line of ['"POST /v1/chat/completions HTTP/1.1" 200', "model ready for requests", "GET /metricsfoo", "loaded /readyness"]) {
      expect(probe.test(line)).toBe(false);
    }
    expect(config).toContain("expression          = `" + PROBE_LINE_REGEX + "`");
  });

  test("drops empty and whitespace-only lines", () => {
    const empty = new RegExp(EMPTY_LINE_REGEX);
    for (const line of ["", "   ", "\t", " \t "]) expect(empty.test(line)).toBe(true);
    for (const line of ["x", "  error  "]) expect(empty.test(line)).toBe(false);
    expect(config).toContain("expression          = `" + EMPTY_LINE_REGEX + "`");
  });

  test("pushes to the log store service at Loki's push path (spec /logstore/api/v1/push)", () => {
    expect(config).toContain('url = "http://logstore.monitoring.svc.cluster.local:3100/loki/api/v1/push"');
  });

  test("the label domain is configurable, not hard-coded", () => {
    const other = buildCollectorConfig("example.org", "cluster.local");
    expect(other).toContain("__meta_kubernetes_pod_label_example_org_platform");
    expect(other).not.toContain("ai_platform_io");
  });
});
