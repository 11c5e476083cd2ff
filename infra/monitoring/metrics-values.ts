// Helm values of the metrics server (prometheus-community Prometheus chart). Pure function.
import { SERVICES } from "./constants";

export interface MetricsValuesArgs {
  readonly storageClass?: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
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

export function buildMetricsValues(args: MetricsValuesArgs): Record<string, unknown> {
  return {
    server: {
      // Service `metrics-server` on port 80 (spec "Services").
      fullnameOverride: SERVICES.metrics.name,
      service: { type: "ClusterIP", servicePort: SERVICES.metrics.port },
      replicaCount: 1,
      retention: "15d",
      persistentVolume: {
        enabled: true,
        size: "10Gi",
        accessModes: ["ReadWriteOnce"],
        ...(args.storageClass ? { storageClass: args.storageClass } : {}),
      },
      nodeSelector: { ...args.nodeSelector },
    },
    alertmanager: { enabled: false },
    "prometheus-pushgateway": { enabled: false },
    "kube-state-metrics": { enabled: true },
    // DaemonSet on every node: no nodeSelector, or nodes go unmonitored.
    "prometheus-node-exporter": { enabled: true },
    scrapeConfigs: Object.fromEntries([
      ...SPEC_SCRAPE_JOBS.map((job) => [job, { enabled: true }]),
      ...DISABLED_SCRAPE_JOBS.map((job) => [job, { enabled: false }]),
    ]),
  };
}
