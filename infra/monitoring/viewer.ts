// The viewer component: admin Secret plus the Grafana chart.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { RETAIN, retainRenderedOptions } from "../platform/retain";
import { standardLabels } from "../platform/labels";
import { digestAnnotation, secretDigest } from "../platform/secret-digest";
import { SERVICES } from "./constants";
import { ADMIN_PASSWORD_KEY, ADMIN_USER, ADMIN_USER_KEY, buildViewerValues } from "./viewer-values";

export interface ViewerArgs {
  readonly namespace: pulumi.Input<string>;
  readonly chartPath: string;
  readonly version: string;
  /** Secret Output from `config.requireSecret`. */
  readonly adminPassword: pulumi.Input<string>;
  readonly metricsEnabled: boolean;
  readonly embedding?: { readonly subPath: string };
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** The cluster's DNS domain (`cluster:domain`). */
  readonly clusterDomain: string;
  /** The stack's key for secret digests on pod templates (platform/secret-digest.ts). */
  readonly digestKey: pulumi.Input<string>;
}

export const VIEWER_ADMIN_SECRET = "viewer-admin";

export class Viewer extends pulumi.ComponentResource {
  readonly adminSecret: k8s.core.v1.Secret;
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
          nodeSelector: args.nodeSelector,
          clusterDomain: args.clusterDomain,
          podAnnotations: { [digestAnnotation("admin-password")]: secretDigest(args.digestKey, "viewer-admin", args.adminPassword) },
        }),
      },
      retainRenderedOptions({ parent: this, dependsOn: [this.adminSecret] }),
    );
    this.registerOutputs({ service: SERVICES.viewer.name });
  }
}
