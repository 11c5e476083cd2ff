// Fixed facts of the gateway deployment: names, ports and paths shared by the builders, the tests and the docs.
import { NAMESPACE as MONITORING_NAMESPACE } from "../monitoring/constants";

/** `app.kubernetes.io/name` and the name of every object the component creates. */
export const APP_NAME = "gateway";

/**
 * `app.kubernetes.io/part-of` of the gateway's objects and pods. The collector turns it into the `part_of` log
 * stream label, and the dashboards know two subsystems, `app-shaide` and `app-serving`: the gateway is the front
 * door of model serving, so its logs count with `app-serving` (Overview "log rate by subsystem").
 */
export const PART_OF = "app-serving";

/** Ports of the gateway process (gateway/src/config/settings.ts defaults, set explicitly in the pod). */
export const PORTS = { http: 8080, metrics: 9090, service: 80 } as const;

/** Probe paths, unauthenticated, served on the http port and on the operations (metrics) port the pod probes. */
export const PROBES = { liveness: "/healthz", readiness: "/readyz" } as const;
export const METRICS_PATH = "/metrics";

/** Where the catalog ConfigMap and the keys Secret are mounted (whole directories: subPath mounts never update). */
export const CATALOG_DIR = "/etc/gateway/catalog";
export const CATALOG_FILE = "catalog.yaml";
export const KEYS_DIR = "/etc/gateway/keys";
export const KEYS_FILE = "keys.yaml";
/** Where the certificate of a provided TLS Secret (`tls.crt` only, never the key) is mounted, for its expiry metric. */
export const TLS_CERT_DIR = "/etc/gateway/tls";
export const TLS_CERT_FILE = "tls.crt";
export const REDIS_URL_KEY = "url";
/** Key of the model servers' API key in the `gateway-upstream` Secret. */
export const UPSTREAM_API_KEY_KEY = "api-key";
/** Key of the `gateway-response-ids` Secret: the secret every gateway replica signs stored-response ids with. */
export const RESPONSE_ID_SECRET_KEY = "secret";

/** Object names (fixed, so the Deployment can reference them and operators can find them). */
export const OBJECT_NAMES = {
  catalog: `${APP_NAME}-catalog`,
  keys: `${APP_NAME}-api-keys`,
  redis: `${APP_NAME}-redis`,
  upstream: `${APP_NAME}-upstream`,
  responseIds: `${APP_NAME}-response-ids`,
  /** The gateway's keys for the usage ledger (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY). */
  usageLedger: `${APP_NAME}-usage-ledger`,
  /** The gateway's own service account, made only for IRSA (`gateway:usageLedger.serviceAccountAnnotations`). */
  serviceAccount: APP_NAME,
} as const;

/** Pod template annotation whose change rolls the Deployment when the catalog changes. */
export const CATALOG_CHECKSUM_ANNOTATION = "checksum/catalog";

/** The metrics server scrapes only this namespace's pods on the metrics port. */
export { MONITORING_NAMESPACE };

export { NAMESPACE_NAME_LABEL } from "../platform/labels";

/** Cluster DNS, needed to resolve model-server Services (dns mode) and Redis. */
export const CLUSTER_DNS = { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" }, port: 53 } as const;

/**
 * On SIGTERM the process fails readiness but keeps serving this long (`GATEWAY_DRAIN_DELAY_MS`), so endpoints stop
 * sending new connections before it stops accepting; no preStop hook (and no `sleep` binary) is needed for that.
 */
export const DRAIN_DELAY_SECONDS = 5;
/** Margin on top of the drain delay and the shutdown grace before the kubelet sends SIGKILL: room for the usage ledger's last write (5 s at most). */
export const TERMINATION_MARGIN_SECONDS = 10;

/** The model-serving namespace when neither the config nor a serving part of the program names it. */
export const DEFAULT_SERVING_NAMESPACE = "app-serving";
