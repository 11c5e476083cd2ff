// Helm values of the log store (Grafana Loki, community chart 14.1.0, monolithic mode on S3 or Cloud Storage). Pure function: tested
// directly, rendered with the real chart in render.test.ts, and the same object is what the Chart resource receives.
// Every key below is read by a template of the chart (render.test.ts removes each one and checks the output changes).
import type * as pulumi from "@pulumi/pulumi";
import { chartContainerSecurityContext, chartPodSecurityContext, IMAGE_IDENTITIES } from "./chart-security";
import { LOGSTORE_DATA_DIR, SERVICES } from "./constants";
import { RESOURCES } from "./resources";
import { scrapeAnnotations } from "./scrape";

/** Loki's object store: an S3 API, or Cloud Storage's own (Loki's `gcs` backend). */
export type LogstoreObjectStore =
  | {
      readonly type: "s3";
      /** `s3Endpoint`, e.g. http://objectstore.app-shaide.svc.cluster.local:9000 */
      readonly endpoint: string;
      /** `s3Region`: the region requests are signed for. */
      readonly region: string;
      /** Static keys: the Secret holding AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; absent with workload identity. */
      readonly secretName?: string;
    }
  // Google's client takes Application Default Credentials: on GKE, the pod's Workload Identity from the metadata server.
  | { readonly type: "gcs" };

export interface LogstoreValuesArgs {
  readonly store: LogstoreObjectStore;
  readonly bucket: string;
  /** Workload identity: the annotations of Loki's service account (the cloud role or account it acts as). */
  readonly serviceAccountAnnotations?: Readonly<Record<string, string>>;
  readonly storageClass?: string;
  /** Annotations of the log store pod (the credentials digest, so a rotation restarts it). */
  readonly podAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
  /** Labels of the log store pod (the platform label, so the collector ships its logs). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`: run as Loki's own user 10001, or let the cluster assign the ids. */
  readonly fixedUserIds: boolean;
}

/** Log store settings of the spec's table, under their real Loki config keys. */
export const LOGSTORE_LIMITS = {
  retention_period: "336h",
  ingestion_rate_mb: 16,
  ingestion_burst_size_mb: 32,
  per_stream_rate_limit: "3MB",
  per_stream_rate_limit_burst: "10MB",
  max_entries_limit_per_query: 10000,
  max_query_length: "336h",
  max_query_parallelism: 4,
} as const;

/** Environment variable names Loki expands (the chart always passes `-config.expand-env=true`) into the S3 credentials. */
export const S3_ENV = { accessKeyId: "AWS_ACCESS_KEY_ID", secretAccessKey: "AWS_SECRET_ACCESS_KEY" } as const;

/** Loki serves its own metrics on the HTTP port. */
export const LOGSTORE_METRICS_PATH = "/metrics";

/** Loki's s3 `endpoint` is `host:port`; the scheme decides `insecure` (plain HTTP inside the cluster). */
export function s3EndpointParts(url: string): { endpoint: string; insecure: boolean } {
  const u = new URL(url);
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  return { endpoint: `${u.hostname}:${port}`, insecure: u.protocol === "http:" };
}

/** The `loki.storage` value: the backend, its bucket (chunks and ruler data share the one `s3BucketLogstore`). */
function storageValues(store: LogstoreObjectStore, bucket: string): Record<string, unknown> {
  const bucketNames = { chunks: bucket, ruler: bucket };
  if (store.type === "gcs") return { type: "gcs", bucketNames };
  const { endpoint, insecure } = s3EndpointParts(store.endpoint);
  return {
    type: "s3",
    bucketNames,
    s3: {
      endpoint,
      insecure,
      s3ForcePathStyle: true,
      region: store.region,
      // Expanded by Loki from the pod environment, so the rendered config holds no credential. Without them
      // (workload identity) Loki's S3 client takes the default AWS credential chain.
      ...(store.secretName ? { accessKeyId: `\${${S3_ENV.accessKeyId}}`, secretAccessKey: `\${${S3_ENV.secretAccessKey}}` } : {}),
    },
  };
}

export function buildLogstoreValues(args: LogstoreValuesArgs): Record<string, unknown> {
  const secretName = args.store.type === "s3" ? args.store.secretName : undefined;
  const objectStore = args.store.type;
  const dataDir = LOGSTORE_DATA_DIR;
  return {
    // Community chart >= 12: "Monolithic" is the single-binary mode (SingleBinary is the deprecated alias).
    deploymentMode: "Monolithic",
    // The chart names the headless Service, the config and runtime ConfigMaps and the `app.kubernetes.io/name` label
    // after the chart's name (`loki` by default), the StatefulSet and its Services after the release: with the name
    // overridden, everything is `logstore` (StatefulSet serviceName `logstore-headless` = the headless Service's name).
    // The release is `logstore` too (logstore.ts), so no fullnameOverride is needed.
    nameOverride: SERVICES.logstore.name,
    loki: {
      // Spec "Endpoints": no authentication; single tenant.
      auth_enabled: false,
      server: { http_listen_port: SERVICES.logstore.port },
      commonConfig: { replication_factor: 1 },
      schemaConfig: {
        configs: [
          // Retention needs the tsdb index with a 24h period.
          { from: "2024-04-01", store: "tsdb", object_store: objectStore, schema: "v13", index: { prefix: "index_", period: "24h" } },
        ],
      },
      // Chunk encoding is an ingester setting in Loki (the spec lists it as chunk_store_config.chunk_encoding);
      // the write-ahead log lives under the data directory on the persistent volume.
      ingester: { chunk_encoding: "zstd", wal: { enabled: true, dir: `${dataDir}/wal` } },
      limits_config: { ...LOGSTORE_LIMITS },
      compactor: {
        working_directory: `${dataDir}/compactor`,
        delete_request_store: objectStore,
        retention_enabled: true,
        retention_delete_delay: "2h",
      },
      analytics: { reporting_enabled: false },
      storage: storageValues(args.store, args.bucket),
      podSecurityContext: chartPodSecurityContext(IMAGE_IDENTITIES.loki, args.fixedUserIds),
      containerSecurityContext: chartContainerSecurityContext(IMAGE_IDENTITIES.loki, args.fixedUserIds),
    },
    // Loki never calls the Kubernetes API: no token in the pod, and (rules sidecar off, RBAC namespaced) no Role or
    // ClusterRole at all. The chart's default ClusterRole reads every ConfigMap and Secret of the cluster.
    // With workload identity its annotations name the cloud role or account (EKS's webhook then injects the role and a
    // token of its own, whatever automountServiceAccountToken says; GKE's metadata server needs no token in the pod).
    serviceAccount: { automountServiceAccountToken: false, ...(args.serviceAccountAnnotations ? { annotations: { ...args.serviceAccountAnnotations } } : {}) },
    defaults: { automountServiceAccountToken: false },
    rbac: { namespaced: true },
    sidecar: { rules: { enabled: false } },
    // One replica: the chart runs exactly one monolith unless replicas > 1 (and refuses more without object storage).
    singleBinary: {
      ...(secretName ? { extraEnvFrom: [{ secretRef: { name: secretName } }] } : {}),
      resources: RESOURCES.logstore,
      persistence: {
        enabled: true,
        size: "10Gi",
        accessModes: ["ReadWriteOnce"],
        // null = the cluster's default storage class
        storageClass: args.storageClass ?? null,
        // The chart's default deletes the claim with the StatefulSet: a destroy and re-create would lose the WAL and
        // the compactor's state. Kept on delete and on scale-down (docs/lifecycle.md says how to remove it).
        whenDeleted: "Retain",
        whenScaled: "Retain",
      },
      // Scraped by the metrics server (`kubernetes-pods`): the ingestion-error alert reads Loki's own counters.
      podAnnotations: { ...scrapeAnnotations(SERVICES.logstore.port, LOGSTORE_METRICS_PATH), ...(args.podAnnotations ?? {}) },
      ...(args.podLabels ? { podLabels: { ...args.podLabels } } : {}),
    },
    // Monolithic mode renders none of the scalable or distributed targets, whatever their replicas say.
    // No nginx gateway: clients talk to the `logstore` Service directly on 3100.
    gateway: { enabled: false },
    chunksCache: { enabled: false },
    resultsCache: { enabled: false },
    memcached: { enabled: false },
    lokiCanary: { enabled: false },
    // Must be off when the canary is off (chart validate.yaml); v4 Charts skip hooks anyway.
    test: { enabled: false },
  };
}
