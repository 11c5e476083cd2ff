import type { Wake } from "../config/catalog";
import type { HeldOutcome, WakeSink } from "../observability/metrics";
import type { PickContext } from "./balancer";
import type { Replica } from "./replica";

/** What one request is told about its hold: it started (a stream starts its keep-alives), and how long it lasted. */
export interface HoldHooks {
  started?(): void;
  ended?(heldMs: number): void;
}

interface Held {
  ctx: PickContext;
  exclude?: ReadonlySet<Replica>;
  hooks?: HoldHooks;
  since: number;
  timer: NodeJS.Timeout;
  settle(end: Replica | Exclude<HeldOutcome, "released">): void;
}

/**
 * The requests of a model that wakes on demand, held while it has no ready replica: a bounded FIFO (`maxHeld`), each
 * for at most `timeoutMs`. The model pool owns it and releases it from its drain(), in order and only as fast as
 * replicas have room, so a replica that just woke is never sent more than it can take.
 */
export class WakeQueue {
  private readonly held: Held[] = [];
  /** When the first request was held while the model had no ready replica (the current wake), else undefined. */
  private wakeSince: number | undefined;
  private listener: WakeSink | undefined;
  private closed = false;

  constructor(
    private readonly wake: Wake,
    /** Whether the model has a ready replica now: a deadline met then is load (429), not a failed wake (503). */
    private readonly modelReady: () => boolean,
  ) {}

  /** Where outcomes and wake times go (the metrics). */
  listen(listener: WakeSink): void {
    this.listener = listener;
  }

  get length(): number {
    return this.held.length;
  }

  /**
   * Holds a request: resolves with the replica release() picks for it, or `timed_out` (no replica by the deadline),
   * `saturated` (the queue full, or a replica up but full by the deadline), `abandoned` (the signal) or `shutdown`.
   * The model has no ready replica when this is called.
   */
  hold(ctx: PickContext, exclude: ReadonlySet<Replica> | undefined, signal: AbortSignal | undefined, hooks?: HoldHooks): Promise<Replica | HeldOutcome> {
    if (this.closed) {
      this.listener?.outcome("shutdown");
      return Promise.resolve("shutdown");
    }
    if (this.held.length >= this.wake.maxHeld || signal?.aborted) {
      this.listener?.outcome(signal?.aborted ? "abandoned" : "saturated");
      return Promise.resolve(signal?.aborted ? "abandoned" : "saturated");
    }
    const now = performance.now();
    this.wakeSince ??= now;
    return new Promise((resolve) => {
      const onAbort = () => leave("abandoned");
      const leave = (end: "timed_out" | "abandoned") => {
        const i = this.held.indexOf(entry);
        if (i >= 0) this.held.splice(i, 1);
        const ready = this.modelReady();
        // Everyone who waited has left with no replica up: the next request held starts a new wake.
        if (this.held.length === 0 && !ready) this.wakeSince = undefined;
        entry.settle(end === "timed_out" && ready ? "saturated" : end);
      };
      const entry: Held = {
        ctx,
        exclude,
        hooks,
        since: now,
        timer: setTimeout(() => leave("timed_out"), this.wake.timeoutMs),
        settle: (end) => {
          clearTimeout(entry.timer);
          signal?.removeEventListener("abort", onAbort);
          this.listener?.outcome(typeof end === "string" ? end : "released");
          hooks?.ended?.(performance.now() - entry.since);
          resolve(end);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.held.push(entry);
      hooks?.started?.();
    });
  }

  /** Gives held requests, oldest first, the replicas `pick` finds; stops at the first it cannot place. */
  release(pick: (ctx: PickContext, exclude?: ReadonlySet<Replica>) => Replica | undefined): void {
    while (this.held.length > 0) {
      const head = this.held[0]!;
      const replica = pick(head.ctx, head.exclude);
      if (!replica) return;
      this.held.shift();
      head.settle(replica);
    }
  }

  /**
   * The gateway is shutting down: what is held ends now (a 503 its client retries on another gateway replica)
   * rather than being cut when the shutdown grace ends, and nothing more is held.
   */
  close(): void {
    this.closed = true;
    this.wakeSince = undefined;
    for (const entry of this.held.splice(0)) entry.settle("shutdown");
  }

  /** Whether a wake is under way (a request was held and no replica has been ready since). */
  get waking(): boolean {
    return this.wakeSince !== undefined;
  }

  /** The model has a ready replica: the wake under way, if any, is over. */
  ready(): void {
    if (this.wakeSince === undefined) return;
    const seconds = (performance.now() - this.wakeSince) / 1000;
    this.wakeSince = undefined;
    this.listener?.woke(seconds);
  }
}
