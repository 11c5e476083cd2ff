// Helm values of the viewer (Grafana, community chart). Pure function.
import type * as pulumi from "@pulumi/pulumi";
import { DASHBOARD_LABEL, DATASOURCE_UIDS, logstoreUrl, metricsUrl, SERVICES } from "./constants";

export interface ViewerValuesArgs {
  /** Secret with keys `admin-user` / `admin-password` (the chart's admin.existingSecret). */
  readonly adminSecretName: string;
  /** Second datasource only when the metrics component is enabled. */
  readonly metricsEnabled: boolean;
  /** Embedding block: served behind a proxy that strips this prefix. */
  readonly embedding?: { readonly subPath: string };
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** The cluster's DNS domain, for the datasource addresses. */
  readonly clusterDomain: string;
  /** Pod annotations (the admin password's digest: Grafana applies the password at start, so a rotation restarts it). */
  readonly podAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
}

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
    sidecar: {
      dashboards: {
        enabled: true,
        label: DASHBOARD_LABEL.key,
        labelValue: DASHBOARD_LABEL.value,
        resource: "configmap",
        provider: { allowUiUpdates: false },
      },
    },
    "grafana.ini": buildGrafanaIni(args.embedding),
    // The chart refuses to render if a secret ever lands in grafana.ini.
    assertNoLeakedSecrets: true,
    nodeSelector: { ...args.nodeSelector },
    ...(args.podAnnotations ? { podAnnotations: { ...args.podAnnotations } } : {}),
  };
}
