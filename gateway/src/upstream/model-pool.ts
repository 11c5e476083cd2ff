import type { CatalogModel } from "../config/catalog";
import type { Priority } from "../context/api-key-record";
import { systemClock, type Clock } from "../context/clock";
import { AdapterAffinity, createStrategy, type PickContext, type Strategy } from "./balancer";
import { PoolAdapters } from "./lora/pool-adapters";
import { Replica } from "./replica";
import { ReplicaSlot, type SlotOwner } from "./replica-slot";
import * as filters from "./routing/filters";
import type { Exclusion } from "./routing/filters";
import { ModelScheduler, type Fit, type Placed, type Placer, type WaitRequest } from "./scheduler/model-scheduler";

export type AcquireResult = Placed<ReplicaSlot>;

/**
 * The replicas of one model and the choice among them. Only ready, unsaturated replicas (for an adapter: with room
 * for it) are candidates (routing/filters.ts); the model's strategy scores them and picks one (balancer.ts). When
 * none can take a request it waits in the model's scheduler (scheduler/model-scheduler.ts), which this pool tells of
 * every change that may let a waiting request go: a slot given back, a replica's readiness or load, an adapter's
 * state.
 */
export class ModelPool implements Placer<ReplicaSlot>, SlotOwner {
  private list: Replica[] = [];
  /**
   * Replicas discovery dropped while requests or adapter loads of this pod were still under way on them: if the same
   * address comes back, it is the same server, with those counted.
   */
  private readonly retired = new Map<string, Replica>();
  private readonly strategy: Strategy;
  /** Every wait of the model: saturation, wake, adapters' room, deadlines. */
  readonly scheduler: ModelScheduler<ReplicaSlot>;
  /** Its LoRA adapters across replicas (a `lora` block, endpoints and dns modes; a pool's picker places them itself). */
  readonly adapters: PoolAdapters | undefined;
  /** How requests for an adapter pick, with `routing.adapterAffinity`. */
  private readonly adapterStrategy: Strategy | undefined;

  constructor(
    readonly model: CatalogModel,
    private readonly clock: Clock = systemClock,
  ) {
    this.strategy = createStrategy(model.routing, clock);
    if (model.lora && model.upstream.mode !== "pool") {
      this.adapters = new PoolAdapters(model.id, model.lora, clock);
      this.adapters.onChange = () => this.drain();
      if (model.routing.adapterAffinity) this.adapterStrategy = new AdapterAffinity(model.routing);
    }
    this.scheduler = new ModelScheduler(this, model.routing, model.wake, clock);
    const up = model.upstream;
    if (up.mode === "endpoints") {
      this.list = up.endpoints.map((e) => this.newReplica(e.url, e.maxConcurrency));
    } else if (up.mode === "pool") {
      // The pool's own endpoint picker does readiness and balancing; from here it is one address, checked passively,
      // taking at most the model's concurrency per ready pod when its readiness name counts them.
      const pool = this.newReplica(up.url, up.maxConcurrency ?? Number.MAX_SAFE_INTEGER, up.readiness ? model.maxConcurrency : undefined);
      pool.activeChecks = false;
      pool.markHealthy();
      this.list = [pool];
    }
    // dns: filled by DnsDiscovery through setReplicaUrls().
  }

  get replicas(): readonly Replica[] {
    return this.list;
  }

  get isReady(): boolean {
    return this.list.some((r) => r.ready);
  }

  /** The model may be at zero replicas and wakes on demand (its requests are held meanwhile). */
  get wakes(): boolean {
    return this.model.wake !== undefined;
  }

  get queueLength(): number {
    return this.scheduler.queueLength;
  }

  /** Requests waiting for room now whose key has `priority`. */
  queuedBy(priority: Priority): number {
    let n = 0;
    for (const w of this.scheduler.waiting()) if (!w.held && w.tenant.priority === priority) n += 1;
    return n;
  }

  /** Requests held now for the model to wake (0 for a model that does not). */
  get heldLength(): number {
    return this.scheduler.heldLength;
  }

  /** Whether routing weighs prompt prefixes (only then is a request's prompt hashed). */
  get routesOnPrefix(): boolean {
    return this.model.routing.strategy === "prefix-affinity";
  }

  /** The model name the model server expects in `model`. */
  get upstreamModel(): string {
    return this.model.upstreamModel ?? this.model.id;
  }

  /** pool mode: how many pods the InferencePool has ready (the addresses its readiness name resolves to). */
  setBackends(count: number): void {
    for (const r of this.list) r.setBackends(count);
  }

  /** Reconciles discovered addresses: known replicas keep their state and in-flight counts. */
  setReplicaUrls(urls: readonly string[]): void {
    const byUrl = new Map([...this.retired.values(), ...this.list].map((r) => [r.url, r]));
    const next = urls.map((u) => byUrl.get(trimSlash(u)) ?? this.newReplica(u));
    const kept = new Set(next);
    for (const r of this.list) {
      if (kept.has(r)) continue;
      r.retire();
      this.retired.set(r.url, r);
    }
    for (const r of next) this.retired.delete(r.url);
    for (const [url, r] of this.retired) if (r.inFlight === 0 && !r.adapters?.busy) this.retired.delete(url);
    this.list = next;
    this.scheduler.readinessChanged();
    this.drain();
  }

  /** A slot on a replica now, or a wait for one (scheduler/model-scheduler.ts). */
  acquire(req: WaitRequest): Promise<AcquireResult> {
    return this.scheduler.acquire(req);
  }

  /** Something that may let a waiting request go, or strand one, changed. */
  drain(): void {
    this.scheduler.drain();
  }

  // The scheduler's view of the replicas (Placer): filter, then the strategy's pick.

  hasRoom(): boolean {
    return this.list.some((r) => r.ready && !r.saturated);
  }

  fit(ctx: PickContext, exclude?: Exclusion): Fit {
    const adapter = (this.adapters && ctx.adapter) || undefined;
    let up = false;
    for (const r of this.list) {
      if (!filters.usable(r, exclude)) continue;
      up = true;
      if (filters.takes(r, adapter)) return "now";
    }
    return up ? "busy" : "none";
  }

  place(ctx: PickContext, exclude: Exclusion | undefined, name: string): ReplicaSlot {
    // Filter → score → pick: the filters here (the same as fit()'s), the scoring and the pick in the strategy.
    const adapter = (this.adapters && ctx.adapter) || undefined;
    const { ready, candidates } = filters.candidates(this.list, exclude, adapter);
    const strategy = (adapter && this.adapterStrategy) || this.strategy;
    const replica = strategy.pick(candidates, ctx, ready);
    strategy.chosen?.(replica, ctx);
    // Counted before the claim: a claim may report a change (a load ending at once) that lets others be placed.
    replica.inFlight += 1;
    const claim = adapter ? this.adapters!.claim(replica, adapter) : undefined;
    return new ReplicaSlot(replica, claim, name, this);
  }

  /** A slot is given back (once: ReplicaSlot.release): what waits may go, once the adapter claim is let go too. */
  giveBack(slot: ReplicaSlot): void {
    this.scheduler.pause();
    try {
      slot.replica.inFlight -= 1;
      this.scheduler.vacate(slot.keyName);
      slot.claim?.release();
    } finally {
      this.scheduler.resume();
    }
  }

  nextLoadExpiry(): number | undefined {
    let at: number | undefined;
    for (const r of this.list) if (r.ready && r.hasCapacity && r.saturatedByLoad) at = Math.min(at ?? Infinity, r.loadStaleAt);
    return at;
  }

  /**
   * A replica's readiness or load changed. One that went away may come back restarted: it holds its preloaded
   * adapters, and what else it holds is read from its listing once it is ready again.
   */
  private replicaChanged(replica: Replica, readinessChanged: boolean): void {
    if (readinessChanged && this.adapters) {
      if (!replica.ready) replica.adapters = this.adapters.forReplica(replica.adapters);
      else void this.adapters.learn(replica);
    }
    if (readinessChanged) this.scheduler.readinessChanged();
    this.drain();
  }

  private newReplica(url: string, cap?: number, perBackend?: number): Replica {
    const r = new Replica(this.model.id, trimSlash(url), cap ?? this.model.maxConcurrency, this.clock, perBackend);
    r.adapters = this.adapters?.forReplica();
    r.maxWaiting = this.model.routing.maxWaitingRequests;
    r.maxKvCacheUsage = this.model.routing.maxKvCacheUsage;
    r.onChange = (replica, readinessChanged) => this.replicaChanged(replica, readinessChanged);
    return r;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
