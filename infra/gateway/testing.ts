// Test fixtures: a complete, valid `gateway:` configuration as the runtime holds it (`namespace:key` → raw string).
import { clusterConfig, withOverrides, namespaceKeys } from "../platform/config-testing";
import type { CatalogInput } from "../../gateway/src/config/catalog";
import { QUALIFIED_SECRET_KEYS } from "./config";
import type { UsageLedgerSetting } from "./usage-ledger-config";

export const TEST_REDIS_URL = "redis://:redis-pass-Hq7vX2@redis-master.redis.svc.cluster.local:6379/0";

export const TEST_CATALOG: CatalogInput = {
  models: [
    { id: "qwen3-8b", category: "generative", upstream: { mode: "dns", host: "qwen3-8b.app-serving.svc.cluster.local", port: 8000 } },
    { id: "bge-m3", category: "embedder", upstream: { mode: "endpoints", endpoints: [{ url: "http://bge-m3.app-serving.svc.cluster.local:8000" }] } },
  ],
};

export const TEST_KEYS = [
  { name: "team-a", models: ["qwen3-8b"], rpm: 60, tpm: 100000 },
  { name: "team-b", expiresAt: "2027-06-30T00:00:00Z" },
  { name: "batch", rotation: 2 },
];

/** A parsed `gateway:usageLedger`: an in-cluster MinIO, static keys for the gateway and for the bucket Job. */
export const TEST_LEDGER: UsageLedgerSetting = {
  bucket: "ai-platform-usage",
  endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000",
  s3Endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000",
  region: "us-east-1",
  prefix: "ledger/",
  retentionDays: 396,
  flushSeconds: 5,
  egress: { namespace: "app-shaide", podLabels: { app: "minio" }, port: 9000 },
  gateway: { kind: "keys" },
  bucketJob: { kind: "keys" },
};

export function gatewayConfig(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const base: Record<string, string> = {
    ...clusterConfig(),
    "platform:labelDomain": "ai-platform.io",
    "gateway:image": "registry.example.com/ai-platform/gateway:0.1.0",
    "gateway:apiKeys": JSON.stringify(TEST_KEYS),
    "gateway:catalog": JSON.stringify(TEST_CATALOG),
  };
  return withOverrides(base, overrides);
}

/** The raw `gateway:` namespace without its prefix, as `parseGatewayConfig` takes it. */
export function rawGatewayNamespace(config: Record<string, string>): Record<string, string> {
  return namespaceKeys(config, "gateway");
}

export const SECRET_KEYS = QUALIFIED_SECRET_KEYS;
