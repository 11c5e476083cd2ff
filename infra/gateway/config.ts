// The `gateway:` configuration namespace: one zod schema, validated in one pass so that `pulumi preview` prints
// every offending key at once (same error style as the monitoring stack, through infra/platform/config).
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { ApiKeyEntrySchema } from "../../gateway/src/auth/api-keys";
import { AliasSchema, CatalogSchema, type CatalogAlias, type CatalogInput } from "../../gateway/src/config/catalog";
import { CorsOriginSchema, OtlpEndpointSchema, parseSettingsEnv, SETTINGS_ENV } from "../../gateway/src/config/settings";
import { ConfigError, decodeStructured, doc, issuesToLines, readNamespace, SECRET_PRESENT, secretPresence } from "../platform/config";
import { checkLabelDomain, LABEL_DOMAIN_KEY } from "../platform/labels";
import { CATALOG_DIR, CATALOG_FILE, DRAIN_DELAY_SECONDS, KEYS_DIR, KEYS_FILE, OBJECT_NAMES, PORTS, TLS_CERT_FILE } from "./constants";
import { cidr, dnsLabel, dnsSubdomain, labelMap, nonEmpty, pinnedImage, port, quantity } from "../platform/schema-rules";
import { type ExposureSettings, exposureSchema, httpRouteMigration } from "./exposure-config";
import { FIXED_NAMESPACE_LABEL_KEYS } from "./labels";
import { SECRET_PLACEHOLDER } from "../platform/mocks";
import { USAGE_LEDGER_SECRET_KEYS, usageLedgerIssues, usageLedgerSchema, type UsageLedgerSetting, usageLedgerSetting } from "./usage-ledger-config";

export const CONFIG_NAMESPACE = "gateway";

/** Valkey (the BSD-licensed Redis fork, same protocol) for the deployed rate-limit store. */
export const DEFAULT_REDIS_IMAGE = "docker.io/valkey/valkey:8.1-alpine";

/** Keys that may hold secrets: read with `config.getSecret`, never copied into the parsed configuration. */
export const SECRET_KEYS = ["redisUrl", "upstreamApiKey", ...USAGE_LEDGER_SECRET_KEYS] as const;
export const QUALIFIED_SECRET_KEYS: readonly string[] = SECRET_KEYS.map((k) => `${CONFIG_NAMESPACE}:${k}`);

/** Keys that Pulumi passes JSON-encoded (lists and maps). */
const STRUCTURED_KEYS = new Set(["replicas", "maxReplicas", "targetCpuUtilization", "shutdownGraceSeconds", "resources", "env", "apiKeys", "catalog", "aliases", "corsOrigins", "traces", "redisEgress", "ingressNamespaces", "namespaceLabels", "exposure", "httpRoute", "imagePullSecrets", "extraEgress", "usageLedger"]);

/**
 * Variables the component sets itself, with where each value comes from (docs/configuration.md shows it beside each
 * variable); `gateway:env` may set any other gateway setting, and refuses these.
 */
export const STACK_SET_ENV: Readonly<Record<string, string>> = {
  [SETTINGS_ENV.host]: "left at its default",
  [SETTINGS_ENV.port]: `\`${PORTS.http}\``,
  [SETTINGS_ENV.metricsPort]: `\`${PORTS.metrics}\``,
  [SETTINGS_ENV.catalogFile]: `the ConfigMap \`${OBJECT_NAMES.catalog}\`, mounted at \`${CATALOG_DIR}/${CATALOG_FILE}\``,
  [SETTINGS_ENV.keysFile]: `the Secret \`${OBJECT_NAMES.keys}\` (\`gateway:apiKeys\`), mounted at \`${KEYS_DIR}/${KEYS_FILE}\``,
  [SETTINGS_ENV.apiKey]: "never set: keys come from `gateway:apiKeys`",
  [SETTINGS_ENV.redisUrl]: "`gateway:redis` / `gateway:redisUrl`",
  [SETTINGS_ENV.upstreamApiKey]: "the serving part's key, or `gateway:upstreamApiKey`",
  [SETTINGS_ENV.responseIdSecret]: `a random secret kept in the stack's state (the Secret \`${OBJECT_NAMES.responseIds}\`)`,
  [SETTINGS_ENV.shutdownGraceMs]: "`gateway:shutdownGraceSeconds`",
  [SETTINGS_ENV.drainDelayMs]: `\`${DRAIN_DELAY_SECONDS * 1000}\``,
  [SETTINGS_ENV.logLevel]: "`gateway:logLevel`",
  [SETTINGS_ENV.corsOrigins]: "`gateway:corsOrigins`",
  [SETTINGS_ENV.otlpTracesEndpoint]: "`gateway:traces.endpoint`",
  [SETTINGS_ENV.traceSampleRatio]: "`gateway:traces.sampleRatio`",
  [SETTINGS_ENV.tlsCertFile]: `\`gateway:exposure.tls.secretName\` (no issuer): its \`${TLS_CERT_FILE}\``,
  [SETTINGS_ENV.ledgerBucket]: "`gateway:usageLedger.bucket`",
  [SETTINGS_ENV.ledgerEndpoint]: "`gateway:usageLedger.s3Endpoint`",
  [SETTINGS_ENV.ledgerRegion]: "`gateway:usageLedger.region`",
  [SETTINGS_ENV.ledgerPrefix]: "`gateway:usageLedger.prefix`",
  [SETTINGS_ENV.ledgerFlushMs]: "`gateway:usageLedger.flushSeconds`",
  [SETTINGS_ENV.ledgerDir]: "never set: the cluster's ledger is a bucket (`gateway:usageLedger`)",
  // One name per pod: two replicas sharing one would write the same objects.
  [SETTINGS_ENV.replicaName]: "never set: the pod's name (`HOSTNAME`)",
  // A test knob: a cluster's limits are per minute.
  [SETTINGS_ENV.rateLimitWindowMs]: "never set (tests only)",
};
export const MANAGED_ENV: ReadonlySet<string> = new Set(Object.keys(STACK_SET_ENV));
const SETTABLE_ENV = Object.values(SETTINGS_ENV).filter((v) => !MANAGED_ENV.has(v));

const cpuMemory = z.strictObject({ cpu: quantity.optional(), memory: quantity.optional() });
const positiveInt = z.number().int().positive();

/** One declared API key: the key file entry without its hash, plus `rotation` (bump it to issue a new secret). */
export const apiKeySpecSchema = z.strictObject({
  name: ApiKeyEntrySchema.shape.name,
  models: ApiKeyEntrySchema.shape.models,
  expiresAt: ApiKeyEntrySchema.shape.expiresAt,
  rpm: ApiKeyEntrySchema.shape.rpm,
  tpm: ApiKeyEntrySchema.shape.tpm,
  maxConcurrent: ApiKeyEntrySchema.shape.maxConcurrent,
  priority: ApiKeyEntrySchema.shape.priority,
  weight: ApiKeyEntrySchema.shape.weight,
  budget: ApiKeyEntrySchema.shape.budget,
  /** Part of the random resource's keepers: any new value replaces the secret part (a rotation). */
  rotation: z.union([z.number().int().nonnegative(), nonEmpty]).optional(),
});
export type ApiKeySpec = z.infer<typeof apiKeySpecSchema>;

export const gatewaySchema = z
  .strictObject({
    image: pinnedImage.meta(doc("The gateway image, by tag (not latest) or digest ([operations.md](operations.md#5-the-gateway-image)).", "registry.example.com/ai-platform/gateway:0.1.0")),
    imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional().meta(doc("Default: Kubernetes' (IfNotPresent for a tag).")),
    imagePullSecrets: z.array(dnsSubdomain).optional().meta(doc("Pull secrets in the gateway namespace.", ["regcred"])),
    namespace: dnsLabel.default("ai-gateway").meta(doc("The gateway's namespace, kept on destroy.")),
    namespaceLabels: labelMap
      .superRefine((labels, ctx) => {
        for (const key of FIXED_NAMESPACE_LABEL_KEYS.filter((k) => k in labels)) ctx.addIssue({ code: "custom", path: [key], message: "is set by the stack or the API server: remove it" });
      })
      .default({})
      .meta(
        doc(
          "More labels of the gateway namespace, e.g. for a shared Gateway's `allowedRoutes` ([exposure.md](exposure.md#a-gateway-another-team-owns)).",
          { "shared-gateway-access": "true" },
        ),
      ),
    servingNamespace: dnsLabel
      .optional()
      .meta(doc("The model servers' (or pool mode's inference gateway's) namespace, which the NetworkPolicy admits; default the serving part's, else app-serving.")),
    replicas: positiveInt.default(2).meta(doc("The HPA's minReplicas.")),
    maxReplicas: positiveInt.default(6).meta(doc("The HPA's maxReplicas.")),
    targetCpuUtilization: z.number().int().min(1).max(100).default(70).meta(doc("Average CPU % the HPA scales at.")),
    resources: z
      .strictObject({
        requests: cpuMemory.optional().meta(doc("Default 250m, 256Mi.", { cpu: "500m" })),
        limits: cpuMemory.optional().meta(doc("Default 2, 512Mi.", { memory: "1Gi" })),
      })
      .optional()
      .meta(doc("The container's `cpu` and `memory`.")),
    shutdownGraceSeconds: z.number().int().min(1).max(3600).default(30).meta(doc("Seconds streams and requests get to finish on shutdown, after the 5 s drain delay.", 300)),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).default("info").meta(doc("The gateway's log level.")),
    env: z
      .partialRecord(z.enum(SETTABLE_ENV as [string, ...string[]], { error: "is not a gateway setting the stack may set (see gateway/src/config/settings.ts)" }), z.string())
      .optional()
      .meta(doc("Other [environment variables](#gateway-environment-variables) of the gateway, not those the stack sets.", { GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: "900000" })),
    apiKeys: z
      .array(apiKeySpecSchema)
      .default([])
      .meta(
        doc(
          "API keys: `name`, `models`, `expiresAt`, `rpm`, `tpm`, `maxConcurrent`, `priority`, `weight` (as in a [keys file](gateway-api.md#authentication)), `budget` ([budgets](gateway-api.md#budgets)), `rotation` (bump it for a new secret). The keys are the secret output `gateway.apiKeys`.",
          [{ name: "team-a", models: ["qwen3-8b"], rpm: 600, tpm: 1000000, maxConcurrent: 32, budget: { tokens: 50000000, period: "month" } }, { name: "batch", priority: "batch", rotation: 1 }],
        ),
      ),
    catalog: z.unknown().optional().meta(doc("Standalone gateway only: the model catalog, without a serving part or `servingStack`.")),
    aliases: z
      .array(AliasSchema)
      .default([])
      .meta(
        doc(
          "Names clients may send instead of a model id: `id`, `models` (by preference), `listed` (default true) ([gateway-api.md](gateway-api.md#aliases-and-fallbacks)).",
          [{ id: "chat", models: ["llama-3.3-70b-instruct", "qwen3-8b"] }],
        ),
      ),
    corsOrigins: z
      .array(CorsOriginSchema)
      .default([])
      .meta(doc("Browser origins allowed (CORS), or `*` ([gateway-api.md](gateway-api.md#browser-clients-cors)).", ["https://chat.example.com"])),
    traces: z
      .strictObject({
        endpoint: OtlpEndpointSchema.meta(doc("A collector's OTLP/HTTP traces endpoint.", "http://otel-collector.observability:4318/v1/traces")),
        sampleRatio: z.number().min(0).max(1).default(1).meta(doc("Share traced when the caller sent no sampling decision.", 0.1)),
        egress: z
          .union([
            z.strictObject({ namespace: dnsLabel, podLabels: labelMap.optional(), port: port.default(4318) }),
            z.strictObject({ cidr, port: port.default(4318) }),
          ], { error: "must be { namespace, podLabels?, port? } or { cidr, port? }" })
          .meta(doc("Where the collector runs, for the NetworkPolicy: `{namespace, podLabels?, port?}` or `{cidr, port?}`.", { namespace: "observability" })),
      })
      .optional()
      .meta(
        doc(
          "OpenTelemetry traces ([monitoring.md](monitoring.md#traces)); off when absent.",
        ),
      ),
    servingStack: z
      .string()
      .regex(/^([\w.-]+\/){0,2}[\w.-]+$/, "must be a stack name such as acme/ai-platform/serving-prod")
      .optional()
      .meta(doc("The stack whose `serving` output (catalog, namespace) the gateway reads.", "acme/ai-platform/serving-prod")),
    redis: z
      .enum(["auto", "deploy", "none"])
      .default("auto")
      .meta(
        doc(
          "Per-key limits shared by replicas: `auto` deploys Redis (Valkey) when a key has limits or a budget and several replicas may run, unless `redisUrl` is set; `deploy` always; `none` never (the preview fails if limits would multiply).",
        ),
      ),
    upstreamApiKey: z
      .string()
      .min(1)
      .optional()
      .meta(doc("Standalone gateway only (`catalog`): the key its model servers require.")),
    redisImage: pinnedImage.default(DEFAULT_REDIS_IMAGE).meta(doc("Image of the deployed store (Valkey).")),
    redisUrl: z.string().optional().meta(doc("An external Redis (`redis://` or `rediss://`); needs `redisEgress`.")),
    redisEgress: z
      .union([
        z.strictObject({ namespace: dnsLabel, podLabels: labelMap.optional(), port: port.default(6379) }),
        z.strictObject({ cidr, port: port.default(6379) }),
      ], { error: "must be { namespace, podLabels?, port? } or { cidr, port? }" })
      .optional()
      .meta(doc("Where it runs, for the NetworkPolicy: `{namespace, podLabels?, port?}` or `{cidr, port?}`.", { namespace: "redis" })),
    extraEgress: z
      .array(z.strictObject({ cidr, ports: z.array(port).min(1) }))
      .optional()
      .meta(doc("Upstreams outside the cluster's Services, for the NetworkPolicy (IP literals are admitted already).", [{ cidr: "203.0.113.0/24", ports: [443] }])),
    ingressNamespaces: z
      .array(dnsLabel)
      .min(1, "must list at least one namespace (omit the key to allow all)")
      .optional()
      .meta(doc("Namespaces allowed to call the API; absent: all. `exposure`'s proxy is admitted through `exposure.from`.", ["apps"])),
    exposure: exposureSchema
      .optional()
      .meta(
        doc(
          "The API outside the cluster, with TLS ([exposure.md](exposure.md)).",
          { ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { issuer: { name: "letsencrypt", kind: "ClusterIssuer" } }, requestTimeout: "0s", from: { namespace: "envoy-gateway-system" } },
          { existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" }, hostnames: ["llm.example.com"] },
          { ingress: { className: "nginx", controller: "ingress-nginx" }, hostnames: ["llm.example.com"], tls: { secretName: "llm-example-com-tls" }, from: { namespace: "ingress-nginx" } },
        ),
      ),
    usageLedger: usageLedgerSchema
      .optional()
      .meta(
        doc(
          "The [usage ledger](usage-ledger.md) in an S3 bucket (the log store's store can serve: same `s3Endpoint`, own bucket or prefix); off when absent. Output `gateway.usageLedgerPolicy`: the least privilege for the gateway's credentials ([operations.md](operations.md#the-usage-ledger)).",
          { bucket: "ai-platform-usage", s3Endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", egress: { namespace: "app-shaide" } },
        ),
      ),
    usageLedgerAccessKeyId: secretPresence.optional().meta(doc("The gateway's access key id for the ledger; required with `usageLedger` unless IRSA.")),
    usageLedgerSecretAccessKey: secretPresence.optional().meta(doc("Its secret key, required likewise.")),
    usageLedgerAdminAccessKeyId: secretPresence.optional().meta(doc("The bucket Job's access key id (creates the bucket, sets its lifecycle rule).")),
    usageLedgerAdminSecretAccessKey: secretPresence.optional().meta(doc("Its secret key, with the other.")),
  })
  .superRefine(
    (value, ctx) => {
      // Runs even when other keys already failed, so one message names every offending key.
      const v = value as Partial<Record<string, unknown>>;
      const keys = Array.isArray(v.apiKeys) ? (v.apiKeys as { name?: unknown; rpm?: unknown; tpm?: unknown; maxConcurrent?: unknown; budget?: unknown }[]) : [];
      const seen = new Set<unknown>();
      keys.forEach((k, i) => {
        if (seen.has(k?.name)) ctx.addIssue({ code: "custom", path: ["apiKeys", i, "name"], message: `duplicate key name "${String(k?.name)}"` });
        seen.add(k?.name);
      });
      if (typeof v.replicas === "number" && typeof v.maxReplicas === "number" && v.maxReplicas < v.replicas) {
        ctx.addIssue({ code: "custom", path: ["maxReplicas"], message: `must be at least replicas (${v.replicas})` });
      }
      if (v.upstreamApiKey !== undefined && v.servingStack !== undefined) {
        ctx.addIssue({ code: "custom", path: ["upstreamApiKey"], message: "comes from the serving stack (its upstreamApiKey output) with servingStack: remove it" });
      }
      if (v.redisUrl !== undefined && v.redisEgress === undefined) {
        ctx.addIssue({ code: "custom", path: ["redisEgress"], message: "required with redisUrl (where Redis runs, for the NetworkPolicy)" });
      }
      if (v.redisUrl !== undefined && v.redis === "deploy") {
        ctx.addIssue({ code: "custom", path: ["redis"], message: "deploy and redisUrl exclude each other (deployed Redis, or an external one)" });
      }
      const limited = keys.filter(hasSharedLimits).length;
      const maxReplicas = typeof v.maxReplicas === "number" ? v.maxReplicas : 6;
      if (v.redis === "none" && v.redisUrl === undefined && limited > 0 && maxReplicas > 1) {
        ctx.addIssue({
          code: "custom",
          path: ["redis"],
          message: `none, but ${limited} API key${limited === 1 ? " has" : "s have"} rpm/tpm/maxConcurrent limits or a budget and the gateway runs up to ${maxReplicas} replicas: each replica would enforce them alone (limits × ${maxReplicas}). Set gateway:redis to auto or deploy, or gateway:redisUrl (secret) to an external Redis`,
        });
      }
      if (v.servingStack !== undefined && v.catalog !== undefined) {
        ctx.addIssue({ code: "custom", path: ["servingStack"], message: "servingStack and catalog exclude each other (the catalog comes from the serving stack)" });
      }
      if (typeof v.redisUrl === "string" && v.redisUrl !== SECRET_PLACEHOLDER && !/^rediss?:\/\/\S+$/.test(v.redisUrl)) {
        // The value may carry a password: the message never repeats it.
        ctx.addIssue({ code: "custom", path: ["redisUrl"], message: "must be a redis:// or rediss:// URL" });
      }
      const exposure = v.exposure as Partial<ExposureSettings> | undefined;
      if (exposure && Array.isArray(v.ingressNamespaces) && exposure.from === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["exposure", "from"],
          message:
            "required with gateway:ingressNamespaces: where the pods of the Gateway or Ingress controller that forward the traffic run (e.g. {namespace: envoy-gateway-system}), which the gateway's NetworkPolicy must admit (docs/exposure.md)",
        });
      }
      for (const issue of usageLedgerIssues(v)) ctx.addIssue({ code: "custom", path: [...issue.path], message: issue.message });
      if (typeof v.namespace === "string" && v.namespace === v.servingNamespace) {
        ctx.addIssue({ code: "custom", path: ["namespace"], message: "must differ from servingNamespace (the gateway gets a namespace of its own)" });
      }
    },
    { when: () => true },
  );

export type GatewaySchema = z.infer<typeof gatewaySchema>;

export interface ResourceSettings {
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly limits: { readonly cpu: string; readonly memory: string };
}

/** Sized for a proxy that holds streams open: the bulk is sockets and buffers, not compute. */
export const DEFAULT_RESOURCES: ResourceSettings = {
  requests: { cpu: "250m", memory: "256Mi" },
  limits: { cpu: "2", memory: "512Mi" },
};

export type RedisEgress = NonNullable<GatewaySchema["redisEgress"]>;
export type TracesSetting = NonNullable<GatewaySchema["traces"]>;
export type ExtraEgress = NonNullable<GatewaySchema["extraEgress"]>;

/** Shared limit state: none, an external Redis (URL a secret), or one the stack deploys. */
export type RedisSetting = { readonly mode: "external"; readonly egress: RedisEgress } | { readonly mode: "deployed"; readonly image: string } | undefined;

/** The validated configuration. The Redis URL is not in here: see `loadGatewaySecrets`. */
export interface GatewayConfig {
  readonly labelDomain: string;
  readonly image: string;
  readonly imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  readonly imagePullSecrets: readonly string[];
  readonly namespace: string;
  /** `gateway:namespaceLabels`: set on the gateway namespace beside the stack's own. */
  readonly namespaceLabels: Readonly<Record<string, string>>;
  /** Undefined when not configured: the serving part of the program (or the default) decides. */
  readonly servingNamespace?: string;
  readonly replicas: number;
  readonly maxReplicas: number;
  readonly targetCpuUtilization: number;
  readonly resources: ResourceSettings;
  readonly shutdownGraceSeconds: number;
  readonly logLevel: string;
  readonly env: Readonly<Record<string, string>>;
  readonly apiKeys: readonly ApiKeySpec[];
  /** `gateway:catalog` (validated), for a standalone gateway. */
  readonly catalog?: CatalogInput;
  /** `gateway:aliases`, added to the catalog whatever its source. */
  readonly aliases: readonly CatalogAlias[];
  /** `gateway:corsOrigins`. */
  readonly corsOrigins: readonly string[];
  /** `gateway:traces`: where spans go, and the NetworkPolicy peer that lets them. */
  readonly traces?: TracesSetting;
  /** `gateway:servingStack`: the serving part's stack (StackReference). */
  readonly servingStack?: string;
  readonly redis: RedisSetting;
  /** `gateway:upstreamApiKey` is set (read only as a secret Output: loadGatewaySecrets). */
  readonly hasUpstreamApiKey: boolean;
  readonly extraEgress: ExtraEgress;
  readonly ingressNamespaces?: readonly string[];
  /** `gateway:exposure`: the API outside the cluster, with TLS. */
  readonly exposure?: ExposureSettings;
  /** `gateway:usageLedger`: where the usage ledger goes (its keys are read only as secret Outputs: loadGatewaySecrets). */
  readonly usageLedger?: UsageLedgerSetting;
}

/** `gateway:catalog [models.0.upstream]: …` lines for a catalog that the gateway process would refuse. */
export function catalogProblems(catalog: unknown, key = "catalog"): string[] {
  const parsed = CatalogSchema.safeParse(catalog);
  if (parsed.success) return [];
  return issuesToLines(CONFIG_NAMESPACE, parsed.error.issues.map((i) => ({ ...i, path: [key, ...i.path] })));
}

/**
 * `gateway:env [GATEWAY_BODY_LIMIT_BYTES]: …` lines for values the gateway process would refuse at start (its pods
 * would crash-loop), by the process's own settings schema. Variables the stack may not set are the key schema's to
 * refuse; here they are left out.
 */
export function envProblems(env: unknown): string[] {
  if (typeof env !== "object" || env === null || Array.isArray(env)) return [];
  const settable = Object.fromEntries(Object.entries(env).filter(([name, value]) => SETTABLE_ENV.includes(name) && typeof value === "string"));
  return (parseSettingsEnv(settable).problems ?? []).map((p) => `${CONFIG_NAMESPACE}:env [${p.variable}]: ${p.message}`);
}

/** The catalog with `gateway:aliases` added (after any the catalog itself declares). */
export function withAliases(catalog: CatalogInput, aliases: readonly CatalogAlias[]): CatalogInput {
  return aliases.length === 0 ? catalog : { ...catalog, aliases: [...(catalog.aliases ?? []), ...aliases] };
}

/** `gateway:aliases [0.models.1]: …` lines for aliases the catalog cannot serve. */
export function aliasProblems(catalog: CatalogInput, aliases: readonly CatalogAlias[]): string[] {
  if (aliases.length === 0) return [];
  const own = catalog.aliases?.length ?? 0;
  const parsed = CatalogSchema.safeParse(withAliases(catalog, aliases));
  if (parsed.success) return [];
  // Only the issues of the configured aliases, numbered as in gateway:aliases.
  const issues = parsed.error.issues.filter((i) => i.path[0] === "aliases" && typeof i.path[1] === "number" && i.path[1] >= own);
  return issuesToLines(CONFIG_NAMESPACE, issues.map((i) => ({ ...i, path: ["aliases", (i.path[1] as number) - own, ...i.path.slice(2)] })));
}

/**
 * Validates the raw namespace (strings as in PULUMI_CONFIG, without the `gateway:` prefix) plus the shared
 * `platform:labelDomain` (the collector selects pods by it). Throws one ConfigError naming every offending key.
 */
export function parseGatewayConfig(raw: Readonly<Record<string, string>>, labelDomain?: string): GatewayConfig {
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) input[key] = STRUCTURED_KEYS.has(key) ? decodeStructured(value) : value;
  // Their values never reach the schema (nor its messages): only whether the stack holds them.
  for (const key of USAGE_LEDGER_SECRET_KEYS) if (key in input) input[key] = input[key] === "" ? undefined : SECRET_PRESENT;
  // The key before gateway:exposure: refused with its exact replacement, and kept out of the schema (and the reference).
  const migration = "httpRoute" in input ? httpRouteMigration(input.httpRoute) : undefined;
  delete input.httpRoute;
  const parsed = gatewaySchema.safeParse(input);
  const problems = [...(migration ? [migration] : []), ...(parsed.success ? [] : issuesToLines(CONFIG_NAMESPACE, parsed.error.issues))];
  if (input.catalog !== undefined) problems.push(...catalogProblems(input.catalog));
  problems.push(...envProblems(input.env));
  problems.push(...checkLabelDomain(labelDomain));
  if (!parsed.success || problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, [...new Set(problems)]);

  const c = parsed.data;
  return {
    labelDomain: labelDomain as string,
    image: c.image,
    imagePullPolicy: c.imagePullPolicy,
    imagePullSecrets: c.imagePullSecrets ?? [],
    namespace: c.namespace,
    namespaceLabels: c.namespaceLabels,
    servingNamespace: c.servingNamespace,
    replicas: c.replicas,
    maxReplicas: c.maxReplicas,
    targetCpuUtilization: c.targetCpuUtilization,
    resources: {
      requests: { ...DEFAULT_RESOURCES.requests, ...c.resources?.requests },
      limits: { ...DEFAULT_RESOURCES.limits, ...c.resources?.limits },
    },
    shutdownGraceSeconds: c.shutdownGraceSeconds,
    logLevel: c.logLevel,
    env: (c.env ?? {}) as Record<string, string>,
    apiKeys: c.apiKeys,
    catalog: c.catalog as CatalogInput | undefined,
    aliases: c.aliases,
    corsOrigins: c.corsOrigins,
    traces: c.traces,
    servingStack: c.servingStack,
    redis: redisSetting(c),
    hasUpstreamApiKey: c.upstreamApiKey !== undefined,
    extraEgress: c.extraEgress ?? [],
    ingressNamespaces: c.ingressNamespaces,
    exposure: c.exposure,
    ...(c.usageLedger ? { usageLedger: usageLedgerSetting(c.usageLedger, c) } : {}),
  };
}

/** A key whose limits or budget the replicas must count together. */
function hasSharedLimits(k: { rpm?: unknown; tpm?: unknown; maxConcurrent?: unknown; budget?: unknown } | undefined): boolean {
  return k?.rpm !== undefined || k?.tpm !== undefined || k?.maxConcurrent !== undefined || k?.budget !== undefined;
}

/** Limits and budgets need a shared store when a key has one and there can be more than one replica. */
export function needsSharedLimits(c: Pick<GatewaySchema, "apiKeys" | "maxReplicas">): boolean {
  return c.maxReplicas > 1 && c.apiKeys.some(hasSharedLimits);
}

function redisSetting(c: GatewaySchema): RedisSetting {
  if (c.redisUrl !== undefined && c.redisEgress !== undefined) return { mode: "external", egress: c.redisEgress };
  if (c.redis === "deploy" || (c.redis === "auto" && needsSharedLimits(c))) return { mode: "deployed", image: c.redisImage };
  return undefined;
}

/** Reads and validates the stack's `gateway:` namespace. */
export function loadGatewayConfig(): GatewayConfig {
  return parseGatewayConfig(readNamespace(CONFIG_NAMESPACE), pulumi.runtime.allConfig()[LABEL_DOMAIN_KEY]);
}

/** An access key pair as secret Outputs. */
export interface S3Keys {
  readonly accessKeyId: pulumi.Output<string>;
  readonly secretAccessKey: pulumi.Output<string>;
}

export interface GatewaySecrets {
  /** The Redis URL (it may carry a password). */
  readonly redisUrl?: pulumi.Output<string>;
  readonly upstreamApiKey?: pulumi.Output<string>;
  /** The gateway's keys for the usage ledger, and the bucket Job's admin keys, when the stack holds them. */
  readonly usageLedger?: { readonly gateway?: S3Keys; readonly admin?: S3Keys };
}

/** The stack's gateway secrets as secret Outputs, or undefined. Call after `loadGatewayConfig`. */
export function loadGatewaySecrets(): GatewaySecrets {
  const config = new pulumi.Config(CONFIG_NAMESPACE);
  const pair = (id: string, secret: string): S3Keys | undefined => {
    const accessKeyId = config.getSecret(id);
    const secretAccessKey = config.getSecret(secret);
    return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
  };
  return {
    redisUrl: config.getSecret("redisUrl"),
    upstreamApiKey: config.getSecret("upstreamApiKey"),
    usageLedger: { gateway: pair("usageLedgerAccessKeyId", "usageLedgerSecretAccessKey"), admin: pair("usageLedgerAdminAccessKeyId", "usageLedgerAdminSecretAccessKey") },
  };
}
