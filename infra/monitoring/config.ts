// The `monitoring:` configuration namespace: one zod schema, exactly the spec's key table (plus the viewer's
// embedding block, see docs/monitoring.md), validated in one pass so that `pulumi preview` prints every offending key at once.
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { ChartArchiveUse } from "../platform/charts";
import { ConfigError, doc, issuesToLines, readNamespace, schemaInput, secretPresence } from "../platform/config";
import { checkLabelDomain, LABEL_DOMAIN_KEY } from "../platform/labels";
import { chartVersion, dnsSubdomain, labelKey, labelMap, labelValue, nonEmpty } from "../platform/schema-rules";
import { DEFAULT_COLLECTOR_TOLERATIONS, type Toleration } from "./collector-values";
import {
  type ChartComponent,
  type Component,
  COMPONENTS,
  DEFAULT_S3_CLIENT_IMAGE,
  defaultChartPath,
  PINNED_CHARTS,
} from "./constants";

export const CONFIG_NAMESPACE = "monitoring";

/** Keys that hold secrets: read only with `config.requireSecret`, never parsed as plain values. */
export const SECRET_KEYS = ["s3Password", "viewerAdminPassword"] as const;
export const QUALIFIED_SECRET_KEYS: readonly string[] = SECRET_KEYS.map((k) => `${CONFIG_NAMESPACE}:${k}`);

/** Keys that Pulumi passes JSON-encoded (lists and maps). */
const STRUCTURED_KEYS = new Set(["components", "nodeSelector", "viewerEmbedding", "collectorTolerations"]);

/** A Kubernetes toleration (core/v1 Toleration); `Exists` takes no value. */
const toleration = z
  .strictObject({
    key: labelKey.optional(),
    operator: z.enum(["Exists", "Equal"]).optional(),
    value: labelValue.optional(),
    effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
    tolerationSeconds: z.number().int().min(0).optional(),
  })
  .refine((t) => !(t.operator === "Exists" && t.value !== undefined), "operator Exists takes no value")
  .refine((t) => t.key !== undefined || t.operator === "Exists", "without a key the operator must be Exists (tolerates every taint)")
  .refine((t) => t.tolerationSeconds === undefined || t.effect === "NoExecute", "tolerationSeconds applies to NoExecute only");

/** S3 bucket naming rules (3–63 chars, lowercase, digits, '.', '-'). */
const bucketName = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be a valid S3 bucket name");

/** Which keys each enabled component needs (spec: "All config keys of enabled components must be present"). */
export const REQUIRED_BY_COMPONENT: Readonly<Record<Component, readonly string[]>> = {
  logstore: ["logstoreVersion", "s3Endpoint", "s3BucketLogstore", "s3User"],
  viewer: ["viewerVersion", "viewerAdminPassword"],
  collector: ["collectorVersion"],
  dashboards: [],
  metrics: [],
};

export const monitoringSchema = z
  .object({
    components: z
      .array(z.enum(COMPONENTS))
      .refine((list) => new Set(list).size === list.length, "must not list a component twice")
      .meta(doc("The components to deploy in namespace `monitoring`. Omitting one skips it and leaves what it deployed before in place; `dashboards` needs `viewer` listed too.", [...COMPONENTS])),
    logstoreVersion: chartVersion.optional().meta(doc(`Chart version of the log store (Loki). Required with \`logstore\`; \`npm run charts:pull\` fetches ${PINNED_CHARTS.logstore.version}.`, PINNED_CHARTS.logstore.version)),
    viewerVersion: chartVersion.optional().meta(doc(`Chart version of the viewer (Grafana). Required with \`viewer\`; \`npm run charts:pull\` fetches ${PINNED_CHARTS.viewer.version}.`, PINNED_CHARTS.viewer.version)),
    collectorVersion: chartVersion.optional().meta(doc(`Chart version of the collector (Alloy). Required with \`collector\`; \`npm run charts:pull\` fetches ${PINNED_CHARTS.collector.version}.`, PINNED_CHARTS.collector.version)),
    logstoreChartPath: nonEmpty.optional().meta(doc("Chart archive of the log store; default `charts/logstore-<version>.tgz`.", "charts/logstore-14.1.0.tgz")),
    viewerChartPath: nonEmpty.optional().meta(doc("Chart archive of the viewer; default `charts/viewer-<version>.tgz`.", "charts/viewer-12.3.2.tgz")),
    collectorChartPath: nonEmpty.optional().meta(doc("Chart archive of the collector; default `charts/collector-<version>.tgz`.", "charts/collector-1.8.1.tgz")),
    logstoreStorageClass: dnsSubdomain.optional().meta(doc("Storage class of the log store's 10Gi volume (on-prem `hostpath`; cloud `standard` or `premium-rwo`); omitted: the cluster's default class.", "standard")),
    metricsStorageClass: dnsSubdomain.optional().meta(doc("Storage class of the metrics server's 10Gi volume; omitted: the cluster's default class.", "standard")),
    s3Endpoint: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL such as http://objectstore.app-shaide.svc.cluster.local:9000" })
      .optional()
      .meta(doc("Object store address (cluster-internal, port 9000). Required with `logstore`. `http` makes Loki connect without TLS.", "http://objectstore.app-shaide.svc.cluster.local:9000")),
    s3BucketLogstore: bucketName.optional().meta(doc("Bucket of the log store's chunks and ruler data. Required with `logstore`; the bucket Job creates it if missing.", "logstore-chunks")),
    s3User: nonEmpty.optional().meta(doc("Object store user; must equal the credentials of the object store's owning stack. Required with `logstore`.", "logstore")),
    // Required (the key table says "yes"); checked below so the message can say how to set it.
    s3Password: secretPresence.optional().meta(doc("Object store password; must equal the owning stack's. Rotating it re-runs the bucket Job and restarts the log store.")),
    s3ClientImage: nonEmpty
      .optional()
      .meta(doc(`Image of the S3 client the bucket Job runs; default \`${DEFAULT_S3_CLIENT_IMAGE}\`. Air-gapped clusters point it at a mirrored copy.`, "registry.internal/mirror/aws-cli:2.22.0")),
    viewerAdminPassword: secretPresence.optional().meta(doc("Password of the viewer's `admin` user. Required with `viewer`. Rotating it restarts the viewer.")),
    cloudProvider: nonEmpty.meta(doc("Where the cluster runs; required (deployment fails without it), recorded on the namespace, changes no component's behaviour.", "on-prem")),
    nodeSelector: labelMap.optional().meta(doc("Node labels; validated as label pairs and applied to no pod (the collector and node-exporter must run on every node; the others run wherever the scheduler puts them).", { "kubernetes.io/os": "linux" })),
    collectorTolerations: z
      .array(toleration)
      .optional()
      .meta(
        doc(
          "Tolerations of the collector DaemonSet. Default: every NoSchedule taint (GPU nodes are usually tainted, and a node without a collector ships no logs). Replaces the default when set.",
          [{ operator: "Exists", effect: "NoSchedule" }, { key: "dedicated", operator: "Equal", value: "inference", effect: "NoExecute" }],
        ),
      ),
    viewerEmbedding: z
      .object({
        subPath: z
          .string()
          .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, "must be a path such as /monitoring/viewer (no trailing slash)")
          .meta(doc("Path prefix the embedding proxy serves the viewer under (stripped before it reaches the viewer).", "/monitoring/viewer")),
      })
      .strict()
      .optional()
      .meta(doc("The embedding block: the viewer's root URL becomes the sub-path with serving from sub-path off, anonymous Viewer access on. Direct port-forward access then fails to load the app's files.", { subPath: "/monitoring/viewer" })),
  })
  .strict()
  .superRefine(
    (value, ctx) => {
      // Runs even when other keys already failed, so one message names every offending key.
      const listed = Array.isArray(value.components) ? value.components : [];
      const present = value as Record<string, unknown>;
      if (present.s3Password === undefined) {
        ctx.addIssue({ code: "custom", path: ["s3Password"], message: "required (pulumi config set --secret monitoring:s3Password …)" });
      }
      for (const component of COMPONENTS) {
        if (!listed.includes(component)) continue;
        for (const key of REQUIRED_BY_COMPONENT[component]) {
          if (present[key] === undefined) {
            const how = (SECRET_KEYS as readonly string[]).includes(key) ? ` (pulumi config set --secret monitoring:${key} …)` : "";
            ctx.addIssue({ code: "custom", path: [key], message: `required because ${component} is enabled${how}` });
          }
        }
      }
      if (listed.includes("dashboards") && !listed.includes("viewer")) {
        ctx.addIssue({ code: "custom", path: ["components"], message: "dashboards needs viewer listed too (the viewer loads them)" });
      }
    },
    { when: () => true },
  );

export type MonitoringSchema = z.infer<typeof monitoringSchema>;

export interface ChartSettings {
  readonly version: string;
  /** Absolute or repository-relative path of the chart archive. */
  readonly chartPath: string;
}

/** The validated configuration, shaped per component. Secrets are not in here: see `loadMonitoringSecrets`. */
export interface MonitoringConfig {
  readonly components: ReadonlySet<Component>;
  readonly cloudProvider: string;
  /** Loaded and validated; applied to no pod (spec "Stack configuration keys"). */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** `platform:labelDomain` when set: every monitoring pod gets the platform label, so the collector ships its logs. */
  readonly labelDomain?: string;
  readonly logstore?: ChartSettings & {
    readonly storageClass?: string;
    readonly s3: { readonly endpoint: string; readonly bucket: string; readonly user: string };
    readonly s3ClientImage: string;
  };
  readonly viewer?: ChartSettings & { readonly embedding?: { readonly subPath: string } };
  readonly collector?: ChartSettings & { readonly labelDomain: string; readonly tolerations: readonly Toleration[] };
  readonly metrics?: ChartSettings & { readonly storageClass?: string };
  readonly dashboards: { readonly logs: boolean; readonly metrics: boolean };
}

function chart(component: ChartComponent, version: string, override: string | undefined): ChartSettings {
  return { version, chartPath: override ?? defaultChartPath(component, version) };
}

/**
 * Validates the raw namespace (strings as in PULUMI_CONFIG, without the `monitoring:` prefix) plus the shared
 * `platform:labelDomain`. Throws one ConfigError naming every offending key.
 */
export function parseMonitoringConfig(raw: Readonly<Record<string, string>>, labelDomain?: string): MonitoringConfig {
  const input = schemaInput(raw, SECRET_KEYS, STRUCTURED_KEYS);
  const parsed = monitoringSchema.safeParse(input);
  const problems = parsed.success ? [] : issuesToLines(CONFIG_NAMESPACE, parsed.error.issues);
  const listed = Array.isArray(input.components) ? (input.components as unknown[]) : [];
  // The collector filters and labels by the shared platform label domain, so it is part of this validation.
  if (listed.includes("collector")) problems.push(...checkLabelDomain(labelDomain));
  const labelDomainOk = labelDomain !== undefined && checkLabelDomain(labelDomain).length === 0;
  if (!parsed.success || problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, problems);

  const c = parsed.data;
  const on = new Set(c.components);
  return {
    components: on,
    cloudProvider: c.cloudProvider,
    nodeSelector: c.nodeSelector ?? {},
    labelDomain: labelDomainOk ? labelDomain : undefined,
    logstore: on.has("logstore")
      ? {
          ...chart("logstore", c.logstoreVersion as string, c.logstoreChartPath),
          storageClass: c.logstoreStorageClass,
          s3: { endpoint: c.s3Endpoint as string, bucket: c.s3BucketLogstore as string, user: c.s3User as string },
          s3ClientImage: c.s3ClientImage ?? DEFAULT_S3_CLIENT_IMAGE,
        }
      : undefined,
    viewer: on.has("viewer")
      ? { ...chart("viewer", c.viewerVersion as string, c.viewerChartPath), embedding: c.viewerEmbedding }
      : undefined,
    collector: on.has("collector")
      ? {
          ...chart("collector", c.collectorVersion as string, c.collectorChartPath),
          labelDomain: labelDomain as string,
          tolerations: c.collectorTolerations ?? DEFAULT_COLLECTOR_TOLERATIONS,
        }
      : undefined,
    // The key table has no metrics version or path key: the metrics chart is pinned here (see docs/monitoring.md).
    metrics: on.has("metrics")
      ? { ...chart("metrics", PINNED_CHARTS.metrics.version, undefined), storageClass: c.metricsStorageClass }
      : undefined,
    dashboards: { logs: on.has("dashboards") && on.has("viewer"), metrics: on.has("dashboards") && on.has("viewer") && on.has("metrics") },
  };
}

/** The chart archives the enabled components render from, for the preview's check that each is there. */
export function monitoringChartArchives(cfg: MonitoringConfig): ChartArchiveUse[] {
  const uses: ChartArchiveUse[] = [];
  for (const component of ["logstore", "viewer", "collector"] as const) {
    const c = cfg[component];
    if (!c) continue;
    const overridden = c.chartPath !== defaultChartPath(component, c.version);
    uses.push({
      file: c.chartPath,
      version: c.version,
      versionKey: `${CONFIG_NAMESPACE}:${component}Version`,
      overrideKey: `${CONFIG_NAMESPACE}:${component}ChartPath`,
      ...(overridden ? { overriddenBy: `${CONFIG_NAMESPACE}:${component}ChartPath` } : {}),
    });
  }
  // The metrics chart has no version or path key: it is pinned in constants.ts.
  if (cfg.metrics) uses.push({ file: cfg.metrics.chartPath, version: cfg.metrics.version, versionKey: "the pinned metrics chart" });
  return uses;
}

/** Reads and validates the stack's `monitoring:` namespace. */
export function loadMonitoringConfig(): MonitoringConfig {
  return parseMonitoringConfig(readNamespace(CONFIG_NAMESPACE), pulumi.runtime.allConfig()[LABEL_DOMAIN_KEY]);
}

export interface MonitoringSecrets {
  readonly s3Password: pulumi.Output<string>;
  readonly viewerAdminPassword?: pulumi.Output<string>;
}

/** The secrets, only ever as secret Outputs. Call after `loadMonitoringConfig` succeeded. */
export function loadMonitoringSecrets(cfg: MonitoringConfig): MonitoringSecrets {
  const config = new pulumi.Config(CONFIG_NAMESPACE);
  return {
    s3Password: config.requireSecret("s3Password"),
    viewerAdminPassword: cfg.viewer ? config.requireSecret("viewerAdminPassword") : undefined,
  };
}
