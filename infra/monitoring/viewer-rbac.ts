// RBAC of the viewer's dashboard sidecar, declared by the stack instead of the chart: the sidecar watches the
// dashboard ConfigMaps of its own namespace (spec "Dashboards"), so it gets exactly that. The chart's rules would add
// Secrets, and cluster-wide unless namespaced.
import { SERVICES } from "./constants";

export const VIEWER_DASHBOARDS_ROLE = `${SERVICES.viewer.name}-dashboards`;

/** The chart names its ServiceAccount after fullnameOverride. */
export const VIEWER_SERVICE_ACCOUNT = SERVICES.viewer.name;

export function buildViewerRoleRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }];
}

export function buildViewerRoleBinding<N>(namespace: N) {
  return {
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: VIEWER_DASHBOARDS_ROLE },
    subjects: [{ kind: "ServiceAccount", name: VIEWER_SERVICE_ACCOUNT, namespace }],
  };
}
