// Pure builders of the gateway Deployment's pod template and its companions (PodDisruptionBudget, autoscaler,
// Service). Plain objects: the component wraps them in Pulumi resources, the tests read them directly.
import { SETTINGS_ENV } from "../../gateway/src/config/settings";
import type { ResourceSettings } from "./config";
import { ledgerEnv } from "./usage-ledger";
import type { UsageLedgerSetting } from "./usage-ledger-config";
import {
  APP_NAME,
  CATALOG_CHECKSUM_ANNOTATION,
  CATALOG_DIR,
  CATALOG_FILE,
  KEYS_DIR,
  KEYS_FILE,
  METRICS_PATH,
  TLS_CERT_DIR,
  TLS_CERT_FILE,
  OBJECT_NAMES,
  PORTS,
  DRAIN_DELAY_SECONDS,
  PROBES,
  REDIS_URL_KEY,
  RESPONSE_ID_SECRET_KEY,
  UPSTREAM_API_KEY_KEY,
  TERMINATION_MARGIN_SECONDS,
} from "./constants";
import { gatewayLabels, selectorLabels } from "./labels";
import { containerSecurityContext, type PodIdentity, podSecurityContext } from "../platform/security";

/** Everything the pod template depends on; the catalog arrives as its checksum (the ConfigMap holds the text). */
export interface WorkloadArgs {
  readonly labelDomain: string;
  readonly image: string;
  readonly imagePullPolicy?: string;
  readonly imagePullSecrets: readonly string[];
  readonly resources: ResourceSettings;
  readonly shutdownGraceSeconds: number;
  readonly logLevel: string;
  /** Browser origins allowed (CORS); none: the variable is not set. */
  readonly corsOrigins: readonly string[];
  /** OTLP traces endpoint and sample ratio; none: the variables are not set (traces off). */
  readonly traces?: { readonly endpoint: string; readonly sampleRatio: number };
  readonly env: Readonly<Record<string, string>>;
  readonly catalogChecksum: string;
  readonly redis: boolean;
  /** GATEWAY_UPSTREAM_API_KEY from the `gateway-upstream` Secret. */
  readonly upstreamApiKey?: boolean;
  /** Set the image's user ids (false where the cluster assigns them). */
  readonly fixedUserIds: boolean;
  /**
   * The kubernetes.io/tls Secret the operator provides (`gateway:exposure.tls.secretName` without an issuer): its
   * certificate alone is mounted, so the gateway exports its expiry. Certificates cert-manager issues are watched
   * through cert-manager's metrics.
   */
  readonly tlsCertSecret?: string;
  /** `gateway:usageLedger`: its settings (and static keys from their Secret) in the container's env. */
  readonly usageLedger?: UsageLedgerSetting;
  /** The pod's service account, when the gateway has one of its own (IRSA); else the namespace's default. */
  readonly serviceAccountName?: string;
  /** More pod-template annotations (the Redis URL's digest: env is read at start, so a change must roll the pods). */
  readonly extraAnnotations?: Readonly<Record<string, string>>;
}

/** SIGKILL only after the drain delay, the shutdown grace and a margin. */
export function terminationGraceSeconds(shutdownGraceSeconds: number): number {
  return DRAIN_DELAY_SECONDS + shutdownGraceSeconds + TERMINATION_MARGIN_SECONDS;
}

/** Annotations of the pod template: Prometheus discovery (`kubernetes-pods` job) and the catalog checksum. */
export function podAnnotations(catalogChecksum: string): Record<string, string> {
  return {
    "prometheus.io/scrape": "true",
    "prometheus.io/port": String(PORTS.metrics),
    "prometheus.io/path": METRICS_PATH,
    // A changed catalog changes the template, so Kubernetes rolls the pods. The keys Secret has no checksum on
    // purpose: the process re-reads the mounted file, and keys change without a restart.
    [CATALOG_CHECKSUM_ANNOTATION]: catalogChecksum,
  };
}

export function containerEnv(args: Pick<WorkloadArgs, "shutdownGraceSeconds" | "logLevel" | "corsOrigins" | "traces" | "env" | "redis" | "upstreamApiKey" | "tlsCertSecret" | "usageLedger">) {
  const env: ({ name: string; value: string } | { name: string; valueFrom: { secretKeyRef: { name: string; key: string } } })[] = [
    { name: SETTINGS_ENV.port, value: String(PORTS.http) },
    { name: SETTINGS_ENV.metricsPort, value: String(PORTS.metrics) },
    { name: SETTINGS_ENV.catalogFile, value: `${CATALOG_DIR}/${CATALOG_FILE}` },
    { name: SETTINGS_ENV.keysFile, value: `${KEYS_DIR}/${KEYS_FILE}` },
    { name: SETTINGS_ENV.drainDelayMs, value: String(DRAIN_DELAY_SECONDS * 1000) },
    { name: SETTINGS_ENV.shutdownGraceMs, value: String(args.shutdownGraceSeconds * 1000) },
    { name: SETTINGS_ENV.logLevel, value: args.logLevel },
  ];
  if (args.corsOrigins.length > 0) env.push({ name: SETTINGS_ENV.corsOrigins, value: args.corsOrigins.join(",") });
  if (args.traces) {
    env.push({ name: SETTINGS_ENV.otlpTracesEndpoint, value: args.traces.endpoint });
    env.push({ name: SETTINGS_ENV.traceSampleRatio, value: String(args.traces.sampleRatio) });
  }
  if (args.tlsCertSecret) env.push({ name: SETTINGS_ENV.tlsCertFile, value: `${TLS_CERT_DIR}/${TLS_CERT_FILE}` });
  if (args.redis) env.push({ name: SETTINGS_ENV.redisUrl, valueFrom: { secretKeyRef: { name: OBJECT_NAMES.redis, key: REDIS_URL_KEY } } });
  if (args.upstreamApiKey) env.push({ name: SETTINGS_ENV.upstreamApiKey, valueFrom: { secretKeyRef: { name: OBJECT_NAMES.upstream, key: UPSTREAM_API_KEY_KEY } } });
  env.push({ name: SETTINGS_ENV.responseIdSecret, valueFrom: { secretKeyRef: { name: OBJECT_NAMES.responseIds, key: RESPONSE_ID_SECRET_KEY } } });
  if (args.usageLedger) env.push(...ledgerEnv(args.usageLedger));
  for (const [name, value] of Object.entries(args.env).sort(([a], [b]) => a.localeCompare(b))) env.push({ name, value });
  return env;
}

/** The image's numeric user (gateway/Dockerfile `USER 10001:10001`). */
export const RUNTIME_UID = 10001;
export const GATEWAY_IDENTITY: PodIdentity = { uid: RUNTIME_UID, gid: RUNTIME_UID };

export function buildDeploymentSpec(args: WorkloadArgs) {
  const selector = selectorLabels();
  return {
    // No `replicas`: the HorizontalPodAutoscaler owns the count. Setting it here would make every `pulumi up`
    // (server-side apply) take the field back and reset the scale (the Deployment starts at 1; the HPA raises it
    // to minReplicas at once).
    selector: { matchLabels: selector },
    // Surge first, never below the current count: a rollout (catalog change, new image) drops no capacity.
    strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    template: {
      metadata: { labels: gatewayLabels(args.labelDomain), annotations: { ...podAnnotations(args.catalogChecksum), ...args.extraAnnotations } },
      spec: {
        terminationGracePeriodSeconds: terminationGraceSeconds(args.shutdownGraceSeconds),
        // No Kubernetes API token; with IRSA, EKS's webhook mounts a token of its own for AWS STS.
        automountServiceAccountToken: false,
        ...(args.serviceAccountName ? { serviceAccountName: args.serviceAccountName } : {}),
        enableServiceLinks: false,
        // fsGroup makes the mounted keys file readable by the container's group (defaultMode 0440 below).
        securityContext: podSecurityContext(args.fixedUserIds ? GATEWAY_IDENTITY : undefined),
        ...(args.imagePullSecrets.length > 0 ? { imagePullSecrets: args.imagePullSecrets.map((name) => ({ name })) } : {}),
        // Spread over nodes and zones when possible, without blocking scheduling on small clusters.
        topologySpreadConstraints: ["kubernetes.io/hostname", "topology.kubernetes.io/zone"].map((topologyKey) => ({
          maxSkew: 1,
          topologyKey,
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: selector },
        })),
        containers: [
          {
            name: APP_NAME,
            image: args.image,
            ...(args.imagePullPolicy ? { imagePullPolicy: args.imagePullPolicy } : {}),
            ports: [
              { name: "http", containerPort: PORTS.http, protocol: "TCP" },
              { name: "metrics", containerPort: PORTS.metrics, protocol: "TCP" },
            ],
            env: containerEnv(args),
            // On the operations listener: clients can fill every connection the API port admits, and a probe
            // refused there would get a healthy pod restarted (docs/gateway-api.md "Connections").
            readinessProbe: { httpGet: { path: PROBES.readiness, port: "metrics" }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 2 },
            livenessProbe: { httpGet: { path: PROBES.liveness, port: "metrics" }, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
            resources: { requests: { ...args.resources.requests }, limits: { ...args.resources.limits } },
            securityContext: containerSecurityContext(args.fixedUserIds ? GATEWAY_IDENTITY : undefined),
            volumeMounts: [
              { name: "catalog", mountPath: CATALOG_DIR, readOnly: true },
              { name: "keys", mountPath: KEYS_DIR, readOnly: true },
              ...(args.tlsCertSecret ? [{ name: "tls-cert", mountPath: TLS_CERT_DIR, readOnly: true }] : []),
              { name: "tmp", mountPath: "/tmp" },
            ],
          },
        ],
        volumes: [
          { name: "catalog", configMap: { name: OBJECT_NAMES.catalog } },
          { name: "keys", secret: { secretName: OBJECT_NAMES.keys, defaultMode: 0o440 } },
          // The certificate only: the private key never enters the gateway's pod. Optional: a Secret not made yet
          // must not keep the API from starting (the gauge is absent until it is).
          ...(args.tlsCertSecret
            ? [{ name: "tls-cert", secret: { secretName: args.tlsCertSecret, items: [{ key: TLS_CERT_FILE, path: TLS_CERT_FILE }], defaultMode: 0o440, optional: true } }]
            : []),
          // The only writable path (the root filesystem is read-only); memory-backed and small.
          { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
        ],
      },
    },
  };
}

/** Voluntary disruptions (node drains, upgrades) take one pod at a time. */
export function buildPdbSpec() {
  return { maxUnavailable: 1, selector: { matchLabels: selectorLabels() } };
}

export function buildHpaSpec(args: { replicas: number; maxReplicas: number; targetCpuUtilization: number }) {
  return {
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: APP_NAME },
    minReplicas: args.replicas,
    maxReplicas: args.maxReplicas,
    metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: args.targetCpuUtilization } } }],
    // Streams hold connections for minutes: scale down slowly so a dip does not cut capacity that is still busy.
    behavior: { scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] } },
  };
}

/** ClusterIP: port 80 → the API, and the metrics port (its NetworkPolicy admits only the monitoring namespace). */
export function buildServiceSpec() {
  return {
    type: "ClusterIP",
    selector: selectorLabels(),
    ports: [
      { name: "http", port: PORTS.service, targetPort: "http", protocol: "TCP" },
      { name: "metrics", port: PORTS.metrics, targetPort: "metrics", protocol: "TCP" },
    ],
  };
}
