// Helm values of the log store (Grafana Loki, community chart, monolithic mode on S3). Pure function: tested
// directly, and the same object is what the Chart resource receives.
import type * as pulumi from "@pulumi/pulumi";
import { LOGSTORE_DATA_DIR, SERVICES } from "./constants";

export interface LogstoreValuesArgs {
  /** `s3Endpoint`, e.g. http://objectstore.app-shaide.svc.cluster.local:9000 */
  readonly s3Endpoint: string;
  readonly bucket: string;
  /** Secret holding AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; injected as env, referenced from the config. */
  readonly credentialsSecretName: string;
  readonly storageClass?: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Annotations of the log store pod (the credentials digest, so a rotation restarts it). */
  readonly podAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
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

/** Environment variable names Loki expands (`-config.expand-env=true`) into the S3 credentials. */
export const S3_ENV = { accessKeyId: "AWS_ACCESS_KEY_ID", secretAccessKey: "AWS_SECRET_ACCESS_KEY" } as const;

/** Loki's s3 `endpoint` is `host:port`; the scheme decides `insecure` (plain HTTP inside the cluster). */
export function s3EndpointParts(url: string): { endpoint: string; insecure: boolean } {
  const u = new URL(url);
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  return { endpoint: `${u.hostname}:${port}`, insecure: u.protocol === "http:" };
}

export function buildLogstoreValues(args: LogstoreValuesArgs): Record<string, unknown> {
  const { endpoint, insecure } = s3EndpointParts(args.s3Endpoint);
  const dataDir = LOGSTORE_DATA_DIR;
  return {
    // Community chart >= 12: "Monolithic" is the single-binary mode (SingleBinary is the deprecated alias).
    deploymentMode: "Monolithic",
    // Service (and StatefulSet) named `logstore`, port 3100, as the spec's Services list says.
    fullnameOverride: SERVICES.logstore.name,
    loki: {
      // Spec "Endpoints": no authentication; single tenant.
      auth_enabled: false,
      server: { http_listen_port: SERVICES.logstore.port, grpc_listen_port: 9095 },
      commonConfig: { path_prefix: dataDir, replication_factor: 1 },
      schemaConfig: {
        configs: [
          // Retention needs the tsdb index with a 24h period.
          { from: "2024-04-01", store: "tsdb", object_store: "s3", schema: "v13", index: { prefix: "index_", period: "24h" } },
        ],
      },
      // Chunk encoding is an ingester setting in Loki (the spec lists it as chunk_store_config.chunk_encoding);
      // the write-ahead log lives under the data directory on the persistent volume.
      ingester: { chunk_encoding: "zstd", wal: { enabled: true, dir: `${dataDir}/wal` } },
      limits_config: { ...LOGSTORE_LIMITS },
      compactor: {
        working_directory: `${dataDir}/compactor`,
        delete_request_store: "s3",
        retention_enabled: true,
        retention_delete_delay: "2h",
      },
      analytics: { reporting_enabled: false },
      storage: {
        type: "s3",
        // One bucket for chunks, ruler and admin data: the stack has one bucket key (s3BucketLogstore).
        bucketNames: { chunks: args.bucket, ruler: args.bucket, admin: args.bucket },
        s3: {
          endpoint,
          insecure,
          s3ForcePathStyle: true,
          region: "us-east-1",
          // Expanded by Loki from the pod environment, so the rendered config holds no credential.
          accessKeyId: `\${${S3_ENV.accessKeyId}}`,
          secretAccessKey: `\${${S3_ENV.secretAccessKey}}`,
        },
      },
    },
    singleBinary: {
      replicas: 1,
      extraArgs: ["-config.expand-env=true"],
      extraEnvFrom: [{ secretRef: { name: args.credentialsSecretName } }],
      persistence: {
        enabled: true,
        size: "10Gi",
        accessModes: ["ReadWriteOnce"],
        // null = the cluster's default storage class
        storageClass: args.storageClass ?? null,
      },
      nodeSelector: { ...args.nodeSelector },
      ...(args.podAnnotations ? { podAnnotations: { ...args.podAnnotations } } : {}),
    },
    // Monolithic: every other target off.
    backend: { replicas: 0 },
    read: { replicas: 0 },
    write: { replicas: 0 },
    ingester: { replicas: 0 },
    querier: { replicas: 0 },
    queryFrontend: { replicas: 0 },
    queryScheduler: { replicas: 0 },
    distributor: { replicas: 0 },
    compactor: { replicas: 0 },
    indexGateway: { replicas: 0 },
    bloomPlanner: { replicas: 0 },
    bloomBuilder: { replicas: 0 },
    bloomGateway: { replicas: 0 },
    // No nginx gateway: clients talk to the `logstore` Service directly on 3100.
    gateway: { enabled: false },
    chunksCache: { enabled: false },
    resultsCache: { enabled: false },
    lokiCanary: { enabled: false },
    // Must be off when the canary is off (chart validate.yaml); v4 Charts skip hooks anyway.
    test: { enabled: false },
    minio: { enabled: false },
  };
}
