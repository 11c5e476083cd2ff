// The viewer component: admin Secret, the dashboard sidecar's Role, and the Grafana chart.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { RETAIN, retainRenderedOptions } from "../platform/retain";
import { standardLabels } from "../platform/labels";
import { digestAnnotation, secretDigest } from "../platform/secret-digest";
import { SERVICES } from "./constants";
import { ADMIN_PASSWORD_KEY, ADMIN_USER, ADMIN_USER_KEY, buildViewerValues } from "./viewer-values";
import { buildViewerRoleBinding, buildViewerRoleRules, VIEWER_DASHBOARDS_ROLE } from "./viewer-rbac";

export interface ViewerArgs {
  readonly namespace: pulumi.Input<string>;
  readonly chartPath: string;
  readonly version: string;
  /** Secret Output from `config.requireSecret`. */
  readonly adminPassword: pulumi.Input<string>;
  readonly metricsEnabled: boolean;
  readonly embedding?: { readonly subPath: string };
  /** Labels of the viewer pod (the platform label). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`. */
  readonly fixedUserIds: boolean;
  /** The cluster's DNS domain (`cluster:domain`). */
  readonly clusterDomain: string;
  /** The stack's key for secret digests on pod templates (platform/secret-digest.ts). */
  readonly digestKey: pulumi.Input<string>;
}

export const VIEWER_ADMIN_SECRET = "viewer-admin";

export class Viewer extends pulumi.ComponentResource {
  readonly adminSecret: k8s.core.v1.Secret;
  readonly dashboardsRole: k8s.rbac.v1.Role;
  readonly dashboardsRoleBinding: k8s.rbac.v1.RoleBinding;
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: ViewerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Viewer", name, {}, opts);

    this.adminSecret = new k8s.core.v1.Secret(
      VIEWER_ADMIN_SECRET,
      {
        metadata: { name: VIEWER_ADMIN_SECRET, namespace: args.namespace, labels: standardLabels(SERVICES.viewer.name, "viewer") },
        type: "Opaque",
        stringData: { [ADMIN_USER_KEY]: ADMIN_USER, [ADMIN_PASSWORD_KEY]: pulumi.secret(args.adminPassword) },
      },
      { parent: this, ...RETAIN },
    );

    // The dashboard sidecar lists and watches ConfigMaps of this namespace, and nothing else (the chart's own RBAC,
    // turned off in the values, would also let it read every Secret).
    const labels = standardLabels(SERVICES.viewer.name, "viewer");
    this.dashboardsRole = new k8s.rbac.v1.Role(
      VIEWER_DASHBOARDS_ROLE,
      { metadata: { name: VIEWER_DASHBOARDS_ROLE, namespace: args.namespace, labels }, rules: buildViewerRoleRules() },
      { parent: this, ...RETAIN },
    );
    this.dashboardsRoleBinding = new k8s.rbac.v1.RoleBinding(
      VIEWER_DASHBOARDS_ROLE,
      { metadata: { name: VIEWER_DASHBOARDS_ROLE, namespace: args.namespace, labels }, ...buildViewerRoleBinding(args.namespace) },
      { parent: this, ...RETAIN, dependsOn: [this.dashboardsRole] },
    );

    this.chart = new k8s.helm.v4.Chart(
      SERVICES.viewer.name,
      {
        name: SERVICES.viewer.name,
        chart: args.chartPath,
        namespace: args.namespace,
        values: buildViewerValues({
          adminSecretName: VIEWER_ADMIN_SECRET,
          metricsEnabled: args.metricsEnabled,
          embedding: args.embedding,
          clusterDomain: args.clusterDomain,
          podAnnotations: { [digestAnnotation("admin-password")]: secretDigest(args.digestKey, "viewer-admin", args.adminPassword) },
          podLabels: args.podLabels,
          fixedUserIds: args.fixedUserIds,
        }),
      },
      retainRenderedOptions({ parent: this, dependsOn: [this.adminSecret, this.dashboardsRoleBinding] }),
    );
    this.registerOutputs({ service: SERVICES.viewer.name });
  }
}
