// Helm values of the collector (Grafana Alloy chart 1.8.1, DaemonSet). Pure function; rendered with the real chart in
// render.test.ts, which also checks that every key here is read by a template.
import { containerSecurityContext, podSecurityContext } from "../platform/security";
import { IMAGE_IDENTITIES } from "./chart-security";
import { buildCollectorConfig } from "./collector-config";
import { PINNED_CHARTS } from "./constants";
import { RESOURCES } from "./resources";
import { scrapeAnnotations } from "./scrape";

export const COLLECTOR_NAME = "collector";

/** A Kubernetes toleration, as `monitoring:collectorTolerations` takes them. */
export interface Toleration {
  readonly key?: string;
  readonly operator?: "Exists" | "Equal";
  readonly value?: string;
  readonly effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  readonly tolerationSeconds?: number;
}

/**
 * Default tolerations: every NoSchedule taint. GPU nodes are usually tainted (`nvidia.com/gpu:NoSchedule`), and a
 * collector that does not run there ships no model-server logs. NoExecute taints (a node being drained, not ready)
 * are left to evict it like any pod.
 */
export const DEFAULT_COLLECTOR_TOLERATIONS: readonly Toleration[] = [{ operator: "Exists", effect: "NoSchedule" }];

/** Alloy's HTTP server: UI, /-/ready and its own /metrics. */
export const COLLECTOR_HTTP_PORT = 12345;

/**
 * Where Alloy keeps its state (per component; `loki.source.kubernetes` keeps `positions.yml` there, the last read
 * timestamp of every container it tails): a directory on the node, so a restarted or updated collector pod resumes
 * where it stopped instead of sending every container's logs again (or skipping what was written meanwhile).
 */
export const COLLECTOR_STATE = { hostPath: "/var/lib/ai-platform/collector", mountPath: "/var/lib/alloy/data", volume: "state" } as const;

/**
 * The node directory is created by the kubelet as root; a short init container (the Alloy image itself, so no
 * extra image to mirror) hands it to Alloy's user. It is the only root process of the stack and holds nothing but
 * CAP_CHOWN, on nothing but that directory.
 */
export function collectorStateInitContainer(): Record<string, unknown> {
  const { uid, gid } = IMAGE_IDENTITIES.alloy;
  return {
    name: "state-owner",
    image: `docker.io/grafana/alloy:${PINNED_CHARTS.collector.appVersion}`,
    command: ["/bin/sh", "-c", `chown ${uid}:${gid} ${COLLECTOR_STATE.mountPath} && chmod 0750 ${COLLECTOR_STATE.mountPath}`],
    securityContext: {
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ["ALL"], add: ["CHOWN"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
    resources: RESOURCES.collectorStateInit,
    volumeMounts: [{ name: COLLECTOR_STATE.volume, mountPath: COLLECTOR_STATE.mountPath }],
  };
}

export interface CollectorValuesArgs {
  readonly labelDomain: string;
  /** The cluster's DNS domain, for the log store's address. */
  readonly clusterDomain: string;
  /** `monitoring:collectorTolerations` (default DEFAULT_COLLECTOR_TOLERATIONS). */
  readonly tolerations: readonly Toleration[];
  /** Labels of the collector pods (the platform label: the collector ships its own logs too). */
  readonly podLabels?: Readonly<Record<string, string>>;
}

export function buildCollectorValues(args: CollectorValuesArgs): Record<string, unknown> {
  return {
    fullnameOverride: COLLECTOR_NAME,
    // The chart's PodLogs CRD (monitoring.grafana.com) serves a component this pipeline does not use.
    crds: { create: false },
    alloy: {
      configMap: { content: buildCollectorConfig(args.labelDomain, args.clusterDomain) },
      storagePath: COLLECTOR_STATE.mountPath,
      // Logs come through the Kubernetes API: neither /var/log nor the container runtime's directories are mounted.
      mounts: { varlog: false, dockercontainers: false, extra: [{ name: COLLECTOR_STATE.volume, mountPath: COLLECTOR_STATE.mountPath }] },
      enableReporting: false,
      resources: RESOURCES.collector,
      // Alloy's own non-root user (the image defaults to root, which API-based collection does not need).
      securityContext: containerSecurityContext(IMAGE_IDENTITIES.alloy),
    },
    global: { podSecurityContext: podSecurityContext(IMAGE_IDENTITIES.alloy) },
    configReloader: {
      resources: RESOURCES.collectorConfigReloader,
      securityContext: containerSecurityContext(IMAGE_IDENTITIES.nobody),
    },
    // One pod per node, tainted nodes included. No nodeSelector on purpose: a collector that skips nodes loses their logs.
    controller: {
      type: "daemonset",
      tolerations: args.tolerations.map((t) => ({ ...t })),
      initContainers: [collectorStateInitContainer()],
      volumes: { extra: [{ name: COLLECTOR_STATE.volume, hostPath: { path: COLLECTOR_STATE.hostPath, type: "DirectoryOrCreate" } }] },
      podAnnotations: scrapeAnnotations(COLLECTOR_HTTP_PORT, "/metrics"),
      ...(args.podLabels ? { podLabels: { ...args.podLabels } } : {}),
    },
    // ClusterRole + binding with exactly what loki.source.kubernetes and pod discovery need. The chart's default
    // rules read every Secret and ConfigMap of the cluster, nodes, events and more, for components not used here.
    // (The template concatenates both lists into one ClusterRole and breaks on an empty one: namespaces, which only a
    // ClusterRole can grant anyway, go in the second.)
    rbac: {
      create: true,
      rules: [{ apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] }],
      clusterRules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] }],
    },
  };
}
