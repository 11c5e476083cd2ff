// Requests and limits of every container the monitoring stack runs, in one table so that the sizing is reviewed in
// one place (docs/monitoring.md lists it). Requests are what the scheduler reserves; memory limits are set so a leak
// is contained, CPU limits generously so a burst (a large query, a compaction) is slowed, not killed.

export interface ContainerResources {
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly limits: { readonly cpu: string; readonly memory: string };
}

const r = (reqCpu: string, reqMem: string, limCpu: string, limMem: string): ContainerResources => ({
  requests: { cpu: reqCpu, memory: reqMem },
  limits: { cpu: limCpu, memory: limMem },
});

export const RESOURCES = {
  // Monolithic Loki up to ~20 GB/day; the chart derives GOMEMLIMIT from the memory limit.
  logstore: r("250m", "1Gi", "2", "4Gi"),
  viewer: r("100m", "256Mi", "1", "512Mi"),
  viewerDashboardSidecar: r("20m", "64Mi", "200m", "256Mi"),
  collector: r("100m", "128Mi", "1", "512Mi"),
  collectorConfigReloader: r("10m", "50Mi", "100m", "64Mi"),
  collectorStateInit: r("10m", "16Mi", "100m", "32Mi"),
  metricsServer: r("250m", "1Gi", "2", "4Gi"),
  metricsConfigReloader: r("10m", "32Mi", "100m", "64Mi"),
  kubeStateMetrics: r("50m", "64Mi", "500m", "256Mi"),
  nodeExporter: r("50m", "32Mi", "250m", "64Mi"),
  bucketJob: r("50m", "64Mi", "500m", "256Mi"),
} as const satisfies Record<string, ContainerResources>;
