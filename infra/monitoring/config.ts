// The `monitoring:` configuration namespace: one zod schema, the spec's key table plus the viewer's embedding block,
// the object store's region and workload identity, and the Alertmanagers (docs/monitoring.md), validated in one pass
// so that `pulumi preview` prints every offending key at once.
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { ChartArchiveUse } from "../platform/charts";
import { ConfigError, doc, issuesToLines, readNamespace, schemaInput, secretPresence, UNREADABLE_SECRET } from "../platform/config";
import { checkLabelDomain, LABEL_DOMAIN_KEY } from "../platform/labels";
import { chartVersion, DEFAULT_S3_REGION, dnsSubdomain, labelKey, labelMap, labelValue, nonEmpty, pinnedImage, s3Region } from "../platform/schema-rules";
import {
  type AlertmanagerTarget,
  alertmanagerCredentialsSchema,
  alertmanagerIssues,
  alertmanagersSchema,
  alertmanagerTargets,
  credentialsPresence,
  needsCredentialsSecret,
} from "./alertmanagers";
import { DEFAULT_COLLECTOR_TOLERATIONS, type Toleration } from "./collector-values";
import {
  type ChartComponent,
  type Component,
  COMPONENTS,
  DEFAULT_BUCKET_JOB_IMAGES,
  defaultChartPath,
  PINNED_CHARTS,
} from "./constants";
import {
  ANNOTATIONS_KEY,
  BUCKET_JOB_ANNOTATIONS_KEY,
  GKE_SERVICE_ACCOUNT_ANNOTATION,
  IRSA_ROLE_ANNOTATION,
  keysNotUsed,
  OBJECT_STORES,
  objectStoreIssues,
  withoutKeys,
} from "./object-store";

export const CONFIG_NAMESPACE = "monitoring";

/**
 * Keys that hold secrets: read only with `config.requireSecret`, never parsed as plain values (the Alertmanager
 * credentials are validated on a copy whose every value is replaced, see `credentialsPresence`).
 */
export const SECRET_KEYS = ["s3Password", "viewerAdminPassword", "alertmanagerCredentials"] as const;
export const QUALIFIED_SECRET_KEYS: readonly string[] = SECRET_KEYS.map((k) => `${CONFIG_NAMESPACE}:${k}`);
/** The secret keys that hold one string. */
const SCALAR_SECRET_KEYS = ["s3Password", "viewerAdminPassword"] as const;

/** Keys that Pulumi passes JSON-encoded (lists and maps). */
const STRUCTURED_KEYS = new Set(["components", "nodeSelector", "viewerEmbedding", "collectorTolerations", ANNOTATIONS_KEY, BUCKET_JOB_ANNOTATIONS_KEY, "alertmanagers"]);

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
      .meta(doc("The components to deploy; an omitted one's objects stay. `dashboards` needs `viewer`.", [...COMPONENTS])),
    logstoreVersion: chartVersion.optional().meta(doc(`Loki chart version, required with \`logstore\`; \`npm run charts:pull\` fetches ${PINNED_CHARTS.logstore.version}.`)),
    viewerVersion: chartVersion.optional().meta(doc(`Grafana chart version, required with \`viewer\`; \`npm run charts:pull\` fetches ${PINNED_CHARTS.viewer.version}.`)),
    collectorVersion: chartVersion.optional().meta(doc(`Alloy chart version, required with \`collector\`; \`npm run charts:pull\` fetches ${PINNED_CHARTS.collector.version}.`)),
    logstoreChartPath: nonEmpty.optional().meta(doc("Default `charts/logstore-<version>.tgz`.")),
    viewerChartPath: nonEmpty.optional().meta(doc("Default `charts/viewer-<version>.tgz`.")),
    collectorChartPath: nonEmpty.optional().meta(doc("Default `charts/collector-<version>.tgz`.")),
    logstoreStorageClass: dnsSubdomain.optional().meta(doc("Of the log store's 10Gi volume; default: the cluster's.")),
    metricsStorageClass: dnsSubdomain.optional().meta(doc("Of the metrics server's 10Gi volume; default: the cluster's.")),
    objectStore: z
      .enum(OBJECT_STORES)
      .default("s3")
      .meta(
        doc(
          "`s3`: an S3 API at `s3Endpoint`, with `s3User`/`s3Password` or IRSA; `gcs`: Cloud Storage with GKE Workload Identity ([monitoring.md](monitoring.md#the-object-store-on-a-cloud)).",
        ),
      ),
    s3Endpoint: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL such as http://objectstore.app-shaide.svc.cluster.local:9000" })
      .optional()
      .meta(doc("Object store URL (`http`: no TLS); required with `logstore` on `s3`.", "http://objectstore.app-shaide.svc.cluster.local:9000", "https://s3.eu-west-1.amazonaws.com")),
    s3BucketLogstore: bucketName.optional().meta(doc("The log store's bucket, required with `logstore`; the bucket Job creates it.", "logstore-chunks")),
    s3Region: s3Region
      .default(DEFAULT_S3_REGION)
      .meta(doc("Region requests are signed for: on AWS the bucket's; with `gcs` its location.", "eu-west-1", "europe-west1")),
    s3User: nonEmpty.optional().meta(doc("Object store user, required with `logstore` without workload identity.", "logstore")),
    // Required (the key table says "yes"); checked below so the message can say how to set it.
    s3Password: secretPresence.optional().meta(doc("Its password, required likewise.")),
    [ANNOTATIONS_KEY]: z
      .record(labelKey, nonEmpty)
      .optional()
      .meta(
        doc(
          `Workload identity instead of keys: annotations of the log store's (and bucket Job's) service account ([monitoring.md](monitoring.md#the-object-store-on-a-cloud)).`,
          { [IRSA_ROLE_ANNOTATION]: "arn:aws:iam::123456789012:role/ai-platform-logstore" },
          { [GKE_SERVICE_ACCOUNT_ANNOTATION]: "logstore@my-project.iam.gserviceaccount.com" },
        ),
      ),
    [BUCKET_JOB_ANNOTATIONS_KEY]: z
      .record(labelKey, nonEmpty)
      .optional()
      .meta(
        doc(
          `The bucket Job's own, so that only it may create buckets; default \`${ANNOTATIONS_KEY}\`.`,
          { [IRSA_ROLE_ANNOTATION]: "arn:aws:iam::123456789012:role/ai-platform-logstore-bucket" },
        ),
      ),
    s3ClientImage: pinnedImage
      .optional()
      .meta(
        doc(
          `The bucket Job's image, by tag (not latest) or digest; default \`${DEFAULT_BUCKET_JOB_IMAGES.s3}\`, with \`gcs\` \`${DEFAULT_BUCKET_JOB_IMAGES.gcs}\`.`,
          "registry.internal/mirror/aws-cli:2.22.0",
          `amazon/aws-cli@sha256:${"0".repeat(64)}`,
        ),
      ),
    viewerAdminPassword: secretPresence.optional().meta(doc("The viewer's `admin` password, required with `viewer`.")),
    cloudProvider: nonEmpty.meta(doc("Where the cluster runs: a namespace label only.", "on-prem")),
    nodeSelector: labelMap.optional().meta(doc("Validated, applied to no pod (the collector and node-exporter run on every node).")),
    collectorTolerations: z
      .array(toleration)
      .optional()
      .meta(
        doc(
          "The collector's, replacing the default: every NoSchedule taint.",
          [{ operator: "Exists", effect: "NoSchedule" }, { key: "dedicated", operator: "Equal", value: "inference", effect: "NoExecute" }],
        ),
      ),
    alertmanagers: alertmanagersSchema
      .optional()
      .meta(
        doc(
          "Alertmanagers that receive the alerts (needs `metrics`), `urls` the replicas of one ([monitoring.md](monitoring.md#receiving-the-alerts)).",
          [{ name: "oncall", urls: ["https://alertmanager-0.example.com:9093", "https://alertmanager-1.example.com:9093"], basicAuthUser: "prometheus", tls: { ca: true } }],
          [{ name: "in-cluster", urls: ["http://alertmanager-operated.observability.svc:9093"] }],
        ),
      ),
    // A secret: validated on a copy with every value replaced (parseMonitoringConfig), never read as plain text.
    alertmanagerCredentials: alertmanagerCredentialsSchema
      .optional()
      .meta(
        doc(
          "The credentials the `alertmanagers` declare, JSON by name: `{\"<name>\": {password?, bearerToken?, ca?, cert?, key?}}` ([monitoring.md](monitoring.md#receiving-the-alerts)).",
        ),
      ),
    viewerEmbedding: z
      .object({
        subPath: z
          .string()
          .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, "must be a path such as /monitoring/viewer (no trailing slash)")
          .meta(doc("Prefix the proxy serves the viewer under, and strips.", "/monitoring/viewer")),
      })
      .strict()
      .optional()
      .meta(doc("The viewer under a sub-path behind an embedding proxy, anonymous Viewer access ([monitoring.md](monitoring.md#the-embedding-block-monitoringviewerembedding)).")),
  })
  .strict()
  .superRefine(
    (value, ctx) => {
      // Runs even when other keys already failed, so one message names every offending key.
      const listed = Array.isArray(value.components) ? value.components : [];
      const present = value as Record<string, unknown>;
      const add = (issues: readonly { path: readonly PropertyKey[]; message: string }[]) => {
        for (const i of issues) ctx.addIssue({ code: "custom", path: [...i.path], message: i.message });
      };
      // Which store, and how the pods authenticate there (object-store.ts): keys not used are refused, not required.
      add(objectStoreIssues(present));
      const notUsed = keysNotUsed(present);
      for (const component of COMPONENTS) {
        if (!listed.includes(component)) continue;
        for (const key of REQUIRED_BY_COMPONENT[component]) {
          if (notUsed.has(key)) continue;
          if (present[key] === undefined) {
            const how = (SECRET_KEYS as readonly string[]).includes(key) ? ` (pulumi config set --secret monitoring:${key} …)` : "";
            ctx.addIssue({ code: "custom", path: [key], message: `required because ${component} is enabled${how}` });
          }
        }
      }
      if (listed.includes("dashboards") && !listed.includes("viewer")) {
        ctx.addIssue({ code: "custom", path: ["components"], message: "dashboards needs viewer listed too (the viewer loads them)" });
      }
      if (present.alertmanagers !== undefined) {
        if (!listed.includes("metrics")) add([{ path: ["alertmanagers"], message: "the metrics server sends the alerts: list metrics in monitoring:components" }]);
        // Cross-checked only once both keys have their shape (this refinement also runs after other failures).
        const targets = alertmanagersSchema.safeParse(present.alertmanagers);
        const credentials = alertmanagerCredentialsSchema.optional().safeParse(present.alertmanagerCredentials);
        if (targets.success && credentials.success) add(alertmanagerIssues(targets.data, credentials.data));
      } else if (present.alertmanagerCredentials !== undefined) {
        add([{ path: ["alertmanagerCredentials"], message: "set, but monitoring:alertmanagers lists no target" }]);
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

/** Workload identity: the annotations of the log store's and of the bucket Job's service accounts. */
export interface ServiceAccountAnnotations {
  readonly logstore: Readonly<Record<string, string>>;
  readonly bucketJob: Readonly<Record<string, string>>;
}

/** The log store's object store and how the log store and the bucket Job authenticate there (object-store.ts). */
export type ObjectStoreConfig =
  | {
      readonly type: "s3";
      readonly endpoint: string;
      readonly bucket: string;
      /** The region requests are signed for. */
      readonly region: string;
      readonly auth: { readonly kind: "keys"; readonly user: string } | { readonly kind: "workloadIdentity"; readonly serviceAccountAnnotations: ServiceAccountAnnotations };
    }
  | {
      readonly type: "gcs";
      readonly bucket: string;
      /** The Cloud Storage location the bucket Job creates the bucket in (`s3Region`). */
      readonly location: string;
      /** Empty when IAM grants the Kubernetes service accounts themselves. */
      readonly serviceAccountAnnotations: ServiceAccountAnnotations;
    };

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
    readonly store: ObjectStoreConfig;
    /** `s3ClientImage`, or the store's default. */
    readonly bucketJobImage: string;
  };
  readonly viewer?: ChartSettings & { readonly embedding?: { readonly subPath: string } };
  readonly collector?: ChartSettings & { readonly labelDomain: string; readonly tolerations: readonly Toleration[] };
  readonly metrics?: ChartSettings & { readonly storageClass?: string; readonly alertmanagers: readonly AlertmanagerTarget[] };
  readonly dashboards: { readonly logs: boolean; readonly metrics: boolean };
}

function objectStoreConfig(c: MonitoringSchema): ObjectStoreConfig {
  const bucket = c.s3BucketLogstore as string;
  const logstore = c[ANNOTATIONS_KEY];
  const annotations = { logstore: logstore ?? {}, bucketJob: c[BUCKET_JOB_ANNOTATIONS_KEY] ?? logstore ?? {} };
  if (c.objectStore === "gcs") return { type: "gcs", bucket, location: c.s3Region, serviceAccountAnnotations: annotations };
  return {
    type: "s3",
    endpoint: c.s3Endpoint as string,
    bucket,
    region: c.s3Region,
    auth: logstore ? { kind: "workloadIdentity", serviceAccountAnnotations: annotations } : { kind: "keys", user: c.s3User as string },
  };
}

function chart(component: ChartComponent, version: string, override: string | undefined): ChartSettings {
  return { version, chartPath: override ?? defaultChartPath(component, version) };
}

/**
 * Validates the raw namespace (strings as in PULUMI_CONFIG, without the `monitoring:` prefix) plus the shared
 * `platform:labelDomain`. Throws one ConfigError naming every offending key.
 */
export function parseMonitoringConfig(raw: Readonly<Record<string, string>>, labelDomain?: string): MonitoringConfig {
  const input = schemaInput(raw, SCALAR_SECRET_KEYS, STRUCTURED_KEYS);
  if (raw.alertmanagerCredentials !== undefined) input.alertmanagerCredentials = credentialsPresence(raw.alertmanagerCredentials, input.alertmanagers);
  // The offline render stands in for every secret: one the stack does not use is no conflict there.
  if (raw.s3Password === UNREADABLE_SECRET && withoutKeys(input)) delete input.s3Password;
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
          store: objectStoreConfig(c),
          bucketJobImage: c.s3ClientImage ?? DEFAULT_BUCKET_JOB_IMAGES[c.objectStore],
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
      ? {
          ...chart("metrics", PINNED_CHARTS.metrics.version, undefined),
          storageClass: c.metricsStorageClass,
          alertmanagers: alertmanagerTargets(c.alertmanagers ?? []),
        }
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
  /** Absent with workload identity (`s3ServiceAccountAnnotations`, `objectStore: gcs`). */
  readonly s3Password?: pulumi.Output<string>;
  readonly viewerAdminPassword?: pulumi.Output<string>;
  /** `alertmanagerCredentials` (JSON), when a target of `alertmanagers` uses credentials. */
  readonly alertmanagerCredentials?: pulumi.Output<string>;
}

/** The secrets, only ever as secret Outputs. Call after `loadMonitoringConfig` succeeded. */
export function loadMonitoringSecrets(cfg: MonitoringConfig): MonitoringSecrets {
  const config = new pulumi.Config(CONFIG_NAMESPACE);
  return {
    // Only the log store and its bucket Job use it (required by the schema unless workload identity replaces it).
    s3Password: cfg.logstore?.store.type === "s3" && cfg.logstore.store.auth.kind === "keys" ? config.requireSecret("s3Password") : undefined,
    viewerAdminPassword: cfg.viewer ? config.requireSecret("viewerAdminPassword") : undefined,
    alertmanagerCredentials: cfg.metrics && needsCredentialsSecret(cfg.metrics.alertmanagers) ? config.requireSecret("alertmanagerCredentials") : undefined,
  };
}
