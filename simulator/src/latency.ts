import { setTimeout as delay } from "node:timers/promises";
import type { LatencyConfig } from "./config";

/**
 * The latency model (llm-d sim's per-token calculator): prefill = overhead + uncached prompt tokens x
 * per-token time, decode = ITL per token, all stretched by a load factor that grows linearly from 1
 * (one running request) to `timeFactorUnderLoad` (maxNumSeqs running).
 */

export function loadFactor(latency: LatencyConfig, running: number, maxNumSeqs: number): number {
  if (maxNumSeqs <= 1 || latency.timeFactorUnderLoad <= 1) return 1;
  const busy = Math.min(Math.max(running - 1, 0), maxNumSeqs - 1);
  return 1 + ((latency.timeFactorUnderLoad - 1) * busy) / (maxNumSeqs - 1);
}

export function prefillMs(latency: LatencyConfig, uncachedTokens: number, factor: number): number {
  return (latency.timeToFirstTokenMs + uncachedTokens * latency.prefillTimePerTokenMs) * factor;
}

export function decodeMs(latency: LatencyConfig, factor: number): number {
  return latency.interTokenLatencyMs * factor;
}

/** Monotonic milliseconds. */
export function nowMs(): number {
  return performance.now();
}

/**
 * Waits until a monotonic deadline (deadlines rather than per-step sleeps keep timer overshoot from
 * accumulating over long generations). Rejects with the signal's reason when aborted.
 */
export async function sleepUntil(deadlineMs: number, signal: AbortSignal): Promise<void> {
  const wait = deadlineMs - nowMs();
  if (wait >= 1) {
    await delay(wait, undefined, { signal });
  } else if (signal.aborted) {
    throw signal.reason;
  }
}
