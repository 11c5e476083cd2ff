import { z } from "zod";

/**
 * Configuration of one simulated vLLM instance. One schema for every entry point
 * (tests, the local fleet, the CLI), so defaults live in exactly one place. Each field's `.meta()` description is
 * what docs/simulator.md shows for it (`npm run docs:simulator` writes that table; a test keeps it current).
 */

export const LatencySchema = z.strictObject({
  timeToFirstTokenMs: z
    .number()
    .nonnegative()
    .default(15)
    .meta({ description: "Fixed prefill overhead every request pays before its first token, ms." }),
  interTokenLatencyMs: z.number().nonnegative().default(5).meta({ description: "Decode time of each token after the first, ms (vLLM's inter-token latency)." }),
  prefillTimePerTokenMs: z
    .number()
    .nonnegative()
    .default(0.05)
    .meta({ description: "Prefill time per prompt token that is not already in the prefix cache, ms." }),
  timeFactorUnderLoad: z
    .number()
    .min(1)
    .default(1)
    .meta({
      description:
        "Latency multiplier at `maxNumSeqs` running, linear from 1 at one; 1: off.",
    }),
});

export const PrefixCacheSchema = z.strictObject({
  enabled: z.boolean().default(true).meta({ description: "Automatic prefix caching, on by default as in vLLM v1." }),
  blockSize: z.number().int().min(1).max(1024).default(16).meta({ description: "Tokens per KV block; only full blocks are cached, as in vLLM." }),
  capacityBlocks: z
    .number()
    .int()
    .min(1)
    .default(1024)
    .meta({ description: "KV cache size in blocks: the denominator of `vllm:kv_cache_usage_perc`." }),
});

/** vLLM's `--max-lora-rank` choices (vllm/config/lora.py `MaxLoRARanks`). */
export const MAX_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512] as const;

export const LoraModuleSchema = z.strictObject({
  name: z.string().min(1),
  path: z.string().min(1),
  baseModelName: z.string().min(1).optional(),
});

export const LoraSchema = z.strictObject({
  enabled: z.boolean().default(false).meta({ description: "Serve LoRA adapters." }),
  modules: z
    .array(LoraModuleSchema)
    .default([])
    .meta({
      description: "Adapters loaded at start (vLLM `--lora-modules`): `name`, `path`, optional `baseModelName` (their `parent`, if served).",
    }),
  maxLoras: z
    .number()
    .int()
    .min(1)
    .default(1)
    .meta({ description: "Distinct adapters running at once." }),
  maxCpuLoras: z
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: "Adapters kept loaded; unset: `maxLoras`." }),
  maxLoraRank: z.literal(MAX_LORA_RANKS).default(16).meta({ description: "vLLM `--max-lora-rank`; no effect." }),
  runtimeUpdating: z
    .boolean()
    .default(false)
    .meta({ description: "The load and unload routes (vLLM's `VLLM_ALLOW_RUNTIME_LORA_UPDATING=1`)." }),
  loadTimeMs: z
    .number()
    .nonnegative()
    .default(300)
    .meta({ description: "Loading an adapter, ms; the engine stalls meanwhile." }),
  swapInTimeMs: z
    .number()
    .nonnegative()
    .default(5)
    .meta({ description: "Copying an adapter into a GPU slot, ms; the engine stalls meanwhile." }),
  missingPathPattern: z
    .string()
    .min(1)
    .refine(isRegExp, "not a valid regular expression")
    .optional()
    .meta({ description: "A fault: loads of paths matching this regular expression fail (404)." }),
});

function isRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

export const SimulatorConfigSchema = z
  .strictObject({
    models: z
      .array(z.string().min(1))
      .min(1)
      .default(["sim-model"])
      .meta({ description: "Served model names; the first is the primary name (metric labels, requests naming none)." }),
    kind: z.enum(["generate", "embed"]).default("generate").meta({ description: "`generate` serves chat completions; `embed` serves embeddings (vLLM's pooling runner)." }),
    toolCalling: z.boolean().default(false).meta({ description: "Answer requests that carry `tools` with tool calls." }),
    maxNumSeqs: z.number().int().min(1).default(16).meta({ description: "Requests generating at once." }),
    maxWaitingQueueLength: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({
        description:
          "A fault: one more than this many waiting gets 429; unset, no bound, as vLLM.",
      }),
    maxModelLen: z.number().int().min(2).default(8192).meta({ description: "Context window in tokens." }),
    embeddingDimensions: z.number().int().min(1).max(16384).default(384).meta({ description: "Length of the embedding vectors of a `kind: embed` model." }),
    responsesStoreSize: z
      .number()
      .int()
      .min(0)
      .default(1000)
      .meta({
        description:
          "Responses kept (LRU) for `GET /v1/responses/{id}` and `previous_response_id`, as vLLM with `VLLM_ENABLE_RESPONSES_API_STORE=1`; 0: none.",
      }),
    latency: LatencySchema.prefault({}).meta({ description: "How long answers take: the `latency.*` fields." }),
    startupDelayMs: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .meta({ description: "`/health` and inference answer 503 until this many ms after start, like a model still loading." }),
    failureRate: z.number().min(0).max(1).default(0).meta({ description: "Fraction of valid inference requests that fail with `failureStatus`." }),
    failureStatus: z.number().int().min(400).max(599).default(500).meta({ description: "HTTP status of the failures `failureRate` injects." }),
    dropStreamAfterTokens: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .meta({ description: "Cut the connection of every chat request after this many tokens; unset, never." }),
    prefixCache: PrefixCacheSchema.prefault({}).meta({ description: "The prefix cache: the `prefixCache.*` fields." }),
    lora: LoraSchema.prefault({}).meta({ description: "LoRA adapters: the `lora.*` fields." }),
    host: z.string().min(1).default("127.0.0.1").meta({ description: "Listen address." }),
    port: z.number().int().min(0).max(65535).default(0).meta({ description: "Listen port; 0 lets the OS choose a free one." }),
    podName: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Every response carries `x-inference-pod: <podName>` (llm-d sim, from `POD_NAME`)." }),
    apiKey: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "vLLM's `--api-key`: `/v1` requests without `Authorization: Bearer <apiKey>` get 401 `{\"error\":\"Unauthorized\"}`." }),
    maxRequestBodyBytes: z
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024)
      .meta({ description: "Largest JSON request body, bytes (4 MiB, llm-d sim's default); a larger one gets 413." }),
  })
  .superRefine((c, ctx) => {
    if (new Set(c.models).size !== c.models.length) {
      ctx.addIssue({ code: "custom", path: ["models"], message: "duplicate served model name" });
    }
    const { lora } = c;
    if (lora.modules.length > 0 && !lora.enabled) {
      ctx.addIssue({ code: "custom", path: ["lora", "modules"], message: "LoRA is not enabled. Use --enable-lora to enable LoRA." });
    }
    if (new Set(lora.modules.map((m) => m.name)).size !== lora.modules.length) {
      ctx.addIssue({ code: "custom", path: ["lora", "modules"], message: "duplicate adapter name" });
    }
    if (lora.maxCpuLoras !== undefined && lora.maxCpuLoras < lora.maxLoras) {
      ctx.addIssue({ code: "custom", path: ["lora", "maxCpuLoras"], message: `max_cpu_loras (${lora.maxCpuLoras}) must be >= max_loras (${lora.maxLoras}).` });
    }
  });

export type SimulatorConfig = z.infer<typeof SimulatorConfigSchema>;
export type SimulatorConfigInput = z.input<typeof SimulatorConfigSchema>;
export type LatencyConfig = z.infer<typeof LatencySchema>;
export type LoraConfig = z.infer<typeof LoraSchema>;
export type LoraModule = z.infer<typeof LoraModuleSchema>;
