// The platform's secure defaults (platform/security.ts) in the shape the charts take them. A chart's own default
// security context is deep-merged with what we pass, so where the cluster assigns user ids
// (`cluster:fixedUserIds: false`, OpenShift) the chart's fixed ids must be removed explicitly: Helm deletes a
// default key only when the value sets it to null.
import { containerSecurityContext, type PodIdentity, podSecurityContext } from "../platform/security";

/** Numeric users the monitoring images are built to run as (each image's own non-root user). */
export const IMAGE_IDENTITIES = {
  loki: { uid: 10001, gid: 10001 },
  grafana: { uid: 472, gid: 472 },
  alloy: { uid: 473, gid: 473 },
  // prometheus, its config reloader, kube-state-metrics and node-exporter: `nobody`.
  nobody: { uid: 65534, gid: 65534 },
} as const satisfies Record<string, PodIdentity>;

const ID_KEYS = ["runAsUser", "runAsGroup", "fsGroup"] as const;

/** Pod security context for a chart value: the fixed identity, or the chart's fixed ids removed. */
export function chartPodSecurityContext(identity: PodIdentity, fixedUserIds: boolean): Record<string, unknown> {
  if (fixedUserIds) return podSecurityContext(identity);
  return { ...podSecurityContext(), ...Object.fromEntries(ID_KEYS.map((k) => [k, null])) };
}

/** Container security context for a chart value (same rule for the ids). */
export function chartContainerSecurityContext(identity: PodIdentity, fixedUserIds: boolean): Record<string, unknown> {
  if (fixedUserIds) return containerSecurityContext(identity);
  return { ...containerSecurityContext(), runAsUser: null, runAsGroup: null };
}
