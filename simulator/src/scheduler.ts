/**
 * Admission control like vLLM's scheduler: at most `maxRunning` sequences generate at once and the rest wait FIFO.
 * vLLM's waiting queue has no bound (vllm/v1/core/sched/request_queue.py is a plain deque) and its API server has
 * no 429, so by default nothing is refused. A bound (`maxWaiting`, llm-d sim `--max-waiting-queue-length`) is a
 * fault to inject: a request that finds the queue full is rejected at once.
 *
 * With LoRA, at most `maxLoras` distinct adapters run at once (vllm/v1/core/sched/scheduler.py): a waiting request
 * for one more adapter is skipped, keeping its place, and the requests behind it may start.
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
  /** The LoRA adapter's id (vLLM's `lora_int_id`), if the request names one. */
  readonly adapterId: number | undefined;
  /**
   * Hashes of the prompt's full blocks when prefix caching is on: sequences sharing a prefix reference the
   * same physical blocks, so vLLM counts each shared block once.
   */
  sharedBlocks?: readonly number[];
  release(): void;
}

interface Waiter {
  adapterId: number | undefined;
  grant(slot: Slot): void;
}

export class Scheduler {
  private runningSlots = new Set<Slot>();
  private waiters: Waiter[] = [];
  /** Running requests per adapter id. */
  private readonly runningAdapters = new Map<number, number>();

  constructor(
    private readonly maxRunning: number,
    /** undefined: unbounded, as in vLLM. */
    private readonly maxWaiting: number | undefined,
    private readonly blockSize: number,
    /** vLLM `--max-loras`: distinct adapters among running sequences. */
    private readonly maxLoras = Infinity,
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
  admit(signal: AbortSignal, adapterId?: number): Promise<Slot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    // Waiters are granted whenever a slot frees, so those still waiting with a slot free are all held back by
    // maxLoras: a request that fits starts at once, as vLLM schedules it past them.
    if (this.runningSlots.size < this.maxRunning && this.fits(adapterId)) {
      return Promise.resolve(this.createSlot(adapterId));
    }
    if (this.maxWaiting !== undefined && this.waiters.length >= this.maxWaiting) throw new QueueFullError(this.maxWaiting);
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        adapterId,
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

  /** Whether a request for this adapter (none: the base model) keeps the running adapters within maxLoras. */
  private fits(adapterId: number | undefined): boolean {
    return adapterId === undefined || this.runningAdapters.has(adapterId) || this.runningAdapters.size < this.maxLoras;
  }

  private createSlot(adapterId: number | undefined): Slot {
    let released = false;
    const slot: Slot = {
      tokens: 0,
      adapterId,
      release: () => {
        if (released) return;
        released = true;
        this.runningSlots.delete(slot);
        if (adapterId !== undefined) {
          const left = (this.runningAdapters.get(adapterId) ?? 1) - 1;
          if (left > 0) this.runningAdapters.set(adapterId, left);
          else this.runningAdapters.delete(adapterId);
        }
        this.grantNext();
      },
    };
    this.runningSlots.add(slot);
    if (adapterId !== undefined) this.runningAdapters.set(adapterId, (this.runningAdapters.get(adapterId) ?? 0) + 1);
    return slot;
  }

  /** Grants waiters in queue order, skipping those whose adapter would exceed maxLoras (they keep their place). */
  private grantNext(): void {
    for (let i = 0; i < this.waiters.length && this.runningSlots.size < this.maxRunning; ) {
      const next = this.waiters[i] as Waiter;
      if (!this.fits(next.adapterId)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      next.grant(this.createSlot(next.adapterId));
    }
  }
}
