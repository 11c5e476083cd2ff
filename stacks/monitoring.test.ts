// The monitoring program end to end on Pulumi's mocks: what it declares for a given configuration.
import { isKubernetesObject, toManifest, validateKubernetesObject } from "../infra/platform/k8s-validate";
import { redactSecrets, type ResourceRecord, revealSecrets, runWithMocks } from "../infra/platform/mocks";
import { BUCKET_JOB_NAME } from "../infra/monitoring/constants";
import { fullConfig, SECRET_KEYS, TEST_S3_PASSWORD, TEST_VIEWER_PASSWORD } from "../infra/monitoring/testing";

async function run(overrides: Record<string, string | undefined> = {}): Promise<ResourceRecord[]> {
  const { resources } = await runWithMocks(
    async () => {
      // Import after the mocks are installed, as Pulumi's testing guide requires.
      return (await import("./program")).program().monitoring;
    },
    { config: fullConfig(overrides), secretKeys: SECRET_KEYS },
  );
  return resources;
}

const byType = (rs: ResourceRecord[], type: string) => rs.filter((r) => r.type === type);
const named = (rs: ResourceRecord[], type: string, name: string) => {
  const r = rs.find((x) => x.type === type && x.name === name);
  if (!r) throw new Error(`no ${type} ${name}; have ${rs.map((x) => `${x.type} ${x.name}`).join(", ")}`);
  return r;
};
const CHART = "kubernetes:helm.sh/v4:Chart";

describe("monitoring stack on mocks, every component enabled", () => {
  let rs: ResourceRecord[];
  beforeAll(async () => {
    rs = await run();
  });

  test("declares the namespace, one ComponentResource per component key and the four charts", () => {
    expect(named(rs, "kubernetes:core/v1:Namespace", "monitoring").inputs.metadata).toMatchObject({ name: "monitoring" });
    for (const t of ["Logstore", "Viewer", "Collector", "Metrics", "Dashboards"]) {
      expect(byType(rs, `ai-platform:monitoring:${t}`)).toHaveLength(1);
    }
    expect(byType(rs, CHART).map((r) => r.name).sort()).toEqual(["collector", "logstore", "metrics", "viewer"]);
  });

  test("every Kubernetes object declared directly validates against the Kubernetes OpenAPI schema", () => {
    const objects = rs.filter(isKubernetesObject);
    expect(objects.length).toBeGreaterThanOrEqual(12);
    for (const r of objects) {
      expect(() => validateKubernetesObject(toManifest(r))).not.toThrow();
      expect((toManifest(r).metadata as { namespace?: string }).namespace ?? "monitoring").toBe("monitoring");
    }
  });

  test("charts come from charts/<component>-<version>.tgz and install into monitoring", () => {
    for (const [name, file] of [
      ["logstore", "logstore-14.1.0.tgz"],
      ["viewer", "viewer-12.3.2.tgz"],
      ["collector", "collector-1.8.1.tgz"],
      ["metrics", "metrics-29.21.0.tgz"],
    ] as const) {
      const chart = named(rs, CHART, name);
      expect(String(chart.inputs.chart)).toMatch(new RegExp(`/charts/${file.replace(/\./g, "\\.")}$`));
      expect(chart.inputs.namespace).toBe("monitoring");
    }
  });

  test("the log store chart waits for the bucket Job, which waits for its Secret and script", () => {
    expect(named(rs, CHART, "logstore").dependsOn).toContain(BUCKET_JOB_NAME);
    const job = named(rs, "kubernetes:batch/v1:Job", BUCKET_JOB_NAME);
    expect(job.dependsOn).toEqual(expect.arrayContaining(["logstore-s3-credentials", "logstore-create-bucket-script"]));
  });

  test("omitting a component later leaves its objects in the cluster: everything is retainOnDelete but the bucket Job", () => {
    for (const r of rs.filter((x) => x.type.startsWith("kubernetes:"))) {
      expect([r.type, r.name, r.retainOnDelete]).toEqual([r.type, r.name, r.name !== BUCKET_JOB_NAME]);
    }
    // Helm v4 Charts do not pass retainOnDelete to what they render: a transform marks each rendered object.
    for (const c of byType(rs, CHART)) expect([c.name, c.transforms]).toEqual([c.name, 1]);
  });

  test("everything in the namespace waits for it; viewer, collector and metrics do not wait for the log store", () => {
    for (const r of rs.filter((x) => x.type.startsWith("kubernetes:") && x.type !== "kubernetes:core/v1:Namespace")) {
      expect([r.type, r.name, r.dependsOn.includes("monitoring")]).toEqual([r.type, r.name, true]);
    }
    for (const name of ["viewer", "collector", "metrics"]) {
      const deps = named(rs, CHART, name).dependsOn;
      expect(deps).not.toContain("logstore");
      expect(deps).not.toContain(BUCKET_JOB_NAME);
    }
  });

  test("dashboard ConfigMaps follow the viewer", () => {
    expect(named(rs, "ai-platform:monitoring:Dashboards", "dashboards").dependsOn).toContain("viewer");
  });

  test("secrets reach only Kubernetes Secrets, and as secret values", () => {
    const s3 = named(rs, "kubernetes:core/v1:Secret", "logstore-s3-credentials");
    expect(revealSecrets(s3.inputs.stringData)).toEqual({ AWS_ACCESS_KEY_ID: "logstore", AWS_SECRET_ACCESS_KEY: TEST_S3_PASSWORD });
    const admin = named(rs, "kubernetes:core/v1:Secret", "viewer-admin");
    expect(revealSecrets(admin.inputs.stringData)).toEqual({ "admin-user": "admin", "admin-password": TEST_VIEWER_PASSWORD });
    // Redacted view (what the render shows) has neither password anywhere.
    const shown = JSON.stringify(rs.map((r) => redactSecrets(r.inputs)));
    expect(shown).not.toContain(TEST_S3_PASSWORD);
    expect(shown).not.toContain(TEST_VIEWER_PASSWORD);
    // Nothing but the two Secrets carries a password, even unredacted.
    for (const r of rs.filter((x) => x.type !== "kubernetes:core/v1:Secret")) {
      const plain = JSON.stringify(revealSecrets(r.inputs));
      expect(plain).not.toContain(TEST_S3_PASSWORD);
      expect(plain).not.toContain(TEST_VIEWER_PASSWORD);
    }
  });

  test("the bucket Job reads credentials from the Secret and uses the s3ClientImage default", () => {
    const job = toManifest(named(rs, "kubernetes:batch/v1:Job", BUCKET_JOB_NAME));
    const container = (job as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }).spec.template.spec.containers[0];
    expect(container?.image).toBe("amazon/aws-cli:2.37.5");
    expect(container?.env).toEqual(
      expect.arrayContaining([
        { name: "AWS_ACCESS_KEY_ID", valueFrom: { secretKeyRef: { name: "logstore-s3-credentials", key: "AWS_ACCESS_KEY_ID" } } },
        { name: "AWS_SECRET_ACCESS_KEY", valueFrom: { secretKeyRef: { name: "logstore-s3-credentials", key: "AWS_SECRET_ACCESS_KEY" } } },
        { name: "S3_BUCKET", value: "logstore-chunks" },
        { name: "ATTEMPTS", value: "5" },
      ]),
    );
    expect((job as { spec: { backoffLimit: number } }).spec.backoffLimit).toBe(0);
  });

  test("a NetworkPolicy lets only this namespace's pods reach the log store on 3100", () => {
    const np = toManifest(named(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "logstore")) as {
      spec: { podSelector: unknown; policyTypes: string[]; ingress: { from: unknown[]; ports: unknown[] }[] };
    };
    expect(np.spec.podSelector).toEqual({ matchLabels: { "app.kubernetes.io/instance": "logstore" } });
    expect(np.spec.policyTypes).toEqual(["Ingress"]);
    expect(np.spec.ingress).toEqual([{ from: [{ podSelector: {} }], ports: [{ protocol: "TCP", port: 3100 }] }]);
  });

  test("the viewer is not exposed: no Ingress, LoadBalancer or NodePort anywhere", () => {
    const text = JSON.stringify(rs.map((r) => r.inputs));
    expect(text).not.toMatch(/LoadBalancer|NodePort/);
    expect(rs.some((r) => /Ingress$|HTTPRoute$/.test(r.type))).toBe(false);
    expect((named(rs, CHART, "viewer").inputs.values as { ingress: unknown }).ingress).toEqual({ enabled: false });
  });

  test("the six dashboards of the spec, the gateway's and the model servers' as ConfigMaps labelled grafana_dashboard=1", () => {
    const dash = byType(rs, "kubernetes:core/v1:ConfigMap").filter((r) => r.name.startsWith("dashboard-"));
    expect(dash).toHaveLength(8);
    for (const d of dash) expect((d.inputs.metadata as { labels: Record<string, string> }).labels.grafana_dashboard).toBe("1");
  });

  test("cloudProvider is recorded on the namespace and changes nothing else", async () => {
    const ns = named(rs, "kubernetes:core/v1:Namespace", "monitoring");
    expect((ns.inputs.metadata as { annotations: Record<string, string> }).annotations["ai-platform/cloud-provider"]).toBe("on-prem");
    const other = await run({ "monitoring:cloudProvider": "gke" });
    const strip = (x: ResourceRecord[]) => JSON.stringify(x.filter((r) => r.type !== "kubernetes:core/v1:Namespace").map((r) => [r.type, r.name, redactSecrets(r.inputs)]));
    expect(strip(other)).toBe(strip(rs));
  });
});

describe("components enable and skip", () => {
  test("only the listed components are declared", async () => {
    const rs = await run({ "monitoring:components": JSON.stringify(["logstore"]) });
    expect(byType(rs, CHART).map((r) => r.name)).toEqual(["logstore"]);
    expect(rs.some((r) => r.name === "viewer-admin")).toBe(false);
    expect(rs.some((r) => r.name.startsWith("dashboard-"))).toBe(false);
  });

  test("without logstore there is no bucket Job, no S3 Secret and no NetworkPolicy", async () => {
    const rs = await run({ "monitoring:components": JSON.stringify(["viewer", "metrics"]) });
    expect(byType(rs, CHART).map((r) => r.name).sort()).toEqual(["metrics", "viewer"]);
    expect(rs.some((r) => r.type === "kubernetes:batch/v1:Job" || r.name === "logstore-s3-credentials")).toBe(false);
  });

  test("dashboards without metrics: the four log dashboards only; the viewer gets one datasource", async () => {
    const rs = await run({ "monitoring:components": JSON.stringify(["logstore", "viewer", "dashboards"]) });
    const dash = rs.filter((r) => r.name.startsWith("dashboard-")).map((r) => r.name).sort();
    expect(dash).toEqual(["dashboard-ai-platform-errors", "dashboard-ai-platform-overview", "dashboard-app-serving-model-logs", "dashboard-app-shaide-logs"]);
    const values = named(rs, CHART, "viewer").inputs.values as { datasources: { "datasources.yaml": { datasources: unknown[] } } };
    expect(values.datasources["datasources.yaml"].datasources).toHaveLength(1);
  });

  test("a ChartPath key overrides the archive", async () => {
    const rs = await run({ "monitoring:viewerChartPath": "/mirror/grafana-12.3.2.tgz" });
    expect(named(rs, CHART, "viewer").inputs.chart).toBe("/mirror/grafana-12.3.2.tgz");
  });

  test("s3ClientImage reaches the bucket Job; nodeSelector is loaded and applied to no pod (spec)", async () => {
    const rs = await run({
      "monitoring:s3ClientImage": "registry.local/aws-cli:2.17",
      "monitoring:nodeSelector": JSON.stringify({ "node-role/monitoring": "true" }),
    });
    const job = toManifest(named(rs, "kubernetes:batch/v1:Job", BUCKET_JOB_NAME)) as {
      spec: { template: { spec: { nodeSelector: unknown; containers: { image: string }[] } } };
    };
    expect(job.spec.template.spec.containers[0]?.image).toBe("registry.local/aws-cli:2.17");
    expect(job.spec.template.spec.nodeSelector).toBeUndefined();
    for (const name of ["logstore", "metrics", "viewer", "collector"]) {
      expect(JSON.stringify(named(rs, CHART, name).inputs.values)).not.toContain("node-role/monitoring");
    }
  });

  test("no monitoring: namespace in the stack: nothing is declared", async () => {
    const { resources } = await runWithMocks(
      async () => (await import("./program")).program(),
      { config: { "platform:labelDomain": "ai-platform.io" } },
    );
    expect(resources).toEqual([]);
  });

  test("an invalid configuration fails before anything is declared, naming the keys", async () => {
    const err = await run({ "monitoring:s3User": undefined, "monitoring:cloudProvider": undefined }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("monitoring:s3User");
    expect((err as Error).message).toContain("monitoring:cloudProvider");
  });
});
