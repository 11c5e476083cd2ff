import type { IncomingHttpHeaders } from "node:http";

/** Counters a test can read without scraping /metrics. */
export interface SimulatorStats {
  /** Inference requests received (chat, completions, responses, embeddings), whatever their outcome. */
  requestsTotal: number;
  /** Requests answered in full. */
  completedTotal: number;
  /** Requests whose client went away before the answer was complete. */
  cancelledTotal: number;
  /** 429s because the waiting queue was full (only with the `maxWaitingQueueLength` fault). */
  rejectedTotal: number;
  /** Injected failures: X-Return-Error, failureRate, dropped connections, X-Stream-Error-After-Tokens. */
  failedTotal: number;
  running: number;
  waiting: number;
  prefixCacheHitTokens: number;
  prefixCacheQueryTokens: number;
  /** LoRA adapter weights read: successful loads, and loads again of adapters evicted beyond `maxCpuLoras`. */
  loraLoadsTotal: number;
  /** LoRA adapters copied into a GPU slot for a starting request. */
  loraSwapInsTotal: number;
  /** Headers of the most recent inference request (e.g. to assert x-request-id forwarding). */
  lastRequestHeaders: IncomingHttpHeaders;
  /** Parsed JSON body of the most recent inference request (e.g. to assert unknown fields pass through). */
  lastRequestBody: unknown;
}

export type StatCounters = Omit<SimulatorStats, "running" | "waiting">;

export function createCounters(): StatCounters {
  return {
    requestsTotal: 0,
    completedTotal: 0,
    cancelledTotal: 0,
    rejectedTotal: 0,
    failedTotal: 0,
    prefixCacheHitTokens: 0,
    prefixCacheQueryTokens: 0,
    loraLoadsTotal: 0,
    loraSwapInsTotal: 0,
    lastRequestHeaders: {},
    lastRequestBody: undefined,
  };
}
