// Pure builders of the rate-limit store the stack deploys when the gateway's per-key limits must be shared by its
// replicas (gateway:redis): one Valkey pod, no persistence (the buckets refill within a minute), password-protected,
// reachable only from the gateway's pods. Plain objects: the component wraps them, tests read them directly.
import { serviceUrl } from "../platform/cluster-config";
import { PLATFORM_NAME, platformLabelKeys } from "../platform/labels";
import { containerSecurityContext, type PodIdentity, podSecurityContext } from "../platform/security";
import { APP_NAME, PART_OF } from "./constants";
import { selectorLabels } from "./labels";

export const REDIS_NAME = `${APP_NAME}-redis`;
export const REDIS_PORT = 6379;
export const REDIS_CONF_KEY = "valkey.conf";
const CONF_DIR = "/etc/valkey";
/** Numeric user and group of the image's `valkey` user, so runAsNonRoot can verify it. */
const REDIS_IDENTITY: PodIdentity = { uid: 999, gid: 1000 };

export function redisSelectorLabels(): Record<string, string> {
  return { "app.kubernetes.io/name": REDIS_NAME, "app.kubernetes.io/instance": REDIS_NAME };
}

export function redisLabels(): Record<string, string> {
  return { ...redisSelectorLabels(), "app.kubernetes.io/component": "rate-limit-store", "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" };
}

/**
 * The server's configuration: the password lives here (a Secret), not on the command line. Limit state is small and
 * expires on its own; keys without a TTL never exist, so eviction only ever drops expiring buckets.
 */
export function redisConf(password: string): string {
  return [
    `port ${REDIS_PORT}`,
    `requirepass ${password}`,
    'save ""',
    "appendonly no",
    "maxmemory 64mb",
    "maxmemory-policy volatile-ttl",
    "",
  ].join("\n");
}

/** The URL the gateway connects with (GATEWAY_REDIS_URL, from the same Secret). */
export function redisUrl(password: string, namespace: string, clusterDomain: string): string {
  return serviceUrl(REDIS_NAME, namespace, REDIS_PORT, clusterDomain).replace(/^http:\/\//, `redis://:${encodeURIComponent(password)}@`) + "/0";
}

/**
 * `labelDomain`: the pod carries the platform label (`<label_domain>/platform: ai-platform`) so the monitoring collector
 * ships its log, like the gateway's own pods.
 */
export function buildRedisDeploymentSpec(args: { image: string; configDigest: string; secretName: string; fixedUserIds: boolean; labelDomain: string }) {
  const identity = args.fixedUserIds ? REDIS_IDENTITY : undefined;
  return {
    replicas: 1,
    selector: { matchLabels: redisSelectorLabels() },
    // Stateless and single: replace, never run two.
    strategy: { type: "Recreate" },
    template: {
      metadata: {
        labels: { ...redisLabels(), [platformLabelKeys(args.labelDomain).platform]: PLATFORM_NAME },
        annotations: { "checksum/redis-config": args.configDigest },
      },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: podSecurityContext(identity),
        containers: [
          {
            name: "valkey",
            image: args.image,
            command: ["valkey-server", `${CONF_DIR}/${REDIS_CONF_KEY}`],
            // Its working directory is its data directory (an emptyDir; nothing is persisted there).
            workingDir: "/data",
            ports: [{ name: "redis", containerPort: REDIS_PORT, protocol: "TCP" }],
            readinessProbe: { tcpSocket: { port: "redis" }, periodSeconds: 5 },
            livenessProbe: { tcpSocket: { port: "redis" }, periodSeconds: 10, failureThreshold: 3 },
            resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "128Mi" } },
            securityContext: containerSecurityContext(identity),
            volumeMounts: [
              { name: "config", mountPath: CONF_DIR, readOnly: true },
              { name: "data", mountPath: "/data" },
            ],
          },
        ],
        volumes: [
          { name: "config", secret: { secretName: args.secretName, items: [{ key: REDIS_CONF_KEY, path: REDIS_CONF_KEY }], defaultMode: 0o440 } },
          { name: "data", emptyDir: { sizeLimit: "64Mi" } },
        ],
      },
    },
  };
}

export function buildRedisServiceSpec() {
  return { type: "ClusterIP", selector: redisSelectorLabels(), ports: [{ name: "redis", port: REDIS_PORT, targetPort: "redis", protocol: "TCP" }] };
}

/**
 * Only the gateway's pods reach it; it reaches nothing: Egress is among the policy types and there is no egress
 * rule. No `egress: []` either: the API server does not store an empty list, so the live object would never match.
 */
export function buildRedisNetworkPolicySpec() {
  return {
    podSelector: { matchLabels: redisSelectorLabels() },
    policyTypes: ["Ingress", "Egress"],
    ingress: [{ from: [{ podSelector: { matchLabels: selectorLabels() } }], ports: [{ protocol: "TCP", port: REDIS_PORT }] }],
  };
}
