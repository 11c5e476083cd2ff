// `monitoring:alertmanagers` as the real Prometheus chart renders it: the program runs on Pulumi's mocks with three
// Alertmanagers (basic auth with a private CA, a bearer token with a client certificate, plain in-cluster), and the
// pinned chart is rendered by a real `helm template` with exactly the values the program passed. The rendered
// prometheus.yml is then checked by a real promtool with the files the rendered pod mounts.
import { parse } from "yaml";
import { ALERTMANAGER_AUTH } from "../infra/monitoring/alertmanagers";
import { hasPromtool, promtoolCheckConfig } from "../infra/monitoring/promtool-testing";
import { alertingOverrides, fullConfig, TEST_ALERTMANAGER_CREDENTIALS, TEST_ALERTMANAGER_SECRET_VALUES } from "../infra/monitoring/testing";
import { describeWithCharts, type Manifest } from "../infra/platform/helm";
import { allContainers, podOwners } from "../infra/platform/manifests";
import { revealSecrets } from "../infra/platform/mocks";
import { MONITORING_CHARTS, type RenderedMonitoring, renderMonitoring } from "./monitoring-charts";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METRICS_ONLY = { "monitoring:components": JSON.stringify(["metrics"]) };
const withPromtool = hasPromtool || process.env.CI ? test : test.skip;

function find(objects: readonly Manifest[], kind: string, name: string): Obj {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name}`);
  return o as Obj;
}

/** The pod template of the metrics server and its Prometheus container. */
function server(r: RenderedMonitoring) {
  const p = podOwners(r.charts.metrics?.objects ?? []).find((x) => x.name === "metrics-server");
  if (!p) throw new Error("no metrics-server workload");
  const c = allContainers(p).find((x) => x.name === "prometheus-server");
  if (!c) throw new Error("no prometheus-server container");
  return { pod: p, container: c };
}

/** The Alertmanager Secret's data as the program declared it, secrets revealed. */
function authSecretData(r: RenderedMonitoring): Record<string, string> {
  const s = r.resources.find((x) => x.type === "kubernetes:core/v1:Secret" && x.name === ALERTMANAGER_AUTH.secretName);
  if (!s) throw new Error(`no Secret ${ALERTMANAGER_AUTH.secretName}`);
  return (revealSecrets(s.inputs) as Obj).stringData as Record<string, string>;
}

describeWithCharts("Alertmanagers: the metrics server's alerting, rendered by the real chart", MONITORING_CHARTS.filter((c) => c.component === "metrics"), ({ helm, archive }) => {
  let r: RenderedMonitoring;
  let plain: RenderedMonitoring;
  const promYml = (m: RenderedMonitoring) => parse(find(m.charts.metrics?.objects ?? [], "ConfigMap", "metrics-server").data["prometheus.yml"]) as Obj;
  beforeAll(async () => {
    r = await renderMonitoring(helm, fullConfig({ ...METRICS_ONLY, ...alertingOverrides() }), archive);
    plain = await renderMonitoring(helm, fullConfig(METRICS_ONLY), archive);
  }, 120_000);

  test("prometheus.yml sends to every target: scheme, path prefix, each replica's address, auth and TLS by file", () => {
    const dir = ALERTMANAGER_AUTH.mountPath;
    expect(promYml(r).alerting.alertmanagers).toEqual([
      {
        scheme: "https",
        path_prefix: "/alertmanager",
        static_configs: [{ targets: ["am-0.example.com:9093", "am-1.example.com:9093"] }],
        basic_auth: { username: "prometheus", password_file: `${dir}/oncall-password` },
        tls_config: { ca_file: `${dir}/oncall-ca.crt`, server_name: "alertmanager.example.com" },
      },
      {
        scheme: "https",
        static_configs: [{ targets: ["alerts.example.net:443"] }],
        authorization: { type: "Bearer", credentials_file: `${dir}/sre-bearer-token` },
        tls_config: { cert_file: `${dir}/sre-tls.crt`, key_file: `${dir}/sre-tls.key` },
      },
      { scheme: "http", static_configs: [{ targets: ["alertmanager-operated.observability.svc:9093"] }] },
    ]);
    // Without the key the server sends nowhere (the spec's default).
    expect(promYml(plain).alerting).toBeUndefined();
  });

  test("every file the alerting block names is a key of the Secret the server container mounts there", () => {
    const { pod, container } = server(r);
    const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === ALERTMANAGER_AUTH.mountPath) as Obj;
    expect(mount).toMatchObject({ readOnly: true });
    expect(mount.subPath ?? "").toBe(""); // a subPath mount would never see a rotated Secret
    expect((pod.spec.volumes ?? []).find((v) => v.name === mount.name)).toEqual({ name: mount.name, secret: { secretName: ALERTMANAGER_AUTH.secretName } });
    const named: string[] = JSON.stringify(promYml(r).alerting).match(new RegExp(`${ALERTMANAGER_AUTH.mountPath}/[^"]+`, "g")) ?? [];
    expect(named.length).toBe(5);
    const keys = Object.keys(authSecretData(r)).sort();
    expect(named.map((f) => f.slice(ALERTMANAGER_AUTH.mountPath.length + 1)).sort()).toEqual(keys);
    // The Secret holds each credential under the name the configuration gives it.
    expect(authSecretData(r)).toEqual({
      "oncall-password": TEST_ALERTMANAGER_CREDENTIALS.oncall.password,
      "oncall-ca.crt": TEST_ALERTMANAGER_CREDENTIALS.oncall.ca,
      "sre-bearer-token": TEST_ALERTMANAGER_CREDENTIALS.sre.bearerToken,
      "sre-tls.crt": TEST_ALERTMANAGER_CREDENTIALS.sre.cert,
      "sre-tls.key": TEST_ALERTMANAGER_CREDENTIALS.sre.key,
    });
    // No Secret and no mount without credentials.
    expect(plain.resources.some((x) => x.name === ALERTMANAGER_AUTH.secretName)).toBe(false);
    expect((server(plain).container.volumeMounts ?? []).some((m) => m.mountPath === ALERTMANAGER_AUTH.mountPath)).toBe(false);
  });

  // Debian's promtool is built without Kubernetes service discovery, so the chart's scrape jobs (all
  // kubernetes_sd_configs, which this key does not touch) are left out of what it checks.
  withPromtool("promtool check config accepts the rendered prometheus.yml (rules and alerting) with the files the rendered pod mounts", () => {
    const { pod, container } = server(r);
    const { scrape_configs: _scrapeJobs, ...checked } = promYml(r);
    const files: Record<string, string> = {};
    for (const m of container.volumeMounts ?? []) {
      const volume = (pod.spec.volumes ?? []).find((v) => v.name === m.name) as Obj;
      const data: Record<string, string> | undefined = volume.configMap
        ? find(r.charts.metrics?.objects ?? [], "ConfigMap", volume.configMap.name).data
        : volume.secret
          ? authSecretData(r)
          : undefined;
      for (const [k, v] of Object.entries(data ?? {})) files[`${m.mountPath}/${k}`] = v;
    }
    const result = promtoolCheckConfig(checked, files);
    expect({ status: result.status, out: result.out }).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
    expect(result.out).toMatch(/SUCCESS: \d+ rules found/); // it read the alert rules from the mounted ConfigMap
    // It does check the alerting block: a target with two kinds of authentication is refused.
    const both = structuredClone(checked);
    both.alerting.alertmanagers[0].authorization = both.alerting.alertmanagers[1].authorization;
    expect(promtoolCheckConfig(both, files)).toEqual({ status: 1, out: expect.stringMatching(/at most one of basic_auth, oauth2 & authorization must be configured/) });
  });

  test("no credential is in any rendered object, chart value or other declared input: only in the Secret's data", () => {
    const chartText = JSON.stringify([...Object.values(r.charts).flatMap((c) => [c.objects, c.values])]);
    const inputsText = JSON.stringify(r.resources.filter((x) => x.name !== ALERTMANAGER_AUTH.secretName).map((x) => revealSecrets(x.inputs)));
    const secretText = JSON.stringify(authSecretData(r));
    for (const secret of TEST_ALERTMANAGER_SECRET_VALUES) {
      expect({ secret, inCharts: chartText.includes(secret), inOtherInputs: inputsText.includes(secret), inSecret: secretText.includes(secret) }).toEqual({
        secret,
        inCharts: false,
        inOtherInputs: false,
        inSecret: true,
      });
    }
    // The Secret's values reach the engine as secrets.
    expect(JSON.stringify(r.direct.find((o) => o.metadata.name === ALERTMANAGER_AUTH.secretName))).not.toMatch(/am-pass|TESTKEY/);
  });

  test("the bundled Alertmanager stays off: the chart renders none", () => {
    expect(r.charts.metrics?.values.alertmanager).toEqual({ enabled: false });
    expect((r.charts.metrics?.objects ?? []).filter((o) => /alertmanager/.test(o.metadata.name) || (o.metadata.labels as Obj | undefined)?.["app.kubernetes.io/name"] === "alertmanager")).toEqual([]);
  });

  test("a changed credential rolls the server (checksum on its pod), and nothing else on it changes", async () => {
    const creds = { ...TEST_ALERTMANAGER_CREDENTIALS, oncall: { ...TEST_ALERTMANAGER_CREDENTIALS.oncall, password: "am-pass-rotated-Nc4" } };
    const rotated = await renderMonitoring(helm, fullConfig({ ...METRICS_ONLY, ...alertingOverrides(), "monitoring:alertmanagerCredentials": JSON.stringify(creds) }), archive);
    const before = server(r).pod.metadata.annotations ?? {};
    const after = server(rotated).pod.metadata.annotations ?? {};
    expect(before["checksum/alertmanager-credentials"]).toMatch(/^[0-9a-f]{16}$/);
    expect(after["checksum/alertmanager-credentials"]).not.toBe(before["checksum/alertmanager-credentials"]);
    expect(promYml(rotated)).toEqual(promYml(r));
  }, 120_000);
});
