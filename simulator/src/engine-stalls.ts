import { setTimeout as delay } from "node:timers/promises";
import { nowMs, sleepUntil } from "./latency";

/**
 * Periods in which the whole engine makes no progress. vLLM's engine core runs a LoRA load (the `add_lora` utility
 * call) in its busy loop between two steps, and copies adapters into GPU slots inside a step: every request on the
 * replica waits meanwhile. Stalls run one after another, as the engine loop runs them.
 */
export class EngineStalls {
  private tail: Promise<void> = Promise.resolve();
  /** Stall time already over, plus the elapsed part of the one under way. */
  private finishedMs = 0;
  private activeSince: number | undefined;

  /** Queues a stall of `ms` after those already queued; resolves when it is over. */
  stall(ms: number): Promise<void> {
    const run = this.tail.then(async () => {
      this.activeSince = nowMs();
      try {
        await delay(ms);
      } finally {
        this.finishedMs += nowMs() - this.activeSince;
        this.activeSince = undefined;
      }
    });
    this.tail = run;
    return run;
  }

  /** Total stalled milliseconds so far (monotonic). */
  elapsedMs(): number {
    return this.finishedMs + (this.activeSince === undefined ? 0 : nowMs() - this.activeSince);
  }

  /**
   * Sleeps until `deadlineMs`, pushed back by every stall that happens meanwhile (a token due during a load comes
   * that much later). Resolves with the deadline it finally met.
   */
  async sleepUntil(deadlineMs: number, signal: AbortSignal): Promise<number> {
    let deadline = deadlineMs;
    let seen = this.elapsedMs();
    for (;;) {
      await sleepUntil(deadline, signal);
      const stalled = this.elapsedMs() - seen;
      if (stalled <= 0 && this.activeSince === undefined) return deadline;
      // During a stall, wait for its end rather than polling.
      if (this.activeSince !== undefined) await abortable(this.tail, signal);
      const now = this.elapsedMs();
      deadline += now - seen;
      seen = now;
    }
  }
}

function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
    );
  });
}
