// The monitoring part of the program: namespace `monitoring` and the components listed in `monitoring:components`.
// A component that is not listed is skipped; whatever it deployed before stays in the cluster (see README).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { hasNamespace } from "../infra/platform/config";
import { PLATFORM_NAME } from "../infra/platform/labels";
import { RETAIN } from "../infra/platform/retain";
import {
  Collector,
  CONFIG_NAMESPACE,
  Dashboards,
  loadMonitoringConfig,
  loadMonitoringSecrets,
  Logstore,
  Metrics,
  type MonitoringConfig,
  NAMESPACE,
  Viewer,
} from "../infra/monitoring";

/** Recorded on the namespace: the spec loads `cloudProvider` but no component behaves differently by it. */
export const CLOUD_PROVIDER_ANNOTATION = "ai-platform/cloud-provider";

export interface MonitoringOutputs {
  readonly namespace: pulumi.Output<string>;
  readonly components: string[];
  readonly cloudProvider: string;
}

export function deployMonitoring(cfg: MonitoringConfig = loadMonitoringConfig()): MonitoringOutputs {
  const secrets = loadMonitoringSecrets(cfg);

  // Every other resource waits for the namespace (it references namespace.metadata.name).
  const ns = new k8s.core.v1.Namespace(NAMESPACE, {
    metadata: {
      name: NAMESPACE,
      labels: { "app.kubernetes.io/part-of": PLATFORM_NAME, "app.kubernetes.io/managed-by": "pulumi" },
      annotations: { [CLOUD_PROVIDER_ANNOTATION]: cfg.cloudProvider },
    },
  }, RETAIN);
  const namespace = ns.metadata.name;

  // Log store, viewer, collector and metrics deploy in parallel (spec "States and transitions").
  if (cfg.logstore) {
    new Logstore("logstore", {
      namespace,
      chartPath: cfg.logstore.chartPath,
      version: cfg.logstore.version,
      storageClass: cfg.logstore.storageClass,
      s3Endpoint: cfg.logstore.s3.endpoint,
      bucket: cfg.logstore.s3.bucket,
      s3User: cfg.logstore.s3.user,
      s3Password: secrets.s3Password,
      s3ClientImage: cfg.logstore.s3ClientImage,
      nodeSelector: cfg.nodeSelector,
    });
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
      nodeSelector: cfg.nodeSelector,
    });
  }

  if (cfg.collector) {
    new Collector("collector", {
      namespace,
      chartPath: cfg.collector.chartPath,
      version: cfg.collector.version,
      labelDomain: cfg.collector.labelDomain,
    });
  }

  if (cfg.metrics) {
    new Metrics("metrics", {
      namespace,
      chartPath: cfg.metrics.chartPath,
      version: cfg.metrics.version,
      storageClass: cfg.metrics.storageClass,
      nodeSelector: cfg.nodeSelector,
    });
  }

  // Dashboard ConfigMaps follow the viewer (validation guarantees the viewer is listed).
  if (cfg.dashboards.logs && viewer) {
    new Dashboards("dashboards", { namespace, metricsEnabled: cfg.dashboards.metrics }, { dependsOn: [viewer] });
  }

  return { namespace, components: [...cfg.components], cloudProvider: cfg.cloudProvider };
}

/** Deploys the monitoring part only when the stack has a `monitoring:` namespace. */
export function deployMonitoringIfConfigured(): MonitoringOutputs | undefined {
  return hasNamespace(CONFIG_NAMESPACE) ? deployMonitoring() : undefined;
}
