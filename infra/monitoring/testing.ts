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

/** Credentials of the Alertmanager fixtures; each value is unique, so a leak anywhere can be searched for. */
export const TEST_ALERTMANAGER_CREDENTIALS = {
  oncall: {
    password: "am-pass-Hq3vL8tY",
    ca: "-----BEGIN CERTIFICATE-----\nTESTCA-Kd7mN4pQ\n-----END CERTIFICATE-----\n",
  },
  sre: {
    bearerToken: "am-token-Xw5pR2zU",
    cert: "-----BEGIN CERTIFICATE-----\nTESTCERT-Jf6cW9eA\n-----END CERTIFICATE-----\n",
    key: "-----BEGIN PRIVATE KEY-----\nTESTKEY-Vb9sJ1hG\n-----END PRIVATE KEY-----\n",
  },
} as const;

/** Every secret string of the Alertmanager fixtures (the PEM bodies by their unique line). */
export const TEST_ALERTMANAGER_SECRET_VALUES: readonly string[] = ["am-pass-Hq3vL8tY", "TESTCA-Kd7mN4pQ", "am-token-Xw5pR2zU", "TESTCERT-Jf6cW9eA", "TESTKEY-Vb9sJ1hG"];

/**
 * Three Alertmanagers: an HA pair behind basic auth with a private CA, one with a bearer token and a client
 * certificate, and an in-cluster one without TLS or credentials.
 */
export function alertingOverrides(): Record<string, string> {
  return {
    "monitoring:alertmanagers": JSON.stringify([
      {
        name: "oncall",
        urls: ["https://am-0.example.com:9093/alertmanager", "https://am-1.example.com:9093/alertmanager/"],
        basicAuthUser: "prometheus",
        tls: { ca: true, serverName: "alertmanager.example.com" },
      },
      { name: "sre", urls: ["https://alerts.example.net"], bearerToken: true, tls: { clientCertificate: true } },
      { name: "in-cluster", urls: ["http://alertmanager-operated.observability.svc:9093"] },
    ]),
    "monitoring:alertmanagerCredentials": JSON.stringify(TEST_ALERTMANAGER_CREDENTIALS),
  };
}

export const TEST_ROLE_ARN = "arn:aws:iam::123456789012:role/ai-platform-logstore";

/** The log store on AWS S3 in eu-west-1 with EKS IRSA instead of static keys. */
export function workloadIdentityOverrides(): Record<string, string | undefined> {
  return {
    "monitoring:s3ServiceAccountAnnotations": JSON.stringify({ "eks.amazonaws.com/role-arn": TEST_ROLE_ARN }),
    "monitoring:s3Endpoint": "https://s3.eu-west-1.amazonaws.com",
    "monitoring:s3Region": "eu-west-1",
    "monitoring:s3User": undefined,
    "monitoring:s3Password": undefined,
  };
}

export const TEST_GOOGLE_SERVICE_ACCOUNT = "logstore@ai-platform-prod.iam.gserviceaccount.com";

/** The log store on Google Cloud Storage (europe-west1) as GKE Workload Identity: no endpoint, no keys. */
export function gcsOverrides(): Record<string, string | undefined> {
  return {
    "monitoring:objectStore": "gcs",
    "monitoring:s3ServiceAccountAnnotations": JSON.stringify({ "iam.gke.io/gcp-service-account": TEST_GOOGLE_SERVICE_ACCOUNT }),
    "monitoring:s3Region": "europe-west1",
    "monitoring:s3Endpoint": undefined,
    "monitoring:s3User": undefined,
    "monitoring:s3Password": undefined,
  };
}
