// Test fixtures: a complete, valid configuration as the runtime holds it (`namespace:key` → raw string).
import { clusterConfig, withOverrides, namespaceKeys } from "../platform/config-testing";
import { QUALIFIED_SECRET_KEYS } from "./config";

export const TEST_S3_PASSWORD = "s3-pass-Zq8fK2nV";
export const TEST_VIEWER_PASSWORD = "viewer-pass-Wm4tR7yX";

export function fullConfig(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const base: Record<string, string> = {
    ...clusterConfig(),
    "platform:labelDomain": "ai-platform.io",
    "monitoring:components": JSON.stringify(["logstore", "viewer", "collector", "dashboards", "metrics"]),
    "monitoring:logstoreVersion": "14.1.0",
    "monitoring:viewerVersion": "12.3.2",
    "monitoring:collectorVersion": "1.8.1",
    "monitoring:logstoreStorageClass": "hostpath",
    "monitoring:metricsStorageClass": "premium-rwo",
    "monitoring:s3Endpoint": "http://objectstore.app-shaide.svc.cluster.local:9000",
    "monitoring:s3BucketLogstore": "logstore-chunks",
    "monitoring:s3User": "logstore",
    "monitoring:s3Password": TEST_S3_PASSWORD,
    "monitoring:viewerAdminPassword": TEST_VIEWER_PASSWORD,
    "monitoring:cloudProvider": "on-prem",
  };
  return withOverrides(base, overrides);
}

/** The raw `monitoring:` namespace without its prefix, as `parseMonitoringConfig` takes it. */
export function rawNamespace(config: Record<string, string>): Record<string, string> {
  return namespaceKeys(config, "monitoring");
}

export const SECRET_KEYS = QUALIFIED_SECRET_KEYS;
