import { randomBytes } from "node:crypto";

/**
 * A key's budget for one period is one counter: what its requests used or hold reserved (`used`), and the deficit
 * of the one request that may run on less than it asked for (`deficit`). A request takes what it may use before it
 * goes upstream; its real count settles the difference afterwards, as the TPM reservation does (rate-limiter.ts).
 * When less is left than a request asks, it may take the rest, but only while no other request does: its
 * shortfall is held as the deficit until it settles, so refunds of others do not open room for a second one. So
 * `used + deficit` never passes the limit by more than one request's shortfall, and neither does the period's use.
 *
 * Every counter carries a generation, drawn when it is created: a settlement for a counter that was lost and
 * created again (the shared store restarted) is dropped rather than applied to a count it was never part of. A
 * counter that does not exist yet (a new period, or a store that restarted) starts at its baseline: what the usage
 * ledger holds for the key and period (key-budgets.ts), so a restarted store does not forget a month.
 */
export interface TakeResult {
  /** What was taken: 0 when the budget is spent (or a request already runs short). */
  taken: number;
  /** What the request asked beyond what it took (0: it got all it asked). */
  deficit: number;
  /** The counter after the take: used and reserved, plus the deficit. */
  used: number;
  /** The counter's generation (pass it to `add`). */
  generation: string;
}

export interface BudgetCounters {
  /**
   * Takes `want` when that much is left under `limit`; else what is left, if no other request runs short; else
   * nothing. A missing counter is created at `baseline()` (which may throw: nothing is created).
   */
  take(counter: string, limit: number, want: number, expiresAtMs: number, baseline: () => Promise<number>): Promise<TakeResult>;
  /** Adds `delta` (negative: a refund) to the counter of `generation` and clears `deficit`; undefined if that counter is gone. */
  add(counter: string, generation: string, delta: number, deficit: number): Promise<number | undefined>;
}

const generation = () => randomBytes(6).toString("base64url");

/** The counters in process: one replica, or while the shared store is away (limits fail open). */
export class LocalBudgetCounters implements BudgetCounters {
  private readonly counters = new Map<string, { used: number; deficit: number; generation: string; expiresAtMs: number }>();
  /** Baselines being read, so concurrent first requests read the ledger once. */
  private readonly creating = new Map<string, Promise<void>>();

  constructor(private readonly wallNow: () => number = Date.now) {}

  async take(counter: string, limit: number, want: number, expiresAtMs: number, baseline: () => Promise<number>): Promise<TakeResult> {
    if (!this.counters.has(counter)) {
      // A new counter, a new period for some key: the ended periods' counters go now (not on every take).
      this.sweep();
      let pending = this.creating.get(counter);
      if (!pending) {
        pending = baseline()
          .then((used) => void (this.counters.has(counter) || this.counters.set(counter, { used, deficit: 0, generation: generation(), expiresAtMs })))
          .finally(() => this.creating.delete(counter));
        this.creating.set(counter, pending);
      }
      await pending;
    }
    const c = this.counters.get(counter)!;
    const left = limit - c.used - c.deficit;
    const taken = left >= want ? want : left > 0 && c.deficit === 0 ? left : 0;
    const deficit = taken > 0 ? want - taken : 0;
    c.used += taken;
    c.deficit += deficit;
    return { taken, deficit, used: c.used + c.deficit, generation: c.generation };
  }

  async add(counter: string, gen: string, delta: number, deficit: number): Promise<number | undefined> {
    const c = this.counters.get(counter);
    if (!c || c.generation !== gen) return undefined;
    c.used += delta;
    c.deficit -= deficit;
    return c.used + c.deficit;
  }

  /** Counters of periods that ended are dropped: memory stays bounded by keys with a budget. */
  private sweep(): void {
    const now = this.wallNow();
    for (const [k, c] of this.counters) if (c.expiresAtMs <= now) this.counters.delete(k);
  }
}
