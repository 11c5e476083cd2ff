// The monitoring stack as the real charts render it: the program runs on Pulumi's mocks, and each Helm chart it
// declares is rendered by a real `helm template` from the pinned archive with exactly the values the program passed.
// Every assertion is on the rendered objects (names, ports, flags, volumes, labels, RBAC), not on the values.
// Runs where the archives are (`npm run charts:pull`, or AI_PLATFORM_CHARTS_DIR); elsewhere it says so and skips.
import { parse } from "yaml";
import { alertingRulesFile } from "../infra/monitoring/alert-rules";
import { COLLECTOR_STATE, DEFAULT_COLLECTOR_TOLERATIONS } from "../infra/monitoring/collector-values";
import { DASHBOARD_LABEL, NAMESPACE } from "../infra/monitoring/constants";
import { LOGSTORE_LIMITS } from "../infra/monitoring/logstore-values";
import { DISABLED_SCRAPE_JOBS, SPEC_SCRAPE_JOBS } from "../infra/monitoring/metrics-values";
import { fullConfig } from "../infra/monitoring/testing";
import { describeWithCharts, type Manifest } from "../infra/platform/helm";
import { allContainers, type Container, duplicatedFlags, type PodOwner, podOwners, type PolicyRule, readsSecrets } from "../infra/platform/manifests";
import { readDoc } from "../infra/platform/docs-testing";
import { AIRGAP_KEDA, AIRGAP_VARIANTS, airgapImageTable, generatedSection, ignoredValues, MONITORING_CHARTS, type RenderedMonitoring, renderKeda, renderMonitoring } from "./monitoring-charts";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PLATFORM_LABEL = "ai-platform.io/platform";

function find(objects: readonly Manifest[], kind: string, name: string): Obj {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name}; rendered: ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return o as Obj;
}
const pod = (objects: readonly Manifest[], name: string): PodOwner => {
  const p = podOwners(objects).find((x) => x.name === name);
  if (!p) throw new Error(`no workload ${name}`);
  return p;
};
const container = (p: PodOwner, name: string): Container => {
  const c = allContainers(p).find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name} in ${p.name}: ${allContainers(p).map((x) => x.name).join(", ")}`);
  return c;
};
const envOf = (c: Container, name: string) => (c.env ?? []).find((e) => e.name === name);

describeWithCharts("monitoring charts rendered by a real helm with the program's values", [...MONITORING_CHARTS, { component: AIRGAP_KEDA.chart.component, version: AIRGAP_KEDA.chart.version }], ({ helm, archive }) => {
  let r: RenderedMonitoring;
  let all: Manifest[];
  const objects = (release: string) => r.charts[release]?.objects ?? [];
  beforeAll(async () => {
    r = await renderMonitoring(helm, fullConfig(), archive);
    all = [...Object.values(r.charts).flatMap((c) => c.objects), ...r.direct];
  }, 120_000);

  describe("log store (Loki 14.1.0, monolithic)", () => {
    test("StatefulSet `logstore`, headless Service `logstore-headless` it names, Service `logstore` on 3100; nothing named after the chart", () => {
      const sts = find(objects("logstore"), "StatefulSet", "logstore");
      expect(sts.spec.serviceName).toBe("logstore-headless");
      const headless = find(objects("logstore"), "Service", "logstore-headless");
      expect(headless.spec.clusterIP).toBe("None");
      expect(headless.spec.selector).toEqual(sts.spec.selector.matchLabels);
      const svc = find(objects("logstore"), "Service", "logstore");
      expect(svc.spec.ports).toEqual(expect.arrayContaining([expect.objectContaining({ name: "http-metrics", port: 3100 })]));
      expect(objects("logstore").filter((o) => /loki/.test(o.metadata.name)).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
      expect(sts.spec.replicas).toBe(1);
    });

    test("one container, no rules sidecar; -config.expand-env once; the config it mounts is the ConfigMap rendered", () => {
      const p = pod(objects("logstore"), "logstore");
      expect(allContainers(p).map((c) => c.name)).toEqual(["loki"]);
      const loki = container(p, "loki");
      expect(loki.args?.filter((a) => a === "-config.expand-env=true")).toHaveLength(1);
      expect(loki.args).toEqual(expect.arrayContaining(["-target=all", "-config.file=/etc/loki/config/config.yaml"]));
      const configVolume = (p.spec.volumes ?? []).find((v) => v.name === "config") as Obj;
      expect(configVolume.configMap.name).toBe("logstore");
      find(objects("logstore"), "ConfigMap", "logstore");
    });

    test("the rendered Loki config has every setting of the spec's table and no credential", () => {
      const cm = find(objects("logstore"), "ConfigMap", "logstore");
      const config = parse(cm.data["config.yaml"]) as Obj;
      expect(config.auth_enabled).toBe(false);
      expect(config.limits_config).toMatchObject(LOGSTORE_LIMITS);
      expect(config.compactor).toEqual({ working_directory: "/var/loki/compactor", delete_request_store: "s3", retention_enabled: true, retention_delete_delay: "2h" });
      expect(config.ingester.chunk_encoding).toBe("zstd");
      expect(config.ingester.wal.dir).toBe("/var/loki/wal");
      expect(config.analytics).toEqual({ reporting_enabled: false });
      expect(config.common.path_prefix).toBe("/var/loki");
      expect(config.common.replication_factor).toBe(1);
      expect(config.common.storage.s3).toMatchObject({ bucketnames: "logstore-chunks", endpoint: "objectstore.app-shaide.svc.cluster.local:9000", access_key_id: "${AWS_ACCESS_KEY_ID}", secret_access_key: "${AWS_SECRET_ACCESS_KEY}" });
      expect(config.server.http_listen_port).toBe(3100);
      const loki = container(pod(objects("logstore"), "logstore"), "loki");
      expect(loki.envFrom).toEqual([{ secretRef: { name: "logstore-s3-credentials" } }]);
    });

    test("10Gi ReadWriteOnce claim at the data directory, kept when the StatefulSet is deleted or scaled down", () => {
      const sts = find(objects("logstore"), "StatefulSet", "logstore");
      expect(sts.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: "Retain", whenScaled: "Retain" });
      const [claim] = sts.spec.volumeClaimTemplates;
      expect(claim.metadata.name).toBe("storage");
      expect(claim.spec).toMatchObject({ accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } }, storageClassName: "hostpath" });
      expect(container(pod(objects("logstore"), "logstore"), "loki").volumeMounts).toEqual(expect.arrayContaining([{ name: "storage", mountPath: "/var/loki" }]));
    });

    test("no Role or ClusterRole, no API token in the pod; scraped by the metrics server on 3100", () => {
      expect(objects("logstore").filter((o) => /Role/.test(o.kind))).toEqual([]);
      const p = pod(objects("logstore"), "logstore");
      expect(p.spec.automountServiceAccountToken).toBe(false);
      expect(p.metadata.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "3100", "prometheus.io/path": "/metrics" });
    });
  });

  describe("viewer (Grafana 12.3.2)", () => {
    test("Deployment and ClusterIP Service `viewer` on port 80; admin from the Secret; datasources provisioned", () => {
      const svc = find(objects("viewer"), "Service", "viewer");
      expect(svc.spec.type).toBe("ClusterIP");
      expect(svc.spec.ports[0].port).toBe(80);
      const grafana = container(pod(objects("viewer"), "viewer"), "grafana");
      expect(envOf(grafana, "GF_SECURITY_ADMIN_PASSWORD")).toEqual({ name: "GF_SECURITY_ADMIN_PASSWORD", valueFrom: { secretKeyRef: { name: "viewer-admin", key: "admin-password" } } });
      const ds = parse(find(objects("viewer"), "ConfigMap", "viewer").data["datasources.yaml"]) as Obj;
      expect(ds.datasources.map((d: Obj) => [d.uid, d.url])).toEqual([
        ["logstore", "http://logstore.monitoring.svc.cluster.local:3100"],
        ["metrics", "http://metrics-server.monitoring.svc.cluster.local:80"],
      ]);
    });

    test("the dashboard sidecar watches ConfigMaps labelled grafana_dashboard=1 and Grafana reads the folder it writes", () => {
      const p = pod(objects("viewer"), "viewer");
      const sidecar = container(p, "grafana-sc-dashboard");
      expect([envOf(sidecar, "LABEL")?.value, envOf(sidecar, "LABEL_VALUE")?.value, envOf(sidecar, "RESOURCE")?.value]).toEqual([DASHBOARD_LABEL.key, DASHBOARD_LABEL.value, "configmap"]);
      const folder = envOf(sidecar, "FOLDER")?.value as string;
      const provider = parse(find(objects("viewer"), "ConfigMap", "viewer-config-dashboards").data["provider.yaml"]) as Obj;
      expect(provider.providers[0].options.path).toBe(folder);
      expect(container(p, "grafana").volumeMounts).toEqual(expect.arrayContaining([{ name: "sc-dashboard-volume", mountPath: folder }]));
    });

    test("the chart renders no RBAC; the stack's own Role lets the sidecar read ConfigMaps of monitoring only", () => {
      expect(objects("viewer").filter((o) => /Role/.test(o.kind))).toEqual([]);
      const role = find(r.direct, "Role", "viewer-dashboards");
      expect(role.rules).toEqual([{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }]);
      const binding = find(r.direct, "RoleBinding", "viewer-dashboards");
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: pod(objects("viewer"), "viewer").spec.serviceAccountName, namespace: NAMESPACE }]);
    });
  });

  describe("collector (Alloy 1.8.1)", () => {
    test("a DaemonSet that tolerates every NoSchedule taint and has no nodeSelector", () => {
      const p = pod(objects("collector"), "collector");
      expect(find(objects("collector"), "DaemonSet", "collector").kind).toBe("DaemonSet");
      expect(p.spec.tolerations).toEqual(DEFAULT_COLLECTOR_TOLERATIONS);
      expect(p.spec.nodeSelector).toBeUndefined();
    });

    test("positions survive restarts: --storage.path is a node directory, made Alloy's by the init container", () => {
      const p = pod(objects("collector"), "collector");
      const alloy = container(p, "alloy");
      expect(alloy.args).toContain(`--storage.path=${COLLECTOR_STATE.mountPath}`);
      expect(alloy.volumeMounts).toEqual(expect.arrayContaining([{ name: COLLECTOR_STATE.volume, mountPath: COLLECTOR_STATE.mountPath }]));
      expect(p.spec.volumes).toEqual(expect.arrayContaining([{ name: COLLECTOR_STATE.volume, hostPath: { path: COLLECTOR_STATE.hostPath, type: "DirectoryOrCreate" } }]));
      const init = container(p, "state-owner");
      expect(init.command?.join(" ")).toContain(`chown 473:473 ${COLLECTOR_STATE.mountPath}`);
      expect(init.securityContext).toMatchObject({ capabilities: { drop: ["ALL"], add: ["CHOWN"] }, allowPrivilegeEscalation: false });
      // The only hostPath: no /var/log, no container runtime directory.
      expect((p.spec.volumes ?? []).filter((v) => v.hostPath).map((v) => (v.hostPath as Obj).path)).toEqual([COLLECTOR_STATE.hostPath]);
    });

    test("its ClusterRole reads pods, their logs and namespaces, nothing else", () => {
      const role = find(objects("collector"), "ClusterRole", "collector");
      expect(role.rules).toEqual([
        { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
      ]);
      expect(objects("collector").some((o) => o.kind === "CustomResourceDefinition")).toBe(false);
    });

    test("the rendered Alloy config pushes to the log store service", () => {
      const cm = find(objects("collector"), "ConfigMap", "collector");
      expect(cm.data["config.alloy"]).toContain('url = "http://logstore.monitoring.svc.cluster.local:3100/loki/api/v1/push"');
    });
  });

  describe("metrics server (Prometheus 29.21.0)", () => {
    test("Deployment and Service `metrics-server` on port 80; 15d and 8GB retention on a 10Gi claim", () => {
      const svc = find(objects("metrics"), "Service", "metrics-server");
      expect(svc.spec.ports[0].port).toBe(80);
      const server = container(pod(objects("metrics"), "metrics-server"), "prometheus-server");
      expect(server.args).toEqual(expect.arrayContaining(["--storage.tsdb.retention.time=15d", "--storage.tsdb.retention.size=8GB"]));
      const pvc = find(objects("metrics"), "PersistentVolumeClaim", "metrics-server");
      expect(pvc.spec).toMatchObject({ accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } }, storageClassName: "premium-rwo" });
    });

    test("exactly the spec's scrape jobs, and the alert rules file the server loads", () => {
      const data = find(objects("metrics"), "ConfigMap", "metrics-server").data;
      const config = parse(data["prometheus.yml"]) as Obj;
      expect(config.scrape_configs.map((s: Obj) => s.job_name).sort()).toEqual([...SPEC_SCRAPE_JOBS].sort());
      for (const job of DISABLED_SCRAPE_JOBS) expect(config.scrape_configs.map((s: Obj) => s.job_name)).not.toContain(job);
      expect(config.rule_files).toContain("/etc/config/alerting_rules.yml");
      expect(parse(data["alerting_rules.yml"])).toEqual(alertingRulesFile());
    });

    test("no alert manager or push gateway; kube-state-metrics collects neither Secrets nor ConfigMaps", () => {
      expect(all.filter((o) => /alertmanager|pushgateway/.test(o.metadata.name))).toEqual([]);
      const ksm = container(pod(objects("metrics"), "metrics-kube-state-metrics"), "kube-state-metrics");
      const resources = (ksm.args ?? []).find((a) => a.startsWith("--resources="))?.slice("--resources=".length).split(",") ?? [];
      expect(resources).toEqual(expect.arrayContaining(["pods", "daemonsets", "jobs", "deployments", "nodes"]));
      expect(resources).not.toContain("secrets");
      expect(resources).not.toContain("configmaps");
    });
  });

  describe("every chart", () => {
    test("no ClusterRole or Role grants get/list/watch on Secrets", () => {
      const roles = all.filter((o) => o.kind === "ClusterRole" || o.kind === "Role");
      expect(roles.length).toBeGreaterThan(0);
      for (const role of roles) {
        const offending = ((role as Obj).rules as PolicyRule[]).filter(readsSecrets);
        expect({ role: `${role.kind}/${role.metadata.name}`, offending }).toEqual({ role: `${role.kind}/${role.metadata.name}`, offending: [] });
      }
    });

    test("every container has CPU and memory requests and limits", () => {
      for (const p of podOwners(all)) {
        for (const c of allContainers(p)) {
          const res = c.resources ?? {};
          expect({ pod: p.name, container: c.name, requests: Object.keys(res.requests ?? {}).sort(), limits: Object.keys(res.limits ?? {}).sort() }).toEqual({
            pod: p.name,
            container: c.name,
            requests: ["cpu", "memory"],
            limits: ["cpu", "memory"],
          });
        }
      }
    });

    test("every container runs non-root on a read-only root filesystem without privilege escalation, but the collector's chown", () => {
      for (const p of podOwners(all)) {
        for (const c of allContainers(p)) {
          if (p.name === "collector" && c.name === "state-owner") continue; // checked above: root with CAP_CHOWN only
          const sc = { ...(p.spec.securityContext ?? {}), ...(c.securityContext ?? {}) } as Obj;
          expect({ pod: p.name, container: c.name, nonRoot: sc.runAsNonRoot, readOnly: sc.readOnlyRootFilesystem, escalation: sc.allowPrivilegeEscalation }).toEqual({
            pod: p.name,
            container: c.name,
            nonRoot: true,
            readOnly: true,
            escalation: false,
          });
        }
      }
    });

    test("no container is given the same flag twice", () => {
      for (const p of podOwners(all)) for (const c of allContainers(p)) expect({ pod: p.name, container: c.name, dup: duplicatedFlags([...(c.command ?? []), ...(c.args ?? [])]) }).toEqual({ pod: p.name, container: c.name, dup: [] });
    });

    test("the air-gap image list of docs/monitoring.md is every image the rendered objects pull (npm run docs:images)", async () => {
      const variants = [];
      for (const v of AIRGAP_VARIANTS) variants.push({ note: v.note, rendered: await renderMonitoring(helm, v.config, archive) });
      variants.push({ note: AIRGAP_KEDA.note, rendered: await renderKeda(helm, archive(AIRGAP_KEDA.chart.component)) });
      const table = airgapImageTable(r, variants);
      expect(table).toContain("| `ghcr.io/kedacore/keda:2.20.2` | Deployment `keda-operator` (keda-operator) with `cluster:keda: install` |");
      for (const image of ["docker.io/grafana/loki:3.7.2", "quay.io/kiwigrid/k8s-sidecar:2.7.3", "quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0", "amazon/aws-cli:2.37.5"]) {
        expect(table).toContain(`\`${image}\``);
      }
      expect(table).toContain("| `curlimages/curl:8.16.0` | Job `logstore-create-bucket` (create-bucket) with `objectStore: gcs` |");
      expect(generatedSection(readDoc("monitoring.md"))).toBe(table);
    }, 120_000);

    test("every monitoring pod carries the platform label, so the collector ships its logs", () => {
      for (const p of podOwners(all)) expect([p.name, p.metadata.labels?.[PLATFORM_LABEL]]).toEqual([p.name, "ai-platform"]);
    });

    test("monitoring:nodeSelector is loaded and applied to no pod", async () => {
      const other = await renderMonitoring(helm, fullConfig({ "monitoring:nodeSelector": JSON.stringify({ "node-role/monitoring": "true" }) }), archive);
      const pods = podOwners([...Object.values(other.charts).flatMap((c) => c.objects), ...other.direct]);
      expect(pods.length).toBe(podOwners(all).length);
      for (const p of pods) expect([p.name, p.spec.nodeSelector?.["node-role/monitoring"]]).toEqual([p.name, undefined]);
    }, 120_000);

    test("rotating the S3 or viewer password changes the checksum on the rendered pods that use it, and nothing else there", async () => {
      const rotated = await renderMonitoring(helm, fullConfig({ "monitoring:s3Password": "rotated-s3-Kq2", "monitoring:viewerAdminPassword": "rotated-viewer-Jr7" }), archive);
      const annotations = (m: RenderedMonitoring, release: string, name: string) => pod(m.charts[release]?.objects ?? [], name).metadata.annotations ?? {};
      const before = annotations(r, "logstore", "logstore");
      const after = annotations(rotated, "logstore", "logstore");
      expect(before["checksum/s3-credentials"]).toMatch(/^[0-9a-f]{16}$/);
      expect(after["checksum/s3-credentials"]).not.toBe(before["checksum/s3-credentials"]);
      expect({ ...after, "checksum/s3-credentials": "" }).toEqual({ ...before, "checksum/s3-credentials": "" });
      const vBefore = annotations(r, "viewer", "viewer");
      const vAfter = annotations(rotated, "viewer", "viewer");
      expect(vBefore["checksum/admin-password"]).toMatch(/^[0-9a-f]{16}$/);
      expect(vAfter["checksum/admin-password"]).not.toBe(vBefore["checksum/admin-password"]);
      // The bucket Job (declared by the stack) carries the same digest, so it is replaced and runs again.
      const job = (m: RenderedMonitoring) => pod(m.direct, "logstore-create-bucket").metadata.annotations?.["checksum/s3-credentials"];
      expect(job(r)).toBe(before["checksum/s3-credentials"]);
      expect(job(rotated)).toBe(after["checksum/s3-credentials"]);
      // And no rendered object anywhere holds either password.
      const text = JSON.stringify([...Object.values(rotated.charts).flatMap((c) => c.objects), ...rotated.direct.filter((o) => o.kind !== "Secret")]);
      expect(text).not.toContain("rotated-s3-Kq2");
      expect(text).not.toContain("rotated-viewer-Jr7");
    }, 120_000);

    test("no ignored values: every key the program sets either restates a chart default or changes the render (removing it changes what helm renders)", () => {
      const ignored = Object.values(r.charts).flatMap((chart) => ignoredValues(helm, archive(chart.release), chart, NAMESPACE));
      expect(ignored).toEqual([]);
    }, 600_000);
  });
});
