// Helm values of the collector (Grafana Alloy chart, DaemonSet). Pure function.
import { buildCollectorConfig } from "./collector-config";

export const COLLECTOR_NAME = "collector";

export function buildCollectorValues(labelDomain: string, clusterDomain: string): Record<string, unknown> {
  return {
    fullnameOverride: COLLECTOR_NAME,
    // One pod per node. No nodeSelector on purpose: a collector that skips nodes loses their logs.
    controller: { type: "daemonset" },
    alloy: {
      configMap: { create: true, content: buildCollectorConfig(labelDomain, clusterDomain) },
      // Logs come through the Kubernetes API: no host path mounts.
      mounts: { varlog: false, dockercontainers: false },
      enableReporting: false,
      clustering: { enabled: false },
    },
    // ClusterRole + ClusterRoleBinding (pods, pods/log, namespaces: get/list/watch) come from the chart.
    rbac: { create: true },
  };
}
