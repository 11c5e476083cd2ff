import type { SimulatorConfig } from "./config";
import type { EngineStalls } from "./engine-stalls";
import { decodeMs, loadFactor, nowMs, prefillMs } from "./latency";
import type { Adapter, LoraAdapters } from "./lora";
import type { SimulatorMetrics } from "./metrics";
import type { PrefixCache } from "./prefix-cache";
import { QueueFullError, type Scheduler, type Slot } from "./scheduler";
import type { StatCounters } from "./stats";

/**
 * The simulated engine: takes a slot from the scheduler, makes a LoRA adapter usable, pays prefill time for the
 * uncached part of the prompt, then produces tokens one at a time with real timers (pushed back by engine stalls),
 * updating metrics as vLLM does.
 */

export interface GenerationJob {
  /** Prompt tokens: their count drives prefill time; their content drives the prefix cache. */
  promptTokens: readonly string[];
  /** Tokens to produce (0 for embeddings). */
  outputTokens: number;
  useCache: boolean;
  /** The LoRA adapter the request names, if any. */
  adapter?: Adapter;
  signal: AbortSignal;
  /** Monotonic ms when the request arrived (for queue time and TTFT). */
  arrivalMs: number;
  /** Called as each token is produced; may throw to stop generation (e.g. a dropped stream). */
  onToken?: (index: number) => void;
}

export interface GenerationResult {
  cachedTokens: number;
}

export class InferenceEngine {
  constructor(
    private readonly config: SimulatorConfig,
    private readonly scheduler: Scheduler,
    private readonly prefixCache: PrefixCache | null,
    private readonly metrics: SimulatorMetrics,
    private readonly counters: StatCounters,
    private readonly stalls: EngineStalls,
    private readonly adapters: LoraAdapters,
  ) {}

  /**
   * Reserves a place in the batch or queue. With the bounded-queue fault, throws QueueFullError synchronously so
   * the caller can still send a 429 before it has committed to a 200 streaming response.
   */
  admit(signal: AbortSignal, adapter?: Adapter): Promise<Slot> {
    try {
      return this.scheduler.admit(signal, adapter?.id);
    } catch (err) {
      if (err instanceof QueueFullError) this.counters.rejectedTotal++;
      throw err;
    }
  }

  async run(admission: Promise<Slot>, job: GenerationJob): Promise<GenerationResult> {
    const slot = await admission;
    let generating = false;
    try {
      const { latency, maxNumSeqs } = this.config;
      const startedMs = nowMs();
      this.metrics.observeQueueTime((startedMs - job.arrivalMs) / 1000);
      slot.tokens = job.promptTokens.length;
      if (job.adapter) await this.adapters.prepare(job.adapter);

      let cachedTokens = 0;
      let cachedReadyAt = 0;
      let blockHashes: number[] = [];
      if (job.useCache && this.prefixCache) {
        // vLLM salts block hashes with the adapter's name: adapters never share KV blocks.
        blockHashes = this.prefixCache.blockHashes(job.promptTokens, job.adapter?.name);
        slot.sharedBlocks = blockHashes;
        ({ tokens: cachedTokens, readyAtMs: cachedReadyAt } = this.prefixCache.match(blockHashes, job.promptTokens.length));
        this.metrics.prefixCacheLookup(job.promptTokens.length, cachedTokens);
        this.counters.prefixCacheQueryTokens += job.promptTokens.length;
        this.counters.prefixCacheHitTokens += cachedTokens;
      }
      this.metrics.promptProcessed(job.promptTokens.length);

      // A prefix another request is still computing is reused once that is done: this prefill starts then.
      const uncached = job.promptTokens.length - cachedTokens;
      const planned = Math.max(nowMs(), cachedReadyAt) + prefillMs(latency, uncached, loadFactor(latency, this.scheduler.running, maxNumSeqs));
      // Reusable by requests that arrive during this prefill, from when it is planned to be done (a stall delays both).
      this.prefixCache?.insert(blockHashes, planned);
      let deadline: number;
      try {
        deadline = await this.stalls.sleepUntil(planned, job.signal);
      } catch (err) {
        this.prefixCache?.forget(blockHashes, planned);
        throw err;
      }

      let lastTokenMs = nowMs();
      for (let i = 0; i < job.outputTokens; i++) {
        if (i > 0) deadline = await this.stalls.sleepUntil(deadline + decodeMs(latency, loadFactor(latency, this.scheduler.running, maxNumSeqs)), job.signal);
        const tokenMs = nowMs();
        if (i === 0) {
          this.metrics.observeTimeToFirstToken((tokenMs - job.arrivalMs) / 1000);
          generating = true;
          this.metrics.requestGenerating(job.adapter?.name);
        } else this.metrics.observeInterTokenLatency((tokenMs - lastTokenMs) / 1000);
        lastTokenMs = tokenMs;
        slot.tokens++;
        this.metrics.tokenGenerated();
        job.onToken?.(i);
      }
      return { cachedTokens };
    } finally {
      slot.release();
      if (generating) this.metrics.requestEnded(job.adapter?.name);
    }
  }
}
