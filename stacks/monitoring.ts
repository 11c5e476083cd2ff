// The monitoring part of the program: namespace `monitoring` and the components listed in `monitoring:components`.
// A component that is not listed is skipped; whatever it deployed before stays in the cluster (docs/lifecycle.md).
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { Cluster } from "../infra/platform/cluster";
import { PLATFORM_NAME } from "../infra/platform/labels";
import { type PodSecurityLevel, podSecurityLabels } from "../infra/platform/pod-security";
import { RETAIN } from "../infra/platform/retain";
import {
  Collector,
  Dashboards,
  type MonitoringSecrets,
  Logstore,
  Metrics,
  type MonitoringConfig,
  NAMESPACE,
  Viewer,
} from "../infra/monitoring";
import type { ObjectStoreConfig } from "../infra/monitoring/config";
import type { LogstoreArgs } from "../infra/monitoring/logstore";
import { monitoringPodLabels } from "../infra/monitoring/pod-labels";

/** Recorded on the namespace: the spec loads `cloudProvider` but no component behaves differently by it. */
export const CLOUD_PROVIDER_ANNOTATION = "ai-platform/cloud-provider";

export interface MonitoringOutputs {
  readonly namespace: pulumi.Output<string>;
  readonly components: string[];
  readonly cloudProvider: string;
}

/** The log store's object store with the S3 password (a secret Output) where static keys are used. */
function withPassword(store: ObjectStoreConfig, password: pulumi.Output<string> | undefined): LogstoreArgs["store"] {
  if (store.type === "gcs") return store;
  const { endpoint, region, auth } = store;
  return { type: "s3", endpoint, region, auth: auth.kind === "keys" ? { kind: "keys", user: auth.user, password: password as pulumi.Output<string> } : auth };
}

/**
 * The monitoring namespace's Pod Security level: privileged with the collector (its state directory is a hostPath,
 * chowned by a root init container) or the metrics server (node-exporter reads the host's network, processes and
 * filesystem); every other component's pods pass restricted.
 */
export function monitoringPodSecurityLevel(components: ReadonlySet<string>): PodSecurityLevel {
  return components.has("collector") || components.has("metrics") ? "privileged" : "restricted";
}

/** `digestKey`: the stack's key for secret digests on pod templates (platform/secret-digest.ts). */
export function deployMonitoring(cluster: Cluster, cfg: MonitoringConfig, secrets: MonitoringSecrets, digestKey: pulumi.Input<string>): MonitoringOutputs {
  // Every component talks to the cluster through the stack's provider (its children inherit it).
  const inCluster = { providers: { kubernetes: cluster.provider } };

  // Every other resource waits for the namespace (it references namespace.metadata.name).
  const ns = new k8s.core.v1.Namespace(NAMESPACE, {
    metadata: {
      name: NAMESPACE,
      labels: { "app.kubernetes.io/part-of": PLATFORM_NAME, "app.kubernetes.io/managed-by": "pulumi", ...podSecurityLabels(monitoringPodSecurityLevel(cfg.components)) },
      annotations: { [CLOUD_PROVIDER_ANNOTATION]: cfg.cloudProvider },
    },
  }, { ...RETAIN, provider: cluster.provider });
  const namespace = ns.metadata.name;
  // Every monitoring pod carries the platform label, so the collector ships its logs too.
  const podLabels = monitoringPodLabels(cfg.labelDomain);
  const fixedUserIds = cluster.fixedUserIds;

  // Log store, viewer, collector and metrics deploy in parallel (spec "States and transitions").
  if (cfg.logstore) {
    new Logstore("logstore", {
      namespace,
      chartPath: cfg.logstore.chartPath,
      version: cfg.logstore.version,
      storageClass: cfg.logstore.storageClass,
      bucket: cfg.logstore.store.bucket,
      store: withPassword(cfg.logstore.store, secrets.s3Password),
      bucketJobImage: cfg.logstore.bucketJobImage,
      podLabels,
      fixedUserIds,
      clusterDomain: cluster.domain,
      digestKey,
    }, inCluster);
  }

  let viewer: Viewer | undefined;
  if (cfg.viewer && secrets.viewerAdminPassword) {
    viewer = new Viewer("viewer", {
      namespace,
      chartPath: cfg.viewer.chartPath,
      version: cfg.viewer.version,
      adminPassword: secrets.viewerAdminPassword,
      metricsEnabled: cfg.metrics !== undefined,
      embedding: cfg.viewer.embedding,
      podLabels,
      fixedUserIds,
      clusterDomain: cluster.domain,
      digestKey,
    }, inCluster);
  }

  if (cfg.collector) {
    new Collector("collector", {
      namespace,
      chartPath: cfg.collector.chartPath,
      version: cfg.collector.version,
      labelDomain: cfg.collector.labelDomain,
      clusterDomain: cluster.domain,
      tolerations: cfg.collector.tolerations,
      podLabels,
    }, inCluster);
  }

  if (cfg.metrics) {
    new Metrics("metrics", {
      namespace,
      chartPath: cfg.metrics.chartPath,
      version: cfg.metrics.version,
      storageClass: cfg.metrics.storageClass,
      podLabels,
      fixedUserIds,
      alertmanagers: cfg.metrics.alertmanagers,
      alertmanagerCredentials: secrets.alertmanagerCredentials,
      digestKey,
    }, inCluster);
  }

  // Dashboard ConfigMaps follow the viewer (validation guarantees the viewer is listed).
  if (cfg.dashboards.logs && viewer) {
    new Dashboards("dashboards", { namespace, metricsEnabled: cfg.dashboards.metrics }, { ...inCluster, dependsOn: [viewer] });
  }

  return { namespace, components: [...cfg.components], cloudProvider: cfg.cloudProvider };
}
