// The metrics component: the Prometheus chart with kube-state-metrics and node-exporter.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { retainRenderedOptions } from "../platform/retain";
import { alertingRulesFile } from "./alert-rules";
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
}

export const METRICS_RELEASE = "metrics";

export class Metrics extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: MetricsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Metrics", name, {}, opts);
    this.chart = new k8s.helm.v4.Chart(
      METRICS_RELEASE,
      {
        name: METRICS_RELEASE,
        chart: args.chartPath,
        namespace: args.namespace,
        values: buildMetricsValues({ storageClass: args.storageClass, alertingRules: alertingRulesFile(), podLabels: args.podLabels, fixedUserIds: args.fixedUserIds }),
      },
      retainRenderedOptions({ parent: this }),
    );
    this.registerOutputs({ service: SERVICES.metrics.name });
  }
}
