import { z } from "zod";

/**
 * Configuration of one simulated vLLM instance. One schema for every entry point
 * (tests, the local fleet, the CLI), so defaults live in exactly one place.
 */

export const LatencySchema = z.strictObject({
  /** Fixed prefill overhead paid by every request before its first token (llm-d sim `--prefill-overhead`). */
  timeToFirstTokenMs: z.number().nonnegative().default(15),
  /** Decode time per generated token after the first (vLLM ITL). */
  interTokenLatencyMs: z.number().nonnegative().default(5),
  /** Prefill time per prompt token that is NOT already in the prefix cache. */
  prefillTimePerTokenMs: z.number().nonnegative().default(0.05),
  /**
   * Latency multiplier reached when running == maxNumSeqs (>= 1; 1 disables it).
   * Interpolated linearly from 1 at one running request, like llm-d sim `--time-factor-under-load`.
   */
  timeFactorUnderLoad: z.number().min(1).default(1),
});

export const PrefixCacheSchema = z.strictObject({
  /** vLLM v1 enables automatic prefix caching by default. */
  enabled: z.boolean().default(true),
  /** Tokens per KV block; only full blocks are cached, as in vLLM. */
  blockSize: z.number().int().min(1).max(1024).default(16),
  /** KV cache size in blocks (llm-d sim `--kv-cache-size`); also the denominator of `vllm:kv_cache_usage_perc`. */
  capacityBlocks: z.number().int().min(1).default(1024),
});

export const SimulatorConfigSchema = z
  .strictObject({
    /** Served model names (vLLM `--served-model-name`); the first is the primary name used in metrics labels. */
    models: z.array(z.string().min(1)).min(1).default(["sim-model"]),
    /** `generate` serves chat completions; `embed` serves embeddings (vLLM's pooling runner). */
    kind: z.enum(["generate", "embed"]).default("generate"),
    /** Like vLLM `--enable-auto-tool-choice`: answer requests carrying `tools` with tool calls. */
    toolCalling: z.boolean().default(false),
    /** Max sequences generating at once (vLLM `--max-num-seqs`). */
    maxNumSeqs: z.number().int().min(1).default(16),
    /** Max requests waiting for a slot; beyond it requests get 429. */
    maxWaitingQueueLength: z.number().int().min(0).default(64),
    /** Context window (vLLM `--max-model-len`). */
    maxModelLen: z.number().int().min(2).default(8192),
    /** Length of embedding vectors for `kind: "embed"`. */
    embeddingDimensions: z.number().int().min(1).max(16384).default(384),
    latency: LatencySchema.prefault({}),
    /** `/health` answers 503 (and inference 503) until this many ms after start. */
    startupDelayMs: z.number().int().nonnegative().default(0),
    /** Fraction of inference requests that fail with `failureStatus` (0..1). */
    failureRate: z.number().min(0).max(1).default(0),
    failureStatus: z.number().int().min(400).max(599).default(500),
    /** Destroy the socket after this many streamed content chunks (every request); unset = never. */
    dropStreamAfterTokens: z.number().int().nonnegative().optional(),
    prefixCache: PrefixCacheSchema.prefault({}),
    host: z.string().min(1).default("127.0.0.1"),
    /** 0 = ephemeral port chosen by the OS. */
    port: z.number().int().min(0).max(65535).default(0),
    /** When set, every response carries `x-inference-pod: <podName>` (llm-d sim does this from POD_NAME). */
    podName: z.string().min(1).optional(),
    /** Max JSON request body, bytes (llm-d sim default 4 MB); larger bodies get 413. */
    maxRequestBodyBytes: z.number().int().min(1024).default(4 * 1024 * 1024),
  })
  .superRefine((c, ctx) => {
    if (new Set(c.models).size !== c.models.length) {
      ctx.addIssue({ code: "custom", path: ["models"], message: "duplicate served model name" });
    }
  });

export type SimulatorConfig = z.infer<typeof SimulatorConfigSchema>;
export type SimulatorConfigInput = z.input<typeof SimulatorConfigSchema>;
export type LatencyConfig = z.infer<typeof LatencySchema>;
