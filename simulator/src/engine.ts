import type { SimulatorConfig } from "./config";
import { decodeMs, loadFactor, nowMs, prefillMs, sleepUntil } from "./latency";
import type { SimulatorMetrics } from "./metrics";
import type { PrefixCache } from "./prefix-cache";
import { QueueFullError, type Scheduler, type Slot } from "./scheduler";
import type { StatCounters } from "./stats";

/**
 * The simulated engine: takes a slot from the scheduler, pays prefill time for the uncached part of the
 * prompt, then produces tokens one at a time with real timers, updating metrics as vLLM does.
 */

export interface GenerationJob {
  /** Prompt tokens: their count drives prefill time; their content drives the prefix cache. */
  promptTokens: readonly string[];
  /** Tokens to produce (0 for embeddings). */
  outputTokens: number;
  useCache: boolean;
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
  ) {}

  /**
   * Reserves a place in the batch or queue. With the bounded-queue fault, throws QueueFullError synchronously so
   * the caller can still send a 429 before it has committed to a 200 streaming response.
   */
  admit(signal: AbortSignal): Promise<Slot> {
    try {
      return this.scheduler.admit(signal);
    } catch (err) {
      if (err instanceof QueueFullError) this.counters.rejectedTotal++;
      throw err;
    }
  }

  async run(admission: Promise<Slot>, job: GenerationJob): Promise<GenerationResult> {
    const slot = await admission;
    try {
      const { latency, maxNumSeqs } = this.config;
      const startedMs = nowMs();
      this.metrics.observeQueueTime((startedMs - job.arrivalMs) / 1000);
      slot.tokens = job.promptTokens.length;

      let cachedTokens = 0;
      let cachedReadyAt = 0;
      let blockHashes: number[] = [];
      if (job.useCache && this.prefixCache) {
        blockHashes = this.prefixCache.blockHashes(job.promptTokens);
        slot.sharedBlocks = blockHashes;
        ({ tokens: cachedTokens, readyAtMs: cachedReadyAt } = this.prefixCache.match(blockHashes, job.promptTokens.length));
        this.metrics.prefixCacheLookup(job.promptTokens.length, cachedTokens);
        this.counters.prefixCacheQueryTokens += job.promptTokens.length;
        this.counters.prefixCacheHitTokens += cachedTokens;
      }
      this.metrics.promptProcessed(job.promptTokens.length);

      // A prefix another request is still computing is reused once that is done: this prefill starts then.
      const uncached = job.promptTokens.length - cachedTokens;
      let deadline = Math.max(startedMs, cachedReadyAt) + prefillMs(latency, uncached, loadFactor(latency, this.scheduler.running, maxNumSeqs));
      // Reusable by requests that arrive during this prefill, from when it is done.
      this.prefixCache?.insert(blockHashes, deadline);
      try {
        await sleepUntil(deadline, job.signal);
      } catch (err) {
        this.prefixCache?.forget(blockHashes, deadline);
        throw err;
      }

      let lastTokenMs = nowMs();
      for (let i = 0; i < job.outputTokens; i++) {
        if (i > 0) {
          deadline += decodeMs(latency, loadFactor(latency, this.scheduler.running, maxNumSeqs));
          await sleepUntil(deadline, job.signal);
        }
        const tokenMs = nowMs();
        if (i === 0) this.metrics.observeTimeToFirstToken((tokenMs - job.arrivalMs) / 1000);
        else this.metrics.observeInterTokenLatency((tokenMs - lastTokenMs) / 1000);
        lastTokenMs = tokenMs;
        slot.tokens++;
        this.metrics.tokenGenerated();
        job.onToken?.(i);
      }
      return { cachedTokens };
    } finally {
      slot.release();
    }
  }
}
