// The dashboards component: one ConfigMap per dashboard, labelled for the viewer's sidecar (loaded without restart).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { RETAIN } from "../platform/retain";
import { standardLabels } from "../platform/labels";
import { DASHBOARD_LABEL } from "./constants";
import { logDashboards, metricsDashboards } from "./dashboards/definitions";
import type { Dashboard } from "./dashboards/model";

export interface DashboardsArgs {
  readonly namespace: pulumi.Input<string>;
  /** Metrics dashboards only when the metrics component is enabled. */
  readonly metricsEnabled: boolean;
}

/** Grafana JSON of a dashboard (our `datasourceKind` bookkeeping field stripped). */
export function dashboardJson(d: Dashboard): string {
  const { datasourceKind: _kind, ...model } = d;
  return JSON.stringify(model, null, 2);
}

export function selectDashboards(metricsEnabled: boolean): Dashboard[] {
  return [...logDashboards(), ...(metricsEnabled ? metricsDashboards() : [])];
}

export class Dashboards extends pulumi.ComponentResource {
  readonly configMaps: k8s.core.v1.ConfigMap[];

  constructor(name: string, args: DashboardsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Dashboards", name, {}, opts);
    this.configMaps = selectDashboards(args.metricsEnabled).map(
      (d) =>
        new k8s.core.v1.ConfigMap(
          `dashboard-${d.uid}`,
          {
            metadata: {
              name: `dashboard-${d.uid}`,
              namespace: args.namespace,
              labels: { ...standardLabels("dashboards", "dashboards"), [DASHBOARD_LABEL.key]: DASHBOARD_LABEL.value },
            },
            data: { [`${d.uid}.json`]: dashboardJson(d) },
          },
          { parent: this, ...RETAIN },
        ),
    );
    this.registerOutputs({ configMaps: this.configMaps.map((c) => c.metadata.name) });
  }
}
