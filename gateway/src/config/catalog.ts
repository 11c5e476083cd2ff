import { z } from "zod";

/**
 * The model catalog: which models the gateway serves and where their replicas are.
 * This is the one schema for the gateway's catalog file; the serving stack generates files in this shape.
 */

/** How often a dns-mode model's name (and a pool's readiness name) is resolved again, ms; model servers' preStop delay counts on it. */
export const DEFAULT_DNS_REFRESH_MS = 5000;

/** Model ids travel in URLs (`/v1/models/{id}`) and logs, so keep them to a safe, bounded alphabet. */
export const ModelIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/, "model id: 1-128 chars of letters, digits, . _ : / @ -");

export const ReplicaSchema = z.strictObject({
  /** Base URL of one model-server replica, without `/v1` (e.g. `http://10.0.3.7:8000`). */
  url: z.url({ protocol: /^https?$/ }),
  /** Per-replica concurrency cap; defaults to the model's `maxConcurrency`. */
  maxConcurrency: z.number().int().positive().optional(),
});

const HostnameSchema = z
  .string()
  .regex(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, "a DNS name");

export const UpstreamSchema = z.discriminatedUnion("mode", [
  z.strictObject({
    /** The gateway balances across a static list of replicas. */
    mode: z.literal("endpoints"),
    endpoints: z.array(ReplicaSchema).min(1),
  }),
  z.strictObject({
    /**
     * The gateway balances across the addresses of a headless Service, re-resolved periodically
     * (Kubernetes publishes only ready pods there).
     */
    mode: z.literal("dns"),
    host: HostnameSchema,
    port: z.number().int().min(1).max(65535),
    scheme: z.enum(["http", "https"]).default("http"),
    refreshIntervalMs: z.number().int().min(100).default(DEFAULT_DNS_REFRESH_MS),
  }),
  z.strictObject({
    /**
     * One address for the whole model: an InferencePool behind the cluster's inference gateway, whose
     * endpoint picker chooses the pod. The gateway passes the picker's 429/503 on as envelopes.
     */
    mode: z.literal("pool"),
    url: z.url({ protocol: /^https?$/ }),
    /** Optional cap on requests in flight to the pool from one gateway replica. */
    maxConcurrency: z.number().int().positive().optional(),
    /**
     * A name that resolves to the pool's ready pods (the model's headless Service): the model is listed, and
     * requests are sent, only while it has an address. Without it the pool is taken as always ready.
     */
    readiness: z
      .strictObject({
        host: HostnameSchema,
        port: z.number().int().min(1).max(65535),
        refreshIntervalMs: z.number().int().min(100).default(DEFAULT_DNS_REFRESH_MS),
      })
      .optional(),
  }),
]);

export const RoutingSchema = z.strictObject({
  /** How a replica is chosen in endpoints and dns modes. */
  strategy: z.enum(["least-loaded", "round-robin", "prefix-affinity"]).default("least-loaded"),
  /** A replica is saturated when the model server reports more waiting requests than this. */
  maxWaitingRequests: z.number().int().nonnegative().default(8),
  /** A replica is saturated above this KV-cache usage (0..1) reported by the model server. */
  maxKvCacheUsage: z.number().min(0).max(1).default(0.95),
  /**
   * prefix-affinity: prompts are placed by their first this-many 128-character blocks (prompts sharing them share a
   * replica); shorter prompts are routed least-loaded. Set it above a system prompt every request shares, so that
   * conversations and documents after it are placed apart.
   */
  minPrefixBlocks: z.number().int().min(1).default(4),
  /**
   * prefix-affinity: how many requests busier than the least-loaded replica a prefix's home may be and still get a
   * request for a prefix the gateway pod has seen before, as a fraction of the replica's concurrency cap (see
   * upstream/balancer.ts); a prefix it has not seen goes to the least-loaded replicas.
   */
  affinityLoadTolerance: z.number().min(0).max(1).default(0.5),
  /**
   * Models with LoRA adapters: a request for an adapter prefers a replica holding it (loaded or loading) while that
   * replica is at most ⌈affinityLoadTolerance × cap⌉ requests busier than the least loaded; `false` ignores where
   * adapters are (the strategy alone picks, and the adapter is loaded wherever the request lands).
   */
  adapterAffinity: z.boolean().default(true),
  /** All replicas saturated: wait up to this long for a slot before answering 429. */
  queueTimeoutMs: z.number().int().nonnegative().default(2000),
  /** Requests allowed to wait for a slot at once; more get 429 straight away. */
  maxQueueLength: z.number().int().nonnegative().default(64),
});

/**
 * The model may be at zero replicas and wakes on demand (an autoscaler starts a replica when the gateway reports held
 * requests): while it has no ready replica, requests are held instead of answered 503 at once.
 */
export const WakeSchema = z
  .strictObject({
    timeoutMs: z
      .number()
      .int()
      .positive()
      .default(600_000)
      .meta({ description: "How long a request may be held waiting for the model's first ready replica before it gets 503 `model_not_ready`, ms." }),
    maxHeld: z
      .number()
      .int()
      .positive()
      .default(64)
      .meta({ description: "Requests held at once (per gateway replica); one more gets 429 `model_saturated` straight away." }),
  })
  .meta({ description: "The model may be at zero replicas and wakes on demand: with no ready replica, requests are held (up to `maxHeld`, for `timeoutMs`) instead of refused." });

export const ModelCategorySchema = z.enum(["generative", "embedder"]);

/** How a LoRA adapter gets onto a replica: at its start, or at run time when first asked for. */
export const AdapterLoadingSchema = z.enum(["preload", "on-demand"]);

export const LoraAdapterSchema = z.strictObject({
  id: ModelIdSchema.meta({ description: "The model id clients send for the adapter (the model server's LoRA name); unique in the catalog, never a model id or an alias." }),
  path: z
    .string()
    .regex(/^\/\S*$/, "an absolute path inside the model server's pod")
    .meta({ description: "Where the model server loads the adapter from inside its pod (vLLM's `lora_path`)." }),
  loading: AdapterLoadingSchema.meta({
    description: "`preload`: every replica loads it at start (vLLM `--lora-modules`); `on-demand`: it is loaded at run time (`/v1/load_lora_adapter`) when first asked for.",
  }),
});

export const CatalogLoraSchema = z
  .strictObject({
    maxLoras: z
      .number()
      .int()
      .min(1)
      .meta({ description: "Adapters one batch of a replica holds (vLLM `--max-loras`); at least the preloaded ones, and more with any on demand." }),
    adapters: z.array(LoraAdapterSchema).min(1, "a lora block names at least one adapter").meta({ description: "The adapters served on this model." }),
  })
  .meta({ description: "LoRA adapters served on this model's replicas, each under its own model id." });

export const CatalogModelSchema = z.strictObject({
  /** The `model` clients send; set at deploy time, may differ from the weights' public name. */
  id: ModelIdSchema,
  category: ModelCategorySchema,
  ownedBy: z.string().min(1).max(128).default("ai-platform"),
  /** The name the model server serves (vLLM `--served-model-name`); defaults to `id`. */
  upstreamModel: z.string().min(1).optional(),
  /** Default per-replica concurrency cap (vLLM `--max-num-seqs` is the natural value). */
  maxConcurrency: z.number().int().positive().default(16),
  /** Unix seconds reported as `created` in `/v1/models`; defaults to the catalog load time. */
  created: z.number().int().nonnegative().optional(),
  upstream: UpstreamSchema,
  routing: RoutingSchema.prefault({}),
  wake: WakeSchema.optional(),
  lora: CatalogLoraSchema.optional(),
});

/**
 * A name clients may send instead of a model id: it stands for one or more served models of one category, in order
 * of preference; a request goes to the first with a ready replica (a fallback when the preferred model is down,
 * scaled to zero or being swapped), or with none ready, is held for the first that wakes on demand.
 */
export const AliasSchema = z.strictObject({
  id: ModelIdSchema,
  models: z.array(ModelIdSchema).min(1, "an alias names at least one model"),
  /** Whether `/v1/models` lists it (while one of its models is ready). */
  listed: z.boolean().default(true),
});

export const CatalogSchema = z
  .strictObject({
    models: z.array(CatalogModelSchema),
    aliases: z.array(AliasSchema).default([]),
  })
  .superRefine(
    (catalog, ctx) => {
      aliasProblems(catalog as Pick<Catalog, "models" | "aliases">, (path, message) => ctx.addIssue({ code: "custom", path, message }));
      adapterProblems(catalog as Pick<Catalog, "models">, (path, message) => ctx.addIssue({ code: "custom", path, message }));
      const seen = new Set<string>();
      (catalog.models ?? []).forEach((m, i) => {
        // An endpoint picker parses chat and completions bodies only: embeddings must not go through one.
        if (m?.category === "embedder" && m.upstream?.mode === "pool") {
          ctx.addIssue({ code: "custom", path: ["models", i, "upstream", "mode"], message: "an embedder is reached in dns or endpoints mode: an InferencePool's endpoint picker does not parse embeddings requests" });
        }
        // Without a readiness name a pool always counts as ready: nothing would ever be held.
        if (m?.wake && m.upstream?.mode === "pool" && !m.upstream.readiness) {
          ctx.addIssue({ code: "custom", path: ["models", i, "wake"], message: "a pool model wakes only with `upstream.readiness`: without it the pool always counts as ready" });
        }
        if (typeof m?.id !== "string") return;
        if (seen.has(m.id)) {
          ctx.addIssue({ code: "custom", path: ["models", i, "id"], message: `duplicate model id "${m.id}"` });
        }
        seen.add(m.id);
      });
    },
    // Run even when other fields are invalid, so one message names every problem.
    { when: (payload) => Array.isArray((payload.value as { models?: unknown })?.models) },
  );

type Issue = (path: (string | number)[], message: string) => void;

/** Each adapter id with the model it is served on (inputs may be partly invalid: what is not an array is skipped). */
function adapterOwners(models: unknown): Map<string, string> {
  const owners = new Map<string, string>();
  for (const m of Array.isArray(models) ? (models as Partial<CatalogModel>[]) : []) {
    const adapters = m?.lora?.adapters;
    if (!Array.isArray(adapters)) continue;
    for (const a of adapters) if (typeof a?.id === "string" && !owners.has(a.id)) owners.set(a.id, String(m.id));
  }
  return owners;
}

/**
 * An adapter's id is a name clients send, like a model's: unique in the catalog and never a model id; and a replica
 * holds at least its preloaded adapters in one batch, with a slot more for on-demand ones.
 */
function adapterProblems(catalog: Partial<Pick<Catalog, "models">>, issue: Issue): void {
  const models = Array.isArray(catalog.models) ? catalog.models : [];
  const ids = new Set(models.map((m) => m?.id).filter((id) => typeof id === "string"));
  const seen = new Map<string, string>();
  models.forEach((m, i) => {
    const lora = m?.lora;
    if (!lora || !Array.isArray(lora.adapters)) return;
    lora.adapters.forEach((a, j) => {
      if (typeof a?.id !== "string") return;
      const path = ["models", i, "lora", "adapters", j, "id"];
      if (ids.has(a.id)) issue(path, `"${a.id}" is a model id; an adapter needs a name of its own`);
      else if (seen.has(a.id)) issue(path, `duplicate adapter id "${a.id}" (also an adapter of "${seen.get(a.id)}")`);
      else seen.set(a.id, String(m.id));
    });
    const preloaded = lora.adapters.filter((a) => a?.loading === "preload").length;
    if (typeof lora.maxLoras === "number" && preloaded > lora.maxLoras) {
      issue(["models", i, "lora", "maxLoras"], `${lora.maxLoras} is below the ${preloaded} preloaded adapters: a batch must hold every one of them`);
    }
    // Preloaded adapters are never unloaded: with every slot theirs, an on-demand one waits out the queue and gets 429.
    const onDemand = lora.adapters.filter((a) => a?.loading === "on-demand").length;
    if (typeof lora.maxLoras === "number" && onDemand > 0 && preloaded >= lora.maxLoras) {
      const [them, they] = onDemand === 1 ? ["the 1 on-demand adapter", "it"] : [`the ${onDemand} on-demand adapters`, "them"];
      const holders = preloaded === 1 ? "the 1 preloaded adapter holds every slot of a replica and is" : `the ${preloaded} preloaded adapters hold every slot of a replica and are`;
      issue(
        ["models", i, "lora", "maxLoras"],
        `${lora.maxLoras} leaves no slot for ${them}: ${holders} never unloaded, so requests for ${they} would wait and get 429 (raise maxLoras to at least ${preloaded + 1}, or preload ${they} with maxLoras ${preloaded + onDemand})`,
      );
    }
  });
}

/**
 * Aliases refer to models or adapters of the catalog, all of one category, and never shadow a model id, an adapter or another
 * alias: a name means one thing. (Inputs may be partly invalid here: the other fields' issues are reported beside these.)
 */
function aliasProblems(catalog: Partial<Pick<Catalog, "models" | "aliases">>, issue: Issue): void {
  const models = (Array.isArray(catalog.models) ? catalog.models : []).filter((m) => typeof m?.id === "string");
  const categories = new Map(models.map((m) => [m.id, m.category]));
  const adapters = adapterOwners(catalog.models);
  // An adapter is a target like a model, of its base model's category.
  const targets = new Map([...categories, ...[...adapters].map(([adapter, base]) => [adapter, categories.get(base)] as const)]);
  const names = new Set<string>();
  (Array.isArray(catalog.aliases) ? catalog.aliases : []).forEach((alias, i) => {
    if (typeof alias?.id !== "string" || !Array.isArray(alias.models)) return;
    if (categories.has(alias.id)) issue(["aliases", i, "id"], `"${alias.id}" is a model id; an alias needs a name of its own`);
    else if (adapters.has(alias.id)) issue(["aliases", i, "id"], `"${alias.id}" is a LoRA adapter of "${adapters.get(alias.id)}"; an alias needs a name of its own`);
    else if (names.has(alias.id)) issue(["aliases", i, "id"], `duplicate alias "${alias.id}"`);
    names.add(alias.id);
    const seen = new Set<string>();
    alias.models.forEach((target, j) => {
      if (!targets.has(target)) issue(["aliases", i, "models", j], `"${target}" is not a model or adapter of the catalog${names.has(target) ? " (aliases cannot name aliases)" : ""}`);
      else if (seen.has(target)) issue(["aliases", i, "models", j], `"${target}" is listed twice`);
      seen.add(target);
    });
    const kinds = new Set(alias.models.map((t) => targets.get(t)).filter(Boolean));
    if (kinds.size > 1) issue(["aliases", i, "models"], `mixes ${[...kinds].join(" and ")} models; an alias stands for models that answer the same endpoints`);
  });
}

export type Catalog = z.infer<typeof CatalogSchema>;
export type CatalogAlias = z.infer<typeof AliasSchema>;
export type CatalogInput = z.input<typeof CatalogSchema>;
export type CatalogModel = z.infer<typeof CatalogModelSchema>;
export type ModelCategory = z.infer<typeof ModelCategorySchema>;
export type Upstream = z.infer<typeof UpstreamSchema>;
export type Routing = z.infer<typeof RoutingSchema>;
export type Wake = z.infer<typeof WakeSchema>;
export type CatalogLora = z.infer<typeof CatalogLoraSchema>;
