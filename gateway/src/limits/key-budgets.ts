import { ApiError, errors } from "../api/errors";
import type { ApiKeyRecord } from "../context/api-key-record";
import type { Clock, ClockTimer } from "../context/clock";
import type { Usage } from "../context/limit-ticket";
import type { Releasable } from "../context/releasable";
import { periodOf, type BudgetPeriod } from "../context/periods";
import type { BudgetCounters, TakeResult } from "./budget-counters";
import type { RateLimiter } from "./rate-limiter";
import { SETTLE_GRACE_MS } from "./rate-limiter";

export type BudgetResource = "tokens" | "requests";

/** What a key has used of a budget in the current period, as last read from the counters. */
export interface BudgetEvents {
  used(key: string, resource: BudgetResource, period: BudgetPeriod, periodStart: number, used: number): void;
  refused(key: string, resource: BudgetResource): void;
}

/** Reads what the usage ledger holds for a key in [start, end): the baseline of a counter created anew. */
export type BudgetBaseline = (key: string, resource: BudgetResource, start: number, end: number) => Promise<number>;

/** Counters outlive their period by a day, so a request admitted just before midnight settles into its own. */
const COUNTER_GRACE_MS = 24 * 3_600_000;

interface Taken {
  readonly counter: string;
  /** The start of the period the counter counts. */
  readonly periodStart: number;
  readonly result: TakeResult;
  readonly shared: boolean;
}

/**
 * Token and request budgets per key and UTC day or month, enforced across replicas: admission takes a request
 * (requests budget) and refuses a key whose tokens are spent; once the body is read, the request takes the tokens
 * it may use (its TPM reservation's estimate), or the rest when less is left and no other request runs short; its
 * real count settles the difference (budget-counters.ts). A key ends a period at most one request's shortfall
 * past its budget, as long as reservations bound what requests use (they do when requests set max_tokens).
 *
 * Counters live where the rate limits do (rate-limiter.ts): in Redis while it answers, else in the process (failing
 * open) or nowhere (failing closed: 503). A counter created anew starts from the usage ledger's total for the key
 * and period (`baseline`), which is how budgets survive a store restart and, with one replica, a process restart.
 */
export class KeyBudgets {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly shared: BudgetCounters | undefined,
    private readonly local: BudgetCounters,
    private readonly baseline: BudgetBaseline,
    private readonly wallNow: () => number,
    /** @internal Timers: the grace after which an unsettled hold is given back. */
    readonly clock: Clock,
    private readonly events?: BudgetEvents,
  ) {}

  /** Admission: takes one request of a requests budget, refuses a spent tokens budget. Undefined for keys without. */
  async admit(key: ApiKeyRecord): Promise<BudgetHold | undefined> {
    const budget = key.budget;
    if (!budget) return undefined;
    const hold = new BudgetHold(this, key);
    if (budget.requests) {
      const taken = await this.take(key, "requests", budget.requests, 1);
      if (taken.result.taken === 0) throw this.refusal(key, "requests", budget.requests);
      hold.request = taken;
    }
    if (budget.tokens) {
      const seen = await this.take(key, "tokens", budget.tokens, 0);
      if (seen.result.used >= budget.tokens) {
        await hold.refund();
        throw this.refusal(key, "tokens", budget.tokens);
      }
    }
    return hold;
  }

  /** @internal Takes up to `want` of the key's `resource` budget in the current period. */
  async take(key: ApiKeyRecord, resource: BudgetResource, limit: number, want: number): Promise<Taken> {
    const period = key.budget!.period;
    const { start, end, label } = periodOf(period, this.wallNow());
    const counter = `${key.name}:${resource}:${label}`;
    const baseline = () =>
      this.baseline(key.name, resource, start, end).catch((err: Error) => {
        // An ApiError passes the limiter's store-failure handling untouched: the ledger failed, not Redis.
        throw errors.budgetUnavailable(key.name, err.message);
      });
    const { out, onShared } = await this.limiter.route(
      key.name,
      this.shared && (() => this.shared!.take(counter, limit, want, end + COUNTER_GRACE_MS, baseline)),
      () => this.local.take(counter, limit, want, end + COUNTER_GRACE_MS, baseline),
    );
    this.events?.used(key.name, resource, period, start, out.used);
    return { counter, periodStart: start, result: out, shared: onShared };
  }

  /** @internal Gives back or charges `delta` on the counter `taken` came from, and clears its deficit; never throws. */
  async add(key: ApiKeyRecord, resource: BudgetResource, taken: Taken, delta: number): Promise<void> {
    if (delta === 0 && taken.result.deficit === 0) return;
    const counters = taken.shared ? this.shared! : this.local;
    try {
      const used = await counters.add(taken.counter, taken.result.generation, delta, taken.result.deficit);
      // The period the counter counts: a request settled after midnight settles into the day it was admitted in.
      if (used !== undefined) this.events?.used(key.name, resource, key.budget!.period, taken.periodStart, used);
    } catch (err) {
      // The shared store failed: limits go on as failureMode says; this settlement is lost (bounded by one request).
      if (taken.shared) this.limiter.storeFailed(err as Error);
    }
  }

  /** @internal */
  refusal(key: ApiKeyRecord, resource: BudgetResource, limit: number): ApiError {
    this.events?.refused(key.name, resource);
    const period = key.budget!.period;
    const now = this.wallNow();
    const { end, label } = periodOf(period, now);
    return errors.budgetExceeded(key.name, resource, limit, period, label, new Date(end), (end - now) / 1000);
  }
}

/**
 * What one request holds of its key's budgets: the request it took, the tokens it took. Settled with the usage when
 * it is known; given back whole if the response closed and nothing settled it within SETTLE_GRACE_MS (a request
 * refused before it reached a model server uses nothing).
 */
export class BudgetHold implements Releasable {
  /** @internal */
  request: Taken | undefined;
  private tokens: Taken | undefined;
  private settled = false;
  private ended = false;
  private timer: ClockTimer | undefined;

  constructor(
    private readonly budgets: KeyBudgets,
    private readonly key: ApiKeyRecord,
  ) {}

  /** The tokens taken for the request so far (0 before reserveTokens, or after a refund). */
  get takenTokens(): number {
    return this.tokens?.result.taken ?? 0;
  }

  /** Takes the tokens the request may use, at most what is left; throws the 429 envelope when nothing is. */
  async reserveTokens(want: number): Promise<void> {
    const limit = this.key.budget?.tokens;
    if (!limit || this.ended || this.tokens) return;
    const taken = await this.budgets.take(this.key, "tokens", limit, Math.max(1, Math.ceil(want)));
    if (taken.result.taken === 0) throw this.budgets.refusal(this.key, "tokens", limit);
    this.tokens = taken;
    if (this.ended && !this.settled) await this.refund();
  }

  /**
   * The request's usage (a model server answered): charges the difference from what it took. Without usage, a
   * response that began keeps what it took (what it used is unknown); any other gives the tokens back. The request
   * stays counted: it reached a model, as the ledger counts it.
   */
  async settle(usage: Usage | undefined, began: boolean): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    this.budgets.clock.cancel(this.timer);
    const t = this.tokens;
    if (!t) return;
    const used = usage ? (usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)) : began ? t.result.taken : 0;
    await this.budgets.add(this.key, "tokens", t, used - t.result.taken);
  }

  /** @internal Gives everything back (a request refused after it took, or never settled). */
  async refund(): Promise<void> {
    this.settled = true;
    const { request, tokens } = this;
    this.request = this.tokens = undefined;
    await Promise.all([request && this.budgets.add(this.key, "requests", request, -1), tokens && this.budgets.add(this.key, "tokens", tokens, -tokens.result.taken)]);
  }

  /** The response closed: an unsettled hold goes back after a grace (the handler may still be settling a cut stream). */
  release(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.settled) this.timer = this.budgets.clock.after(SETTLE_GRACE_MS, () => void this.refund());
  }
}
