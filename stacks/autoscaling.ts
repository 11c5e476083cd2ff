// KEDA in the program: installed (`cluster:keda: install`, with a serving part to watch) or checked for (`assume`,
// when a model autoscales), and what each model's ScaledObject waits for.
import type * as pulumi from "@pulumi/pulumi";
import { defaultKedaCrdSource, KEDA_CHART } from "../infra/autoscaling/constants";
import { assumeKeda, Keda } from "../infra/autoscaling/keda";
import { type ChartArchiveUse, chartArchivePath } from "../infra/platform/charts";
import type { Cluster } from "../infra/platform/cluster";
import type { ClusterConfig } from "../infra/platform/cluster-config";
import { type CrdSetRequest, REQUIRED_CRDS } from "../infra/platform/crds";
import type { ServingPlan } from "./serving";

/** Whether the serving plan has a model KEDA scales. */
export function autoscales(serving: ServingPlan | undefined): boolean {
  return serving?.models.some((m) => m.autoscaling !== undefined) ?? false;
}

/** Whether KEDA is part of this stack: installed, or read because a model needs it. */
function kedaInStack(cluster: ClusterConfig, serving: ServingPlan | undefined): boolean {
  return serving !== undefined && (cluster.keda.mode === "install" || autoscales(serving));
}

/** The CRD set `keda`, when KEDA is in the stack: installed with the chart, or assumed with it. */
export function kedaCrdRequest(cluster: ClusterConfig, serving: ServingPlan | undefined): CrdSetRequest | undefined {
  if (!kedaInStack(cluster, serving)) return undefined;
  return { mode: cluster.keda.mode, source: cluster.crdSources.keda ?? defaultKedaCrdSource(KEDA_CHART.version), names: REQUIRED_CRDS.keda };
}

/** The KEDA chart archive, when the stack installs it (the preview checks it is there). */
export function kedaChartArchives(cluster: ClusterConfig, serving: ServingPlan | undefined): ChartArchiveUse[] {
  if (cluster.keda.mode !== "install" || serving === undefined) return [];
  const override = cluster.keda.chartPath;
  return [
    {
      file: override ?? chartArchivePath(KEDA_CHART.component, KEDA_CHART.version),
      version: KEDA_CHART.version,
      versionKey: "cluster:keda",
      overrideKey: "cluster:kedaChartPath",
      ...(override !== undefined ? { overriddenBy: "cluster:kedaChartPath" } : {}),
    },
  ];
}

/** KEDA installed or checked for; returns what the ScaledObjects wait for (nothing when KEDA is not in the stack). */
export function deployKeda(cluster: Cluster, cfg: ClusterConfig, serving: ServingPlan, servingNamespace: pulumi.Input<string>, crds: pulumi.Resource[]): pulumi.Resource[] {
  if (!kedaInStack(cfg, serving)) return [];
  if (cfg.keda.mode === "assume") return [...crds, assumeKeda({ provider: cluster.provider })];
  const keda = new Keda(
    "keda",
    {
      namespace: cfg.keda.namespace,
      monitoringNamespace: serving.cfg.monitoringNamespace,
      chart: cfg.keda.chartPath ?? chartArchivePath(KEDA_CHART.component, KEDA_CHART.version),
      // The namespace's Output: KEDA's RoleBinding there waits for it.
      watchNamespace: servingNamespace,
      imageRegistry: cfg.keda.imageRegistry,
      // KEDA's own metrics (scaler errors, activity) for the metrics server; harmless where none scrapes.
      scrape: true,
      crds,
    },
    { providers: { kubernetes: cluster.provider } },
  );
  return [...crds, keda.chart];
}
