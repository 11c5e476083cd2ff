// The `monitoring:` key table, validated by one zod schema with one error message naming every offending key.
import { configProblems } from "../platform/config-testing";
import { parseMonitoringConfig, REQUIRED_BY_COMPONENT } from "./config";
import { fullConfig, rawNamespace } from "./testing";

const LABEL_DOMAIN = "ai-platform.io";
/** `null` = no platform:labelDomain in the stack. */
const parse = (overrides: Record<string, string | undefined> = {}, labelDomain: string | null = LABEL_DOMAIN) =>
  parseMonitoringConfig(rawNamespace(fullConfig(overrides)), labelDomain ?? undefined);
const problems = configProblems;

describe("monitoring config", () => {
  test("the full dev-like configuration parses into per-component settings", () => {
    const c = parse();
    expect([...c.components]).toEqual(["logstore", "viewer", "collector", "dashboards", "metrics"]);
    expect(c.logstore).toMatchObject({
      version: "14.1.0",
      storageClass: "hostpath",
      s3: { endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", bucket: "logstore-chunks", user: "logstore" },
      s3ClientImage: "amazon/aws-cli:latest",
    });
    expect(c.logstore?.chartPath).toMatch(/\/charts\/logstore-14\.1\.0\.tgz$/);
    expect(c.viewer?.chartPath).toMatch(/\/charts\/viewer-12\.3\.2\.tgz$/);
    expect(c.collector).toMatchObject({ version: "1.8.1", labelDomain: LABEL_DOMAIN });
    expect(c.metrics?.chartPath).toMatch(/\/charts\/metrics-29\.21\.0\.tgz$/);
    expect(c.metrics?.storageClass).toBe("premium-rwo");
    expect(c.dashboards).toEqual({ logs: true, metrics: true });
    expect(c.nodeSelector).toEqual({});
    expect(c.cloudProvider).toBe("on-prem");
  });

  test("the secret values never enter the parsed configuration", () => {
    const text = JSON.stringify(parse(), (_k, v: unknown) => (v instanceof Set ? [...v] : v));
    expect(text).not.toContain("s3-pass");
    expect(text).not.toContain("viewer-pass");
  });

  const alwaysRequired = ["components", "cloudProvider", "s3Password"];
  test.each(alwaysRequired)("missing %s fails naming it", (key) => {
    const lines = problems(() => parse({ [`monitoring:${key}`]: undefined }));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monitoring:${key}: required\\b`)));
  });

  const perComponent = Object.entries(REQUIRED_BY_COMPONENT).flatMap(([component, keys]) => keys.map((k) => [component, k] as const));
  test.each(perComponent)("%s enabled and %s missing fails naming it", (component, key) => {
    const lines = problems(() => parse({ [`monitoring:${key}`]: undefined }));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monitoring:${key}: required because ${component} is enabled`)));
  });

  test("keys of components that are not enabled may be absent", () => {
    const c = parse({
      "monitoring:components": JSON.stringify(["viewer"]),
      "monitoring:logstoreVersion": undefined,
      "monitoring:collectorVersion": undefined,
      "monitoring:s3Endpoint": undefined,
      "monitoring:s3BucketLogstore": undefined,
      "monitoring:s3User": undefined,
    }, null);
    expect(c.logstore).toBeUndefined();
    expect(c.collector).toBeUndefined();
    expect(c.viewer).toBeDefined();
  });

  test("optional keys (storage classes, ChartPath overrides, s3ClientImage, nodeSelector) may be absent", () => {
    const c = parse({ "monitoring:logstoreStorageClass": undefined, "monitoring:metricsStorageClass": undefined });
    expect(c.logstore?.storageClass).toBeUndefined();
    expect(c.metrics?.storageClass).toBeUndefined();
  });

  test("one message names every offending key: missing, wrong type, unknown component, unknown key", () => {
    let message = "";
    try {
      parse({
        "monitoring:components": JSON.stringify(["logstore", "grafana"]),
        "monitoring:s3User": undefined,
        "monitoring:logstoreVersion": "latest",
        "monitoring:nodeSelector": "gpu",
        "monitoring:cloudProvider": undefined,
        "monitoring:s3Endpoint": "objectstore:9000",
        "monitoring:retention": "14d",
      });
    } catch (e) {
      message = (e as Error).message;
    }
    for (const key of ["components [1]", "s3User", "logstoreVersion", "nodeSelector", "cloudProvider", "s3Endpoint", "retention"]) {
      expect(message).toContain(`monitoring:${key}`);
    }
    expect(message).toContain("unknown key");
    expect(message.split("\n")[0]).toMatch(/^Invalid stack configuration \(\d+ problems\):$/);
  });

  test("components must be a list", () => {
    expect(problems(() => parse({ "monitoring:components": "logstore" }))[0]).toMatch(/^monitoring:components: .*expected array/);
  });

  test("a component listed twice is rejected", () => {
    expect(problems(() => parse({ "monitoring:components": JSON.stringify(["viewer", "viewer"]) }))).toContain(
      "monitoring:components: must not list a component twice",
    );
  });

  test("dashboards needs viewer listed too", () => {
    const lines = problems(() => parse({ "monitoring:components": JSON.stringify(["logstore", "dashboards"]) }));
    expect(lines).toContain("monitoring:components: dashboards needs viewer listed too (the viewer loads them)");
  });

  test("metrics dashboards only with metrics", () => {
    expect(parse({ "monitoring:components": JSON.stringify(["viewer", "dashboards"]) }).dashboards).toEqual({ logs: true, metrics: false });
  });

  test("the collector needs the shared platform:labelDomain, validated as a DNS subdomain", () => {
    expect(problems(() => parse({}, null))).toContain("platform:labelDomain: required (shared label domain of platform pods)");
    expect(problems(() => parse({}, "Not_A_Domain")).some((l) => l.startsWith("platform:labelDomain:"))).toBe(true);
    // Reported together with the monitoring: problems, in one message.
    const lines = problems(() => parse({ "monitoring:collectorVersion": undefined }, null));
    expect(lines).toEqual(expect.arrayContaining(["monitoring:collectorVersion: required because collector is enabled", "platform:labelDomain: required (shared label domain of platform pods)"]));
  });

  test("wrong types and formats are rejected", () => {
    const bad: Record<string, string> = {
      "monitoring:s3BucketLogstore": "Logstore_Chunks",
      "monitoring:logstoreStorageClass": "Fast SSD",
      "monitoring:viewerEmbedding": JSON.stringify({ subPath: "grafana/" }),
      "monitoring:nodeSelector": JSON.stringify({ gpu: 1 }),
    };
    const lines = problems(() => parse(bad));
    for (const k of Object.keys(bad)) expect(lines.some((l) => l.startsWith(k))).toBe(true);
  });

  test("nodeSelector and the viewer embedding block are read", () => {
    const c = parse({
      "monitoring:nodeSelector": JSON.stringify({ "kubernetes.io/os": "linux" }),
      "monitoring:viewerEmbedding": JSON.stringify({ subPath: "/monitoring/viewer" }),
    });
    expect(c.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
    expect(c.viewer?.embedding).toEqual({ subPath: "/monitoring/viewer" });
  });

  test("collector tolerations: every NoSchedule taint by default; a list replaces it; bad ones fail naming the key", () => {
    expect(parse().collector?.tolerations).toEqual([{ operator: "Exists", effect: "NoSchedule" }]);
    const custom = [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }, { key: "dedicated", operator: "Equal", value: "inference", effect: "NoExecute", tolerationSeconds: 60 }];
    expect(parse({ "monitoring:collectorTolerations": JSON.stringify(custom) }).collector?.tolerations).toEqual(custom);
    for (const bad of [[{ key: "gpu", operator: "Exists", value: "x" }], [{ effect: "NoSchedule" }], [{ operator: "Exists", effect: "Sometimes" }], [{ key: "a", operator: "Exists", tolerationSeconds: 5 }]]) {
      const lines = problems(() => parse({ "monitoring:collectorTolerations": JSON.stringify(bad) }));
      expect({ bad, named: lines.some((l) => l.startsWith("monitoring:collectorTolerations")) }).toEqual({ bad, named: true });
    }
  });

  test("the label domain labels every monitoring pod when set, even without the collector", () => {
    expect(parse({ "monitoring:components": JSON.stringify(["logstore"]) }).labelDomain).toBe(LABEL_DOMAIN);
    expect(parse({ "monitoring:components": JSON.stringify(["logstore"]) }, null).labelDomain).toBeUndefined();
  });

  test("an empty secret counts as missing", () => {
    expect(problems(() => parse({ "monitoring:viewerAdminPassword": "" }))).toContain(
      "monitoring:viewerAdminPassword: required because viewer is enabled (pulumi config set --secret monitoring:viewerAdminPassword …)",
    );
  });
});
