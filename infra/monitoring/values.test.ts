// Helm values builders, checked against the spec's tables row by row.
import { buildCollectorValues, COLLECTOR_STATE, DEFAULT_COLLECTOR_TOLERATIONS } from "./collector-values";
import { LOGSTORE_API_PATHS, logstoreUrl, metricsUrl, realLogstorePath } from "./constants";
import { buildLogstoreValues, s3EndpointParts } from "./logstore-values";
import { buildMetricsValues, DISABLED_SCRAPE_JOBS, SPEC_SCRAPE_JOBS } from "./metrics-values";
import { buildViewerValues } from "./viewer-values";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const logstore = (over: Partial<Parameters<typeof buildLogstoreValues>[0]> = {}): Obj =>
  buildLogstoreValues({
    store: { type: "s3", endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", region: "us-east-1", secretName: "logstore-s3-credentials" },
    bucket: "logstore-chunks",
    storageClass: "hostpath",
    fixedUserIds: true,
    ...over,
  });

describe("log store values (Loki, monolithic)", () => {
  const v = logstore();

  test.each([
    ["compactor", "working_directory", "/var/loki/compactor"],
    ["compactor", "delete_request_store", "s3"],
    ["compactor", "retention_enabled", true],
    ["compactor", "retention_delete_delay", "2h"],
    ["limits_config", "retention_period", "336h"],
    ["limits_config", "ingestion_rate_mb", 16],
    ["limits_config", "ingestion_burst_size_mb", 32],
    ["limits_config", "per_stream_rate_limit", "3MB"],
    ["limits_config", "per_stream_rate_limit_burst", "10MB"],
    ["limits_config", "max_entries_limit_per_query", 10000],
    ["limits_config", "max_query_length", "336h"],
    ["limits_config", "max_query_parallelism", 4],
    ["analytics", "reporting_enabled", false],
  ])("%s.%s = %p", (section, key, value) => {
    expect(v.loki[section][key]).toEqual(value);
  });

  test("chunk encoding zstd (Loki's key: ingester.chunk_encoding)", () => {
    expect(v.loki.ingester.chunk_encoding).toBe("zstd");
  });

  test("write-ahead log and compactor directories live under the data directory on the volume", () => {
    expect(v.loki.ingester.wal).toEqual({ enabled: true, dir: "/var/loki/wal" });
    expect(v.loki.compactor.working_directory.startsWith("/var/loki/")).toBe(true);
  });

  test("monolithic, extras off, no auth, port 3100, named logstore (the release and the chart's name)", () => {
    expect(v.deploymentMode).toBe("Monolithic");
    expect(v.loki.commonConfig.replication_factor).toBe(1);
    for (const t of ["gateway", "chunksCache", "resultsCache", "memcached", "lokiCanary", "test"]) expect(v[t]).toEqual({ enabled: false });
    expect(v.loki.auth_enabled).toBe(false);
    expect(v.loki.server.http_listen_port).toBe(3100);
    expect(v.nameOverride).toBe("logstore");
  });

  test("10Gi ReadWriteOnce volume with logstoreStorageClass (omitted: cluster default), kept on delete and scale-down", () => {
    expect(v.singleBinary.persistence).toEqual({ enabled: true, size: "10Gi", accessModes: ["ReadWriteOnce"], storageClass: "hostpath", whenDeleted: "Retain", whenScaled: "Retain" });
    expect(logstore({ storageClass: undefined }).singleBinary.persistence.storageClass).toBeNull();
  });

  test("no rules sidecar, namespaced RBAC, no API token; non-root with the cluster's ids when it assigns them", () => {
    expect(v.sidecar).toEqual({ rules: { enabled: false } });
    expect(v.rbac).toEqual({ namespaced: true });
    expect(v.defaults.automountServiceAccountToken).toBe(false);
    expect(v.loki.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    const assigned = logstore({ fixedUserIds: false }).loki.podSecurityContext;
    expect(assigned).toMatchObject({ runAsNonRoot: true, runAsUser: null, runAsGroup: null, fsGroup: null });
  });

  test("S3 storage: tsdb v13 with a 24h index (needed for retention), bucket, path-style, plain HTTP in cluster", () => {
    expect(v.loki.schemaConfig.configs[0]).toMatchObject({ store: "tsdb", object_store: "s3", schema: "v13", index: { period: "24h" } });
    expect(v.loki.storage.bucketNames).toEqual({ chunks: "logstore-chunks", ruler: "logstore-chunks" });
    expect(v.loki.storage.s3).toMatchObject({ endpoint: "objectstore.app-shaide.svc.cluster.local:9000", insecure: true, s3ForcePathStyle: true });
    expect(s3EndpointParts("https://s3.example.com")).toEqual({ endpoint: "s3.example.com:443", insecure: false });
  });

  test("S3 credentials stay out of the rendered config: env references expanded by Loki from a Secret", () => {
    expect(v.loki.storage.s3.accessKeyId).toBe("${AWS_ACCESS_KEY_ID}");
    expect(v.loki.storage.s3.secretAccessKey).toBe("${AWS_SECRET_ACCESS_KEY}");
    // The chart passes -config.expand-env=true itself: the values must not add it a second time.
    expect(v.singleBinary.extraArgs).toBeUndefined();
    expect(v.singleBinary.extraEnvFrom).toEqual([{ secretRef: { name: "logstore-s3-credentials" } }]);
  });

  test("workload identity: the service account carries the annotations; no key, no key reference, no Secret in the pod", () => {
    const annotations = { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/logstore" };
    const w = logstore({ store: { type: "s3", endpoint: "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1" }, serviceAccountAnnotations: annotations });
    expect(w.serviceAccount).toEqual({ automountServiceAccountToken: false, annotations });
    expect(w.loki.storage.s3).toEqual({ endpoint: "s3.eu-west-1.amazonaws.com:443", insecure: false, s3ForcePathStyle: true, region: "eu-west-1" });
    expect(w.singleBinary.extraEnvFrom).toBeUndefined();
    expect(v.serviceAccount.annotations).toBeUndefined();
  });

  test("Cloud Storage: Loki's gcs backend on the bucket, for chunks, index, ruler and deletes; no S3 setting, no key", () => {
    const annotations = { "iam.gke.io/gcp-service-account": "logstore@my-project.iam.gserviceaccount.com" };
    const g = logstore({ store: { type: "gcs" }, serviceAccountAnnotations: annotations });
    expect(g.loki.storage).toEqual({ type: "gcs", bucketNames: { chunks: "logstore-chunks", ruler: "logstore-chunks" } });
    expect(g.loki.schemaConfig.configs[0].object_store).toBe("gcs");
    expect(g.loki.compactor.delete_request_store).toBe("gcs");
    expect(g.serviceAccount).toEqual({ automountServiceAccountToken: false, annotations });
    expect(g.singleBinary.extraEnvFrom).toBeUndefined();
  });
});

describe("spec endpoints map onto Loki's API", () => {
  test("every /logstore/api/v1 path of the spec has a /loki/api/v1 counterpart; /ready stays", () => {
    for (const [spec, real] of Object.entries(LOGSTORE_API_PATHS)) expect(realLogstorePath(spec)).toBe(real);
    expect(realLogstorePath("/logstore/api/v1/push")).toBe("/loki/api/v1/push");
    expect(realLogstorePath("/ready")).toBe("/ready");
  });
});

describe("viewer values (Grafana)", () => {
  const base = { adminSecretName: "viewer-admin", metricsEnabled: true, clusterDomain: "cluster.local", fixedUserIds: true };
  test("log store is the default datasource with a fixed uid; metrics second when enabled", () => {
    const ds = (buildViewerValues(base) as Obj).datasources["datasources.yaml"].datasources;
    expect(ds[0]).toMatchObject({ type: "loki", uid: "logstore", url: "http://logstore.monitoring.svc.cluster.local:3100", isDefault: true });
    expect(ds[1]).toMatchObject({ type: "prometheus", uid: "metrics", url: "http://metrics-server.monitoring.svc.cluster.local:80", isDefault: false });
    expect((buildViewerValues({ ...base, metricsEnabled: false }) as Obj).datasources["datasources.yaml"].datasources).toHaveLength(1);
  });

  test("datasource addresses follow the cluster's DNS domain", () => {
    const ds = (buildViewerValues({ ...base, clusterDomain: "corp.internal" }) as Obj).datasources["datasources.yaml"].datasources;
    expect(ds.map((d: { url: string }) => d.url)).toEqual([logstoreUrl("corp.internal"), metricsUrl("corp.internal")]);
    expect(ds[0].url).toBe("http://logstore.monitoring.svc.corp.internal:3100");
  });

  test("admin user admin, password from the existing Secret, no password in values", () => {
    const v = buildViewerValues(base) as Obj;
    expect(v.adminUser).toBe("admin");
    expect(v.admin).toEqual({ existingSecret: "viewer-admin", userKey: "admin-user", passwordKey: "admin-password" });
    expect(v.adminPassword).toBeUndefined();
    expect(v.assertNoLeakedSecrets).toBe(true);
  });

  test("dashboards sidecar watches grafana_dashboard=1 ConfigMaps; service viewer:80 ClusterIP; stateless", () => {
    const v = buildViewerValues(base) as Obj;
    expect(v.sidecar.dashboards).toMatchObject({ enabled: true, label: "grafana_dashboard", labelValue: "1", resource: "configmap" });
    // The chart's RBAC would let the sidecar read Secrets: the stack binds its own ConfigMap-only Role (viewer-rbac.ts).
    expect(v.rbac).toEqual({ create: false });
    expect(v.fullnameOverride).toBe("viewer");
    expect(v.service).toEqual({ type: "ClusterIP", port: 80 });
    expect(v.persistence).toEqual({ enabled: false });
  });

  test("embedding block: sub-path root URL, serve_from_sub_path off, anonymous Viewer", () => {
    const ini = (buildViewerValues({ ...base, embedding: { subPath: "/monitoring/viewer" } }) as Obj)["grafana.ini"];
    expect(ini.server).toEqual({ root_url: "%(protocol)s://%(domain)s:%(http_port)s/monitoring/viewer/", serve_from_sub_path: false });
    expect(ini["auth.anonymous"]).toEqual({ enabled: true, org_name: "Main Org.", org_role: "Viewer" });
  });

  test("without the embedding block: default root URL and no anonymous access", () => {
    const ini = (buildViewerValues(base) as Obj)["grafana.ini"];
    expect(ini.server).toBeUndefined();
    expect(ini["auth.anonymous"]).toBeUndefined();
  });
});

describe("collector values (Alloy)", () => {
  const v = buildCollectorValues({ labelDomain: "ai-platform.io", clusterDomain: "cluster.local", tolerations: DEFAULT_COLLECTOR_TOLERATIONS }) as Obj;
  test("DaemonSet named collector, API-based (no log mounts), minimal RBAC, no usage reporting", () => {
    expect(v.controller.type).toBe("daemonset");
    expect(v.fullnameOverride).toBe("collector");
    expect(v.alloy.mounts).toMatchObject({ varlog: false, dockercontainers: false });
    expect(v.rbac.rules.flatMap((r: Obj) => r.resources)).toEqual(["pods", "pods/log"]);
    expect(v.alloy.enableReporting).toBe(false);
    expect(v.alloy.configMap.content).toContain('loki.source.kubernetes "platform_pods"');
  });
  test("the config survives the chart's tpl pass (no template braces)", () => {
    expect(v.alloy.configMap.content).not.toMatch(/\{\{|\}\}/);
  });

  test("tolerations as configured (default: every NoSchedule taint), positions on a node directory", () => {
    expect(v.controller.tolerations).toEqual([{ operator: "Exists", effect: "NoSchedule" }]);
    const custom = buildCollectorValues({ labelDomain: "ai-platform.io", clusterDomain: "cluster.local", tolerations: [{ key: "gpu", operator: "Exists" }] }) as Obj;
    expect(custom.controller.tolerations).toEqual([{ key: "gpu", operator: "Exists" }]);
    expect(v.alloy.storagePath).toBe(COLLECTOR_STATE.mountPath);
    expect(v.controller.volumes.extra[0].hostPath.path).toBe(COLLECTOR_STATE.hostPath);
  });
});

describe("metrics values (Prometheus)", () => {
  const rules = { groups: [] };
  const v = buildMetricsValues({ storageClass: "standard", alertingRules: rules, fixedUserIds: true }) as Obj;
  test("single server, retention 15d and 8GB, 10Gi with metricsStorageClass, service metrics-server:80", () => {
    expect(v.server.replicaCount).toBe(1);
    expect(v.server.retention).toBe("15d");
    expect(v.server.retentionSize).toBe("8GB");
    expect(v.server.persistentVolume).toEqual({ enabled: true, size: "10Gi", storageClass: "standard" });
    expect(buildMetricsValues({ alertingRules: rules, fixedUserIds: true }) as Obj).not.toHaveProperty("server.persistentVolume.storageClass");
    expect(v.server.fullnameOverride).toBe("metrics-server");
    expect(v.server.service).toEqual({ type: "ClusterIP", servicePort: 80 });
  });
  test("alert manager and push gateway off; kube-state-metrics and node-exporter on", () => {
    expect(v.alertmanager).toEqual({ enabled: false });
    expect(v["prometheus-pushgateway"]).toEqual({ enabled: false });
    expect(v["kube-state-metrics"]).toMatchObject({ enabled: true, collectorsExclude: ["secrets", "configmaps"] });
    expect(v["prometheus-node-exporter"]).toMatchObject({ enabled: true });
  });
  test("exactly the spec's scrape jobs are enabled", () => {
    const enabled = Object.entries(v.scrapeConfigs as Record<string, { enabled: boolean }>).filter(([, c]) => c.enabled).map(([k]) => k);
    expect(enabled.sort()).toEqual([...SPEC_SCRAPE_JOBS].sort());
    expect(enabled).toEqual(expect.arrayContaining(["kubernetes-nodes", "kubernetes-nodes-cadvisor", "kubernetes-api-servers", "kubernetes-pods", "kubernetes-pods-slow", "kubernetes-service-endpoints", "kubernetes-service-endpoints-slow"]));
    for (const j of DISABLED_SCRAPE_JOBS) expect(v.scrapeConfigs[j]).toEqual({ enabled: false });
  });
});
