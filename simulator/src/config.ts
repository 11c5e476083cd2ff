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
    .meta({ description: "Fixed prefill overhead every request pays before its first token, ms (llm-d sim `--prefill-overhead`)." }),
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
        "Latency multiplier reached when `maxNumSeqs` requests run, interpolated linearly from 1 at one running request (llm-d sim `--time-factor-under-load`); 1 turns it off.",
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
    .meta({ description: "KV cache size in blocks (llm-d sim `--kv-cache-size`); also the denominator of `vllm:kv_cache_usage_perc`." }),
});

export const SimulatorConfigSchema = z
  .strictObject({
    models: z
      .array(z.string().min(1))
      .min(1)
      .default(["sim-model"])
      .meta({ description: "Served model names (vLLM `--served-model-name`), no duplicates; the first is the primary name, used in metric labels and when a request names no model." }),
    kind: z.enum(["generate", "embed"]).default("generate").meta({ description: "`generate` serves chat completions; `embed` serves embeddings (vLLM's pooling runner)." }),
    toolCalling: z.boolean().default(false).meta({ description: "Like vLLM `--enable-auto-tool-choice`: answer requests that carry `tools` with tool calls." }),
    maxNumSeqs: z.number().int().min(1).default(16).meta({ description: "Requests generating at once (vLLM `--max-num-seqs`)." }),
    maxWaitingQueueLength: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({
        description:
          "A fault: at most this many requests wait for a slot, and one more gets 429 (llm-d sim `--max-waiting-queue-length`). Unset, no bound and no 429, as in vLLM.",
      }),
    maxModelLen: z.number().int().min(2).default(8192).meta({ description: "Context window in tokens (vLLM `--max-model-len`)." }),
    embeddingDimensions: z.number().int().min(1).max(16384).default(384).meta({ description: "Length of the embedding vectors of a `kind: embed` model." }),
    responsesStoreSize: z
      .number()
      .int()
      .min(0)
      .default(1000)
      .meta({
        description:
          "Responses kept in memory (LRU) for `GET /v1/responses/{id}` and `previous_response_id`, as vLLM with `VLLM_ENABLE_RESPONSES_API_STORE=1`; 0: none, as vLLM without it.",
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
    host: z.string().min(1).default("127.0.0.1").meta({ description: "Listen address." }),
    port: z.number().int().min(0).max(65535).default(0).meta({ description: "Listen port; 0 lets the OS choose a free one." }),
    podName: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "When set, every response carries `x-inference-pod: <podName>` (llm-d sim does this from `POD_NAME`)." }),
    apiKey: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Like vLLM's `--api-key` (env `VLLM_API_KEY`): `/v1` requests without `Authorization: Bearer <apiKey>` get 401 `{\"error\":\"Unauthorized\"}`; `/health` and `/metrics` stay open." }),
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
  });

export type SimulatorConfig = z.infer<typeof SimulatorConfigSchema>;
export type SimulatorConfigInput = z.input<typeof SimulatorConfigSchema>;
export type LatencyConfig = z.infer<typeof LatencySchema>;
