// The collector component: the Alloy chart as a DaemonSet.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { retainRenderedOptions } from "../platform/retain";
import { buildCollectorValues, COLLECTOR_NAME, type Toleration } from "./collector-values";

export interface CollectorArgs {
  readonly namespace: pulumi.Input<string>;
  readonly chartPath: string;
  readonly version: string;
  /** `platform:labelDomain`, shared with the model-serving stack. */
  readonly labelDomain: string;
  /** The cluster's DNS domain (`cluster:domain`). */
  readonly clusterDomain: string;
  /** `monitoring:collectorTolerations` (default: every NoSchedule taint). */
  readonly tolerations: readonly Toleration[];
  /** Labels of the collector pods (the platform label). */
  readonly podLabels?: Readonly<Record<string, string>>;
}

export class Collector extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: CollectorArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Collector", name, {}, opts);
    this.chart = new k8s.helm.v4.Chart(
      COLLECTOR_NAME,
      {
        name: COLLECTOR_NAME,
        chart: args.chartPath,
        namespace: args.namespace,
        values: buildCollectorValues({ labelDomain: args.labelDomain, clusterDomain: args.clusterDomain, tolerations: args.tolerations, podLabels: args.podLabels }),
      },
      retainRenderedOptions({ parent: this }),
    );
    this.registerOutputs({ daemonSet: COLLECTOR_NAME });
  }
}
