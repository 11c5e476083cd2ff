// Helm values of the viewer (Grafana, community chart 12.3.2). Pure function; rendered with the real chart in
// render.test.ts, which also checks that every key here is read by a template.
import type * as pulumi from "@pulumi/pulumi";
import { chartContainerSecurityContext, chartPodSecurityContext, IMAGE_IDENTITIES } from "./chart-security";
import { DASHBOARD_LABEL, DATASOURCE_UIDS, logstoreUrl, metricsUrl, SERVICES } from "./constants";
import { RESOURCES } from "./resources";

export interface ViewerValuesArgs {
  /** Secret with keys `admin-user` / `admin-password` (the chart's admin.existingSecret). */
  readonly adminSecretName: string;
  /** Second datasource only when the metrics component is enabled. */
  readonly metricsEnabled: boolean;
  /** Embedding block: served behind a proxy that strips this prefix. */
  readonly embedding?: { readonly subPath: string };
  /** The cluster's DNS domain, for the datasource addresses. */
  readonly clusterDomain: string;
  /** Pod annotations (the admin password's digest: Grafana applies the password at start, so a rotation restarts it). */
  readonly podAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
  /** Pod labels (the platform label, so the collector ships the viewer's logs). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`: run as Grafana's own user 472, or let the cluster assign the ids. */
  readonly fixedUserIds: boolean;
}

/**
 * A writable /tmp for both containers: the root filesystems are read-only, and Grafana (plugin downloads) and the
 * sidecar (Python's temporary files) both need one.
 */
export const TMP_VOLUME = { name: "tmp", mountPath: "/tmp" } as const;

/**
 * Where the sidecar writes the dashboards and Grafana's provider reads them. Not the chart's `/tmp/dashboards`: a
 * volume mounted inside another (/tmp) depends on the runtime mounting them in the right order.
 */
export const DASHBOARDS_FOLDER = "/var/lib/grafana-dashboards";

export const ADMIN_USER = "admin";
export const ADMIN_USER_KEY = "admin-user";
export const ADMIN_PASSWORD_KEY = "admin-password";

export function buildDatasources(metricsEnabled: boolean, clusterDomain: string): Record<string, unknown>[] {
  const list: Record<string, unknown>[] = [
    { name: "Log store", type: "loki", uid: DATASOURCE_UIDS.logstore, url: logstoreUrl(clusterDomain), access: "proxy", isDefault: true, editable: false },
  ];
  if (metricsEnabled) {
    list.push({ name: "Metrics", type: "prometheus", uid: DATASOURCE_UIDS.metrics, url: metricsUrl(clusterDomain), access: "proxy", isDefault: false, editable: false });
  }
  return list;
}

/**
 * grafana.ini. With the embedding block: root URL on the sub-path, serve_from_sub_path off (the proxy strips the
 * prefix, so direct port-forward access can no longer load the app's files), anonymous Viewer access.
 */
export function buildGrafanaIni(embedding?: { subPath: string }): Record<string, unknown> {
  const ini: Record<string, unknown> = {
    analytics: { reporting_enabled: false, check_for_updates: false },
    users: { allow_sign_up: false },
  };
  if (embedding) {
    ini.server = { root_url: `%(protocol)s://%(domain)s:%(http_port)s${embedding.subPath}/`, serve_from_sub_path: false };
    ini["auth.anonymous"] = { enabled: true, org_name: "Main Org.", org_role: "Viewer" };
    ini.security = { allow_embedding: true };
  }
  return ini;
}

export function buildViewerValues(args: ViewerValuesArgs): Record<string, unknown> {
  const containerSecurity = chartContainerSecurityContext(IMAGE_IDENTITIES.grafana, args.fixedUserIds);
  return {
    fullnameOverride: SERVICES.viewer.name,
    // ClusterIP only: the viewer is never exposed by this stack (spec "Authentication").
    service: { type: "ClusterIP", port: SERVICES.viewer.port },
    ingress: { enabled: false },
    adminUser: ADMIN_USER,
    admin: { existingSecret: args.adminSecretName, userKey: ADMIN_USER_KEY, passwordKey: ADMIN_PASSWORD_KEY },
    // Stateless: dashboards come from ConfigMaps, datasources from provisioning.
    persistence: { enabled: false },
    datasources: { "datasources.yaml": { apiVersion: 1, datasources: buildDatasources(args.metricsEnabled, args.clusterDomain) } },
    // The chart's RBAC lets the sidecar read every ConfigMap and Secret (of the cluster, or of the namespace when
    // namespaced). The sidecar reads dashboard ConfigMaps only: the Viewer component binds a Role that allows
    // exactly that (viewer.ts), and the chart creates none.
    rbac: { create: false },
    sidecar: {
      dashboards: {
        enabled: true,
        label: DASHBOARD_LABEL.key,
        labelValue: DASHBOARD_LABEL.value,
        resource: "configmap",
        folder: DASHBOARDS_FOLDER,
        extraMounts: [{ ...TMP_VOLUME }],
      },
      resources: RESOURCES.viewerDashboardSidecar,
      securityContext: containerSecurity,
    },
    "grafana.ini": buildGrafanaIni(args.embedding),
    // The chart refuses to render if a secret ever lands in grafana.ini (its default, pinned here on purpose).
    assertNoLeakedSecrets: true,
    resources: RESOURCES.viewer,
    securityContext: chartPodSecurityContext(IMAGE_IDENTITIES.grafana, args.fixedUserIds),
    containerSecurityContext: containerSecurity,
    extraEmptyDirMounts: [{ ...TMP_VOLUME }],
    ...(args.podAnnotations ? { podAnnotations: { ...args.podAnnotations } } : {}),
    ...(args.podLabels ? { podLabels: { ...args.podLabels } } : {}),
  };
}
