// Fixed facts of the monitoring stack (spec: "Logging and Metrics Stack Deployment").
import { AWS_CLI_IMAGE } from "../platform/images";
import { chartArchivePath } from "../platform/charts";
import { serviceUrl } from "../platform/cluster-config";

export const NAMESPACE = "monitoring";

/** Component keys of `monitoring:components`, in the spec's order. */
export const COMPONENTS = ["logstore", "viewer", "collector", "dashboards", "metrics"] as const;
export type Component = (typeof COMPONENTS)[number];

/** Chart components and the chart/app versions the spec pins (Components table). */
export const PINNED_CHARTS = {
  logstore: { chart: "loki", version: "14.1.0", appVersion: "3.7.2" },
  viewer: { chart: "grafana", version: "12.3.2", appVersion: "13.0.1-security-01" },
  collector: { chart: "alloy", version: "1.8.1", appVersion: "v1.16.1" },
  metrics: { chart: "prometheus", version: "29.21.0", appVersion: "v3.13.2" },
} as const;
export type ChartComponent = keyof typeof PINNED_CHARTS;

export { REPO_ROOT } from "../platform/charts";

/** Default archive of a chart component: `charts/<component>-<version>.tgz`. */
export function defaultChartPath(component: ChartComponent, version: string): string {
  return chartArchivePath(component, version);
}

/** Service names and ports the spec fixes ("Services"). */
export const SERVICES = {
  logstore: { name: "logstore", port: 3100 },
  viewer: { name: "viewer", port: 80 },
  metrics: { name: "metrics-server", port: 80 },
} as const;

/** `{logstore_url}` of the spec, under the cluster's DNS domain (`cluster:domain`). */
export function logstoreUrl(domain: string): string {
  return serviceUrl(SERVICES.logstore.name, NAMESPACE, SERVICES.logstore.port, domain);
}

/** `{metrics_url}` of the spec. */
export function metricsUrl(domain: string): string {
  return serviceUrl(SERVICES.metrics.name, NAMESPACE, SERVICES.metrics.port, domain);
}

/**
 * The spec's log store endpoints are written with the neutral product name in the path (`/logstore/api/v1/…`);
 * the real software (Loki) serves them under `/loki/api/v1/…`. Nothing rewrites paths in between: this table IS
 * the mapping, and everything that calls the log store (the collector's push URL, docs/monitoring.md) goes through it.
 */
export const LOGSTORE_API_PATHS = {
  "/ready": "/ready",
  "/logstore/api/v1/labels": "/loki/api/v1/labels",
  "/logstore/api/v1/label/<label_name>/values": "/loki/api/v1/label/<label_name>/values",
  "/logstore/api/v1/query": "/loki/api/v1/query",
  "/logstore/api/v1/push": "/loki/api/v1/push",
} as const;

/** Maps a spec path (`/logstore/api/v1/…`) to the real Loki path; other paths are returned unchanged. */
export function realLogstorePath(specPath: string): string {
  return specPath.replace(/^\/logstore\/api\//, "/loki/api/");
}

/** Where the log store's persistent volume is mounted (`<data_dir>`); the chart mounts its PVC here. */
export const LOGSTORE_DATA_DIR = "/var/loki";

/** Name of the bucket Job (spec "Bucket job"). */
export const BUCKET_JOB_NAME = "logstore-create-bucket";
export const BUCKET_JOB_ATTEMPTS = 5;
/**
 * Image of the bucket Job when `s3ClientImage` is not set. On an S3 API the AWS CLI, pinned to a 2.x release (a
 * moving `latest` would change the Job under a stack that did not change); on Cloud Storage the smallest well-known image with what create-bucket-gcs.sh needs (sh, curl, sed): the
 * curl project's own, Alpine-based (the Google Cloud CLI image is hundreds of MB for two HTTP calls).
 */
export const DEFAULT_BUCKET_JOB_IMAGES = { s3: AWS_CLI_IMAGE, gcs: "curlimages/curl:8.16.0" } as const;

/** Datasource uids provisioned in the viewer; dashboards reference them, so they must never change. */
export const DATASOURCE_UIDS = { logstore: "logstore", metrics: "metrics" } as const;

/** Label the viewer's dashboard sidecar watches (spec "Dashboards"). */
export const DASHBOARD_LABEL = { key: "grafana_dashboard", value: "1" } as const;
