import type { Routing, Wake } from "../../config/catalog";
import type { Clock, ClockTimer } from "../../context/clock";
import type { HeldOutcome, QueueRefusal, QueueSink, WakeSink } from "../../observability/metrics";
import type { Exclusion } from "../routing/filters";
import type { PickContext } from "../routing/scorers";
import { band, type Tenant } from "./tenant";

/** What one request is told about its hold: it started (a stream starts its keep-alives), and how long it lasted. */
export interface HoldHooks {
  started?(): void;
  ended?(heldMs: number): void;
}

/** Whether a request can go now, must wait for room (`busy`), or has no ready replica it may use (`none`). */
export type Fit = "now" | "busy" | "none";

/** What the scheduler asks of its model's replicas (model-pool.ts). */
export interface Placer<Slot> {
  /** Some replica is ready. */
  readonly isReady: boolean;
  /** Some ready replica is below its cap and reports no full queue: without one, no request can go. */
  hasRoom(): boolean;
  fit(ctx: PickContext, exclude?: Exclusion): Fit;
  /** The slot of a request of key `name` that fits now; once given back, it calls the scheduler's vacate(name). */
  place(ctx: PickContext, exclude: Exclusion | undefined, name: string): Slot;
  /** The earliest moment a replica that is full by its scraped load (only) stops counting as full, if any is. */
  nextLoadExpiry(): number | undefined;
}

/** One request asking for a slot of the model. */
export interface WaitRequest {
  tenant: Tenant;
  ctx: PickContext;
  /** Replicas it may not use (tried already). */
  exclude?: Exclusion;
  /** Aborted when its client leaves. */
  signal?: AbortSignal;
  /** Present when it may be held while the model wakes (a first attempt that may go to any replica). */
  hold?: HoldHooks;
  /** Called once it is about to wait: false refuses it (no memory for its body while it waits). */
  park?(): boolean;
}

export type Refusal = "saturated" | "not_ready" | "abandoned";
export type Placed<Slot> = { ok: true; slot: Slot } | { ok: false; reason: Refusal };

interface Waiter<Slot> {
  readonly seq: number;
  readonly req: WaitRequest;
  readonly line: Line<Slot>;
  /**
   * It arrived while the model had no ready replica (a wake): counted against `wake.maxHeld` and waits up to
   * `wake.timeoutMs`, also once the model is up but full.
   */
  readonly held: boolean;
  /** It may wait out a time with no ready replica (it was allowed to hold). */
  readonly holdable: boolean;
  readonly since: number;
  readonly settle: (result: Placed<Slot>) => void;
  timer?: ClockTimer;
  onAbort?: () => void;
  done: boolean;
}

/** Waiters of one key in one priority band, oldest first. */
interface Line<Slot> {
  readonly key: string;
  readonly band: number;
  readonly name: string;
  weight: number;
  readonly waiters: Waiter<Slot>[];
}

const SATURATED = { ok: false, reason: "saturated" } as const;
const NOT_READY = { ok: false, reason: "not_ready" } as const;
const ABANDONED = { ok: false, reason: "abandoned" } as const;

/**
 * Every wait of one model in one place: requests waiting for room while its replicas are busy (the queue:
 * `routing.maxQueueLength`, `routing.queueTimeoutMs`) and requests held while it has no ready replica (a model that
 * wakes on demand: `wake.maxHeld`, `wake.timeoutMs`). docs/architecture.md, "The scheduler".
 *
 * - **Eligibility:** a request goes as soon as a replica can take it (for an adapter: a replica with room for that
 *   adapter); one that cannot be placed never holds back one that can.
 * - **Order:** interactive before batch; within a band, the key holding the least of the model's slots for its
 *   weight first (weighted max-min fairness of slots), then the one waiting longest; within a key, oldest first.
 * - **Bounds:** a full queue (or hold) makes room by refusing the newest waiter of the key waiting with the most for
 *   its weight in the lowest band below the arrival's; or, in the arrival's band, of the key waiting with the most,
 *   if that is more than the arrival's key would have; else the arrival is refused.
 * - **Leaving:** each waiter leaves exactly once: placed, past its deadline (429, or 503 for a wake that did not
 *   come), pushed out (429), its client gone, or the gateway shutting down (503, held requests only).
 * - **Events, no polling:** the pool calls drain() on every change of a slot, an adapter, a replica or its load
 *   (readinessChanged() first when a replica's readiness or the replica set changed); the only timers are each
 *   waiter's deadline and the moment a replica's scraped load stops counting.
 */
export class ModelScheduler<Slot> {
  private readonly lines = new Map<string, Line<Slot>>();
  /** Slots of the model held now, per key name (placed requests not yet given back). */
  private readonly occupancy = new Map<string, number>();
  private queued = 0;
  private holding = 0;
  private seq = 0;
  private draining = false;
  private again = false;
  /** pause() calls not yet resumed: drains asked for meanwhile run once, at the last resume(). */
  private paused = 0;
  /** A replica's readiness (or the set) changed: waiters may have no replica left to wait for. */
  private stranding = false;
  private recheck: ClockTimer | undefined;
  private recheckAt = NaN;
  /** When the first request was held while the model had no ready replica (the wake under way), else undefined. */
  private wakeSince: number | undefined;
  private sink: WakeSink | undefined;
  private queueSink: QueueSink | undefined;
  private closed = false;

  constructor(
    private readonly placer: Placer<Slot>,
    private readonly routing: Pick<Routing, "queueTimeoutMs" | "maxQueueLength">,
    private readonly wake: Wake | undefined,
    private readonly clock: Clock,
  ) {}

  /** Where held requests' outcomes and wake times go (the metrics). */
  listen(sink: WakeSink): void {
    this.sink = sink;
  }

  /** Where dispatches and refusals of waiting requests go (the metrics). */
  watch(sink: QueueSink): void {
    this.queueSink = sink;
  }

  /** Requests waiting for room now. */
  get queueLength(): number {
    return this.queued;
  }

  /** Requests held now for the model to wake. */
  get heldLength(): number {
    return this.holding;
  }

  /** Slots of the model `name`'s requests hold now. */
  slotsOf(name: string): number {
    return this.occupancy.get(name) ?? 0;
  }

  /** Every waiting request, for the simulation's invariants and the scaler. */
  *waiting(): IterableIterator<{ readonly tenant: Tenant; readonly ctx: PickContext; readonly exclude?: Exclusion; readonly held: boolean; readonly since: number }> {
    for (const line of this.lines.values()) for (const w of line.waiters) yield { tenant: w.req.tenant, ctx: w.req.ctx, exclude: w.req.exclude, held: w.held, since: w.since };
  }

  /** A slot now, or a wait for one: resolves exactly once, with the slot or why not. */
  acquire(req: WaitRequest): Promise<Placed<Slot>> {
    if (req.signal?.aborted) return Promise.resolve(ABANDONED);
    // Those waiting go first if they can (a replica's scraped load may have gone stale a moment ago, its timer late).
    if (this.lines.size > 0) this.drain();
    const fit = this.placer.fit(req.ctx, req.exclude);
    if (fit === "now") return Promise.resolve({ ok: true, slot: this.placeFor(req) });
    const holdable = req.hold !== undefined && this.wake !== undefined;
    const held = fit === "none";
    if (held && (!holdable || this.closed)) {
      if (holdable) this.sink?.outcome("shutdown");
      return Promise.resolve(NOT_READY);
    }
    const limit = held ? this.wake!.maxHeld : this.routing.queueTimeoutMs > 0 ? this.routing.maxQueueLength : 0;
    const full = (held ? this.holding : this.queued) >= limit;
    const victim = full ? this.displaceable(held, req.tenant) : undefined;
    if (full && !victim) return this.refused(req.tenant, held, "queue_full");
    if (req.park && !req.park()) return this.refused(req.tenant, held, "no_memory");
    if (victim) {
      this.queueSink?.refused(victim.req.tenant, "displaced", victim.held);
      this.leave(victim, SATURATED, "saturated");
    }
    return new Promise<Placed<Slot>>((resolve) => this.enqueue(req, held, holdable, resolve));
  }

  /** Serves waiting requests while replicas have room for them, in service order. */
  drain(): void {
    if (this.draining || this.paused > 0) {
      this.again = true;
      return;
    }
    this.draining = true;
    try {
      do {
        this.again = false;
        this.dispatch();
      } while (this.again);
    } finally {
      this.draining = false;
    }
    this.armRecheck();
  }

  /** Holds drains back while a change of several steps is made (a slot given back); resume() runs them once. */
  pause(): void {
    this.paused += 1;
  }

  resume(): void {
    this.paused -= 1;
    if (this.paused === 0) this.drain();
  }

  /** A replica's readiness or the replica set changed: the next drain sends away waiters left with no replica. */
  readinessChanged(): void {
    this.stranding = true;
  }

  /**
   * The gateway is shutting down: what is held ends now (a 503 its client retries on another gateway replica)
   * rather than being cut when the shutdown grace ends, and nothing more is held. Queued requests stay: slots free
   * up within the grace.
   */
  close(): void {
    this.closed = true;
    this.wakeSince = undefined;
    for (const line of [...this.lines.values()]) for (const w of [...line.waiters]) if (w.held) this.leave(w, NOT_READY, "shutdown");
  }

  private enqueue(req: WaitRequest, held: boolean, holdable: boolean, resolve: (r: Placed<Slot>) => void): void {
    const now = this.clock.now();
    const b = band(req.tenant);
    const key = `${b}:${req.tenant.name}`;
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = { key, band: b, name: req.tenant.name, weight: req.tenant.weight, waiters: [] }));
    line.weight = req.tenant.weight;
    const w: Waiter<Slot> = { seq: ++this.seq, req, line, held, holdable, since: now, settle: resolve, done: false };
    line.waiters.push(w);
    if (held) {
      this.holding += 1;
      this.wakeSince ??= now;
    } else this.queued += 1;
    const timeout = held ? this.wake!.timeoutMs : this.routing.queueTimeoutMs;
    w.timer = this.clock.after(timeout, () => {
      w.timer = undefined;
      // Past its deadline with a replica it may use up but full, it is refused as load (429); with none, the model
      // is not ready for it (503: a wake that failed, a pinned replica gone).
      const up = this.placer.fit(req.ctx, req.exclude) !== "none";
      this.queueSink?.refused(req.tenant, "timeout", held);
      this.leave(w, up ? SATURATED : NOT_READY, up ? "saturated" : "timed_out");
    });
    if (req.signal) {
      w.onAbort = () => this.leave(w, ABANDONED, "abandoned");
      req.signal.addEventListener("abort", w.onAbort, { once: true });
    }
    if (held) req.hold?.started?.();
    this.armRecheck();
  }

  private refused(tenant: Tenant, held: boolean, reason: QueueRefusal): Promise<Placed<Slot>> {
    this.queueSink?.refused(tenant, reason, held);
    if (held) this.sink?.outcome("saturated");
    return Promise.resolve(SATURATED);
  }

  /** The only exit of a waiter: at most once, whatever calls it. */
  private leave(w: Waiter<Slot>, result: Placed<Slot>, heldOutcome: HeldOutcome): void {
    if (w.done) return;
    w.done = true;
    const line = w.line;
    line.waiters.splice(line.waiters.indexOf(w), 1);
    if (line.waiters.length === 0) this.lines.delete(line.key);
    this.clock.cancel(w.timer);
    if (w.onAbort) w.req.signal!.removeEventListener("abort", w.onAbort);
    if (w.held) {
      this.holding -= 1;
      // Everyone held has left with no replica up: the next request held starts a new wake.
      if (this.holding === 0 && !this.placer.isReady) this.wakeSince = undefined;
      this.sink?.outcome(heldOutcome);
      w.req.hold?.ended?.(this.clock.now() - w.since);
    } else this.queued -= 1;
    w.settle(result);
  }

  private dispatch(): void {
    if (this.wakeSince !== undefined && this.placer.isReady) {
      this.sink?.woke((this.clock.now() - this.wakeSince) / 1000);
      this.wakeSince = undefined;
    }
    if (this.lines.size === 0) {
      this.stranding = false;
      return;
    }
    if (this.stranding) {
      // Requests with no replica left they may use, and that may not be held, leave now (503), not at their deadline.
      this.stranding = false;
      for (const w of this.all()) if (!w.holdable && this.placer.fit(w.req.ctx, w.req.exclude) === "none") this.strand(w);
    }
    while (this.lines.size > 0 && this.placer.hasRoom()) {
      const next = this.next();
      if (!next) return;
      this.queueSink?.dispatched(next.req.tenant, this.clock.now() - next.since, next.held);
      this.leave(next, { ok: true, slot: this.placeFor(next.req) }, "released");
    }
  }

  /** The first waiter in service order that a replica can take now; waiters that have no replica left leave on the way. */
  private next(): Waiter<Slot> | undefined {
    const order = [...this.lines.values()].sort((a, b) => a.band - b.band || this.share(a) - this.share(b) || a.waiters[0]!.seq - b.waiters[0]!.seq);
    const stranded: Waiter<Slot>[] = [];
    let found: Waiter<Slot> | undefined;
    search: for (const line of order) {
      for (const w of line.waiters) {
        const fit = this.placer.fit(w.req.ctx, w.req.exclude);
        if (fit === "now") {
          found = w;
          break search;
        }
        if (fit === "none" && !w.holdable) stranded.push(w);
      }
    }
    for (const w of stranded) this.strand(w);
    return found;
  }

  /** No replica is left that it may use, and it may not be held: 503 now rather than at its deadline. */
  private strand(w: Waiter<Slot>): void {
    this.queueSink?.refused(w.req.tenant, "no_replica", w.held);
    this.leave(w, NOT_READY, "timed_out");
  }

  private share(line: Line<Slot>): number {
    return this.slotsOf(line.name) / line.weight;
  }

  private placeFor(req: WaitRequest): Slot {
    const name = req.tenant.name;
    const slot = this.placer.place(req.ctx, req.exclude, name);
    this.occupancy.set(name, this.slotsOf(name) + 1);
    return slot;
  }

  /** A slot `name`'s request held was given back (the slot calls this once). */
  vacate(name: string): void {
    const left = this.slotsOf(name) - 1;
    if (left > 0) this.occupancy.set(name, left);
    else this.occupancy.delete(name);
  }

  /**
   * Whom a full queue (held: hold) refuses to make room for an arrival of `tenant`: the newest waiter of the lowest
   * band below the arrival's, else of the same band the newest of the key waiting with the most for its weight,
   * if that is more than the arrival's key would hold with it; else nobody (the arrival is refused).
   */
  private displaceable(held: boolean, tenant: Tenant): Waiter<Slot> | undefined {
    const mine = band(tenant);
    let victim: Waiter<Slot> | undefined;
    let victimBand = -1;
    let victimShare = -Infinity;
    let own = 0;
    for (const line of this.lines.values()) {
      let count = 0;
      let newest: Waiter<Slot> | undefined;
      for (const w of line.waiters) {
        if (w.held !== held) continue;
        count += 1;
        newest = w;
      }
      if (!newest) continue;
      if (line.band === mine && line.name === tenant.name) own = count;
      const share = count / line.weight;
      if (line.band > victimBand || (line.band === victimBand && share > victimShare)) {
        victim = newest;
        victimBand = line.band;
        victimShare = share;
      }
    }
    if (!victim || victimBand < mine) return undefined;
    if (victimBand > mine) return victim;
    return victimShare > (own + 1) / tenant.weight ? victim : undefined;
  }

  private *all(): IterableIterator<Waiter<Slot>> {
    for (const line of [...this.lines.values()]) yield* [...line.waiters];
  }

  /** A replica full only by its scraped load stops counting as full when that load goes stale: drain then. */
  private armRecheck(): void {
    if (this.lines.size === 0 && this.recheck === undefined) return;
    const at = this.lines.size > 0 ? this.placer.nextLoadExpiry() : undefined;
    if (at === this.recheckAt) return;
    this.clock.cancel(this.recheck);
    this.recheck = undefined;
    this.recheckAt = at ?? NaN;
    if (at === undefined) return;
    this.recheck = this.clock.after(Math.max(0, at - this.clock.now()), () => {
      this.recheck = undefined;
      this.recheckAt = NaN;
      this.drain();
    });
  }
}
