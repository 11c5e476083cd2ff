// Helm values of the metrics server (prometheus-community Prometheus chart 29.21.0, with its kube-state-metrics and
// node-exporter subcharts). Pure function; rendered with the real chart in render.test.ts, which also checks that
// every key here is read by a template.
import type * as pulumi from "@pulumi/pulumi";
import { ALERTMANAGER_AUTH } from "./alertmanagers";
import { chartContainerSecurityContext, chartPodSecurityContext, IMAGE_IDENTITIES } from "./chart-security";
import { SERVICES } from "./constants";
import { RESOURCES } from "./resources";

export interface MetricsValuesArgs {
  readonly storageClass?: string;
  /** The rule file the server loads (alert-rules.ts), as `serverFiles."alerting_rules.yml"`. */
  readonly alertingRules: { readonly groups: readonly unknown[] };
  /** Labels of every pod of the release (the platform label, so the collector ships their logs). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`: run as `nobody` (65534) as the images are built, or let the cluster assign the ids. */
  readonly fixedUserIds: boolean;
  /** Prometheus `alertmanager_config` entries (alertmanagers.ts), the chart's `server.alertmanagers`. */
  readonly alertmanagers?: readonly Record<string, unknown>[];
  /** Mount the Secret of the Alertmanager credentials, whose files those entries name. */
  readonly mountAlertmanagerAuth?: boolean;
  /** Annotations of the server pod (the credentials digest, so a change rolls it). */
  readonly serverPodAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
}

/** The spec's scrape jobs (chart >= 28 keys them by job name). */
export const SPEC_SCRAPE_JOBS = [
  "kubernetes-nodes",
  "kubernetes-nodes-cadvisor",
  "kubernetes-api-servers",
  "kubernetes-pods",
  "kubernetes-pods-slow",
  "kubernetes-service-endpoints",
  "kubernetes-service-endpoints-slow",
] as const;

/** Chart defaults that are not in the spec: the server's self-scrape, blackbox service probes, push gateway. */
export const DISABLED_SCRAPE_JOBS = ["prometheus", "kubernetes-services", "prometheus-pushgateway"] as const;

/** The spec's volume and retention time, and a size cap below the volume (WAL and compaction need headroom). */
export const METRICS_STORAGE = { volume: "10Gi", retention: "15d", retentionSize: "8GB" } as const;

/**
 * kube-state-metrics collectors left out: Secrets and ConfigMaps. Their metrics are not used by any dashboard or
 * alert, and collecting them takes list/watch on every Secret and ConfigMap of the cluster.
 */
export const KSM_EXCLUDED_COLLECTORS = ["secrets", "configmaps"] as const;

/**
 * Object labels kube-state-metrics copies into its `kube_<kind>_labels` series (none by default): GatewayDown
 * (health-rules.ts) tells the platform's gateway from another Deployment named `gateway` by its component label;
 * ModelServerMetricsMissing finds model servers by their pods' labels (the chart gives their Deployment none of ours).
 */
export const KSM_LABELS_ALLOWLIST = ["deployments=[app.kubernetes.io/component]", "pods=[app.kubernetes.io/part-of,llm-d.ai/role]"] as const;

export function buildMetricsValues(args: MetricsValuesArgs): Record<string, unknown> {
  const nobody = IMAGE_IDENTITIES.nobody;
  const containerSecurity = chartContainerSecurityContext(nobody, args.fixedUserIds);
  const podSecurity = chartPodSecurityContext(nobody, args.fixedUserIds);
  const labels = args.podLabels ? { podLabels: { ...args.podLabels } } : {};
  return {
    server: {
      // Service `metrics-server` on port 80 (spec "Services").
      fullnameOverride: SERVICES.metrics.name,
      service: { type: "ClusterIP", servicePort: SERVICES.metrics.port },
      replicaCount: 1,
      retention: METRICS_STORAGE.retention,
      // Without it the 10Gi volume can fill before 15 days are up and the server stops ingesting.
      retentionSize: METRICS_STORAGE.retentionSize,
      persistentVolume: {
        enabled: true,
        size: METRICS_STORAGE.volume,
        ...(args.storageClass ? { storageClass: args.storageClass } : {}),
      },
      resources: RESOURCES.metricsServer,
      securityContext: podSecurity,
      containerSecurityContext: containerSecurity,
      ...labels,
      // Existing Alertmanagers only (the bundled one is off below): the chart writes them as `alerting.alertmanagers`.
      ...(args.alertmanagers && args.alertmanagers.length > 0 ? { alertmanagers: args.alertmanagers.map((a) => ({ ...a })) } : {}),
      // Mounted whole (no subPath), so the kubelet keeps the files up to date when the Secret changes.
      ...(args.mountAlertmanagerAuth
        ? { extraSecretMounts: [{ name: ALERTMANAGER_AUTH.volume, mountPath: ALERTMANAGER_AUTH.mountPath, secretName: ALERTMANAGER_AUTH.secretName, readOnly: true }] }
        : {}),
      ...(args.serverPodAnnotations ? { podAnnotations: { ...args.serverPodAnnotations } } : {}),
    },
    configmapReload: { prometheus: { resources: RESOURCES.metricsConfigReloader, containerSecurityContext: containerSecurity } },
    // Alert rules are evaluated by the server and shown on its /alerts page; the spec's bundled alert manager stays
    // off, and `server.alertmanagers` above sends to the operator's own.
    serverFiles: { "alerting_rules.yml": args.alertingRules },
    alertmanager: { enabled: false },
    "prometheus-pushgateway": { enabled: false },
    "kube-state-metrics": {
      enabled: true,
      collectorsExclude: [...KSM_EXCLUDED_COLLECTORS],
      metricLabelsAllowlist: [...KSM_LABELS_ALLOWLIST],
      resources: RESOURCES.kubeStateMetrics,
      securityContext: podSecurity,
      ...labels,
    },
    // DaemonSet on every node (the chart tolerates NoSchedule taints): no nodeSelector, or nodes go unmonitored.
    // hostNetwork/hostPID and the host's / read-only are what node-exporter is for; it runs as nobody.
    "prometheus-node-exporter": { enabled: true, resources: RESOURCES.nodeExporter, securityContext: podSecurity, ...labels },
    scrapeConfigs: Object.fromEntries([
      ...SPEC_SCRAPE_JOBS.map((job) => [job, { enabled: true }]),
      ...DISABLED_SCRAPE_JOBS.map((job) => [job, { enabled: false }]),
    ]),
  };
}
