/**
 * Admission control like vLLM's scheduler: at most `maxRunning` sequences generate at once and the rest wait FIFO.
 * vLLM's waiting queue has no bound (vllm/v1/core/sched/request_queue.py is a plain deque) and its API server has
 * no 429, so by default nothing is refused. A bound (`maxWaiting`, llm-d sim `--max-waiting-queue-length`) is a
 * fault to inject: a request that finds the queue full is rejected at once.
 */

export class QueueFullError extends Error {
  constructor(readonly maxWaiting: number) {
    super(`Too many requests: the waiting queue is full (max ${maxWaiting} waiting requests).`);
    this.name = "QueueFullError";
  }
}

/** A running sequence's slot; `tokens` is its KV-cache footprint while it runs. */
export interface Slot {
  tokens: number;
  /**
   * Hashes of the prompt's full blocks when prefix caching is on: sequences sharing a prefix reference the
   * same physical blocks, so vLLM counts each shared block once.
   */
  sharedBlocks?: readonly number[];
  release(): void;
}

interface Waiter {
  grant(slot: Slot): void;
}

export class Scheduler {
  private runningSlots = new Set<Slot>();
  private waiters: Waiter[] = [];

  constructor(
    private readonly maxRunning: number,
    /** undefined: unbounded, as in vLLM. */
    private readonly maxWaiting: number | undefined,
    private readonly blockSize: number,
  ) {}

  get running(): number {
    return this.runningSlots.size;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** KV blocks held by running sequences (each sequence rounds up to whole blocks, as paged attention does). */
  get blocksInUse(): number {
    const shared = new Set<number>();
    let privateBlocks = 0;
    for (const slot of this.runningSlots) {
      const sharedCount = slot.sharedBlocks?.length ?? 0;
      for (const h of slot.sharedBlocks ?? []) shared.add(h);
      privateBlocks += Math.ceil(Math.max(0, slot.tokens - sharedCount * this.blockSize) / this.blockSize);
    }
    return shared.size + privateBlocks;
  }

  /**
   * Reserves a place, resolving once a slot is free; rejects on abort. With a bounded queue, throws QueueFullError
   * synchronously (so callers can still answer 429 before committing to a streaming response).
   */
  admit(signal: AbortSignal): Promise<Slot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.runningSlots.size < this.maxRunning && this.waiters.length === 0) {
      return Promise.resolve(this.createSlot());
    }
    if (this.maxWaiting !== undefined && this.waiters.length >= this.maxWaiting) throw new QueueFullError(this.maxWaiting);
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (slot) => {
          signal.removeEventListener("abort", onAbort);
          resolve(slot);
        },
      };
      const onAbort = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private createSlot(): Slot {
    let released = false;
    const slot: Slot = {
      tokens: 0,
      release: () => {
        if (released) return;
        released = true;
        this.runningSlots.delete(slot);
        this.grantNext();
      },
    };
    this.runningSlots.add(slot);
    return slot;
  }

  private grantNext(): void {
    while (this.runningSlots.size < this.maxRunning) {
      const next = this.waiters.shift();
      if (!next) return;
      next.grant(this.createSlot());
    }
  }
}
