// The metrics component: the Prometheus chart with kube-state-metrics and node-exporter, and the Secret of the
// credentials of the Alertmanagers it sends alerts to.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { standardLabels } from "../platform/labels";
import { RETAIN, retainRenderedOptions } from "../platform/retain";
import { digestAnnotation, secretDigest } from "../platform/secret-digest";
import { alertingRulesFile } from "./alert-rules";
import { ALERTMANAGER_AUTH, type AlertmanagerTarget, credentialsSecretData, needsCredentialsSecret, prometheusAlertmanagerConfigs } from "./alertmanagers";
import { SERVICES } from "./constants";
import { buildMetricsValues } from "./metrics-values";

export interface MetricsArgs {
  readonly namespace: pulumi.Input<string>;
  readonly chartPath: string;
  readonly version: string;
  readonly storageClass?: string;
  /** Labels of the release's pods (the platform label). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`. */
  readonly fixedUserIds: boolean;
  /** `monitoring:alertmanagers`, validated. */
  readonly alertmanagers: readonly AlertmanagerTarget[];
  /** `monitoring:alertmanagerCredentials` (JSON, a secret Output); needed when a target uses credentials. */
  readonly alertmanagerCredentials?: pulumi.Input<string>;
  /** The stack's key for secret digests on pod templates (platform/secret-digest.ts). */
  readonly digestKey: pulumi.Input<string>;
}

export const METRICS_RELEASE = "metrics";

export class Metrics extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;
  /** The Alertmanager credentials, when a target has any. */
  readonly alertmanagerAuth?: k8s.core.v1.Secret;

  constructor(name: string, args: MetricsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Metrics", name, {}, opts);
    let serverPodAnnotations: Record<string, pulumi.Output<string>> | undefined;
    if (needsCredentialsSecret(args.alertmanagers)) {
      if (args.alertmanagerCredentials === undefined) throw new Error("Metrics: alertmanagers name credentials, but none were given");
      const data = pulumi.secret(pulumi.output(args.alertmanagerCredentials).apply((raw) => credentialsSecretData(args.alertmanagers, raw)));
      this.alertmanagerAuth = new k8s.core.v1.Secret(
        ALERTMANAGER_AUTH.secretName,
        {
          metadata: { name: ALERTMANAGER_AUTH.secretName, namespace: args.namespace, labels: standardLabels(SERVICES.metrics.name, "metrics") },
          type: "Opaque",
          stringData: data,
        },
        { parent: this, ...RETAIN },
      );
      serverPodAnnotations = { [digestAnnotation("alertmanager-credentials")]: secretDigest(args.digestKey, "alertmanager-credentials", data.apply((d) => JSON.stringify(Object.entries(d).sort()))) };
    }
    this.chart = new k8s.helm.v4.Chart(
      METRICS_RELEASE,
      {
        name: METRICS_RELEASE,
        chart: args.chartPath,
        namespace: args.namespace,
        values: buildMetricsValues({
          storageClass: args.storageClass,
          alertingRules: alertingRulesFile(),
          podLabels: args.podLabels,
          fixedUserIds: args.fixedUserIds,
          alertmanagers: prometheusAlertmanagerConfigs(args.alertmanagers),
          mountAlertmanagerAuth: this.alertmanagerAuth !== undefined,
          serverPodAnnotations,
        }),
      },
      retainRenderedOptions({ parent: this, ...(this.alertmanagerAuth ? { dependsOn: [this.alertmanagerAuth] } : {}) }),
    );
    this.registerOutputs({ service: SERVICES.metrics.name });
  }
}
