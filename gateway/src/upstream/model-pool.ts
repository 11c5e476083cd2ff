import type { CatalogModel } from "../config/catalog";
import { AdapterAffinity, createStrategy, type PickContext, type Strategy } from "./balancer";
import { PoolAdapters } from "./lora/pool-adapters";
import { Replica } from "./replica";
import * as filters from "./routing/filters";
import { WakeQueue, type HoldHooks } from "./wake-queue";

export type AcquireResult = { ok: true; replica: Replica } | { ok: false; reason: "not_ready" | "saturated" };

interface Waiter {
  ctx: PickContext;
  exclude?: ReadonlySet<Replica>;
  resolve(result: AcquireResult): void;
  timer: NodeJS.Timeout;
}

/** How often a non-empty wait queue re-checks replicas whose saturation came from scraped load. */
const QUEUE_RECHECK_MS = 50;

/**
 * The replicas of one model and the choice among them. Only ready, unsaturated replicas are candidates
 * (routing/filters.ts); the model's strategy scores them and picks one. When every ready replica is saturated, requests wait in a short FIFO
 * queue (bounded in length and time) before the caller answers 429. A model that wakes on demand (`wake`) holds
 * requests while it has no ready replica (wake-queue.ts); they go first once one is ready, as fast as it has room.
 */
export class ModelPool {
  private list: Replica[] = [];
  private readonly strategy: Strategy;
  private readonly queue: Waiter[] = [];
  private recheck: NodeJS.Timeout | undefined;
  /** Requests held while the model has no ready replica; only for a model that wakes on demand. */
  readonly wakeQueue: WakeQueue | undefined;
  /** Its LoRA adapters across replicas (a `lora` block, endpoints and dns modes; a pool's picker places them itself). */
  readonly adapters: PoolAdapters | undefined;
  /** How requests for an adapter pick, with `routing.adapterAffinity`. */
  private readonly adapterStrategy: Strategy | undefined;

  constructor(readonly model: CatalogModel) {
    this.strategy = createStrategy(model.routing);
    if (model.lora && model.upstream.mode !== "pool") {
      this.adapters = new PoolAdapters(model.id, model.lora);
      if (model.routing.adapterAffinity) this.adapterStrategy = new AdapterAffinity(model.routing);
    }
    this.wakeQueue = model.wake ? new WakeQueue(model.wake, () => this.isReady) : undefined;
    const up = model.upstream;
    if (up.mode === "endpoints") {
      this.list = up.endpoints.map((e) => this.newReplica(e.url, e.maxConcurrency));
    } else if (up.mode === "pool") {
      // The pool's own endpoint picker does readiness and balancing; from here it is one address, checked passively.
      const pool = this.newReplica(up.url, up.maxConcurrency ?? Number.MAX_SAFE_INTEGER);
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

  get queueLength(): number {
    return this.queue.length;
  }

  /** Requests held now for the model to wake (0 for a model that does not). */
  get heldLength(): number {
    return this.wakeQueue?.length ?? 0;
  }

  /** Whether routing weighs prompt prefixes (only then is a request's prompt hashed). */
  get routesOnPrefix(): boolean {
    return this.model.routing.strategy === "prefix-affinity";
  }

  /** The model name the model server expects in `model`. */
  get upstreamModel(): string {
    return this.model.upstreamModel ?? this.model.id;
  }

  /** pool mode: whether the InferencePool has a ready pod (its readiness name resolves). */
  setBackendsReady(ready: boolean): void {
    for (const r of this.list) r.backendsReady = ready;
    this.drain();
  }

  /** Reconciles discovered addresses: known replicas keep their state and in-flight counts. */
  setReplicaUrls(urls: readonly string[]): void {
    const byUrl = new Map(this.list.map((r) => [r.url, r]));
    this.list = urls.map((u) => byUrl.get(trimSlash(u)) ?? this.newReplica(u));
    this.drain();
  }

  /**
   * Picks a replica now, or waits in the queue for one; `signal` abandons the wait. With `hold` (a request that may
   * go to any replica), a model that wakes on demand and has no ready replica holds it instead of answering not_ready.
   */
  acquire(ctx: PickContext = {}, exclude?: ReadonlySet<Replica>, signal?: AbortSignal, hold?: HoldHooks): Promise<AcquireResult> {
    // Arrivals do not overtake requests already waiting or held.
    const now = this.queue.length === 0 && this.heldLength === 0 ? this.tryPick(ctx, exclude) : undefined;
    if (now?.ok) return Promise.resolve(now);
    if (hold && this.wakeQueue && !this.isReady) return this.held(this.wakeQueue, ctx, exclude, signal, hold);
    if (now?.reason === "not_ready") return Promise.resolve(now);
    if (now === undefined && !this.isReady) return Promise.resolve({ ok: false, reason: "not_ready" });
    const { queueTimeoutMs, maxQueueLength } = this.model.routing;
    if (queueTimeoutMs <= 0 || this.queue.length >= maxQueueLength || signal?.aborted) return Promise.resolve({ ok: false, reason: "saturated" });

    return new Promise<AcquireResult>((resolve) => {
      const waiter: Waiter = {
        ctx,
        exclude,
        resolve: (r) => {
          clearTimeout(waiter.timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(r);
        },
        timer: setTimeout(() => this.leave(waiter, { ok: false, reason: "saturated" }), queueTimeoutMs),
      };
      const onAbort = () => this.leave(waiter, { ok: false, reason: "saturated" });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter);
      this.ensureRecheck();
    });
  }

  private async held(queue: WakeQueue, ctx: PickContext, exclude: ReadonlySet<Replica> | undefined, signal: AbortSignal | undefined, hooks: HoldHooks): Promise<AcquireResult> {
    const pending = queue.hold(ctx, exclude, signal, hooks);
    this.ensureRecheck();
    const end = await pending;
    if (typeof end !== "string") return { ok: true, replica: end };
    // Past its deadline with a replica up but full the queue says `saturated` (429); a wake that failed, or a gateway
    // shutting down, is not_ready (503, which clients retry elsewhere).
    return { ok: false, reason: end === "saturated" || end === "abandoned" ? "saturated" : "not_ready" };
  }

  /** Gives back the slot a request took (`adapter`: the adapter it claimed there). */
  release(replica: Replica, adapter?: string): void {
    replica.inFlight = Math.max(0, replica.inFlight - 1);
    if (adapter !== undefined) this.adapters?.release(replica, adapter);
    this.drain();
  }

  /** A replica turned ready or not: one that went away may come back restarted, holding only its preloaded adapters. */
  replicaChanged(replica: Replica): void {
    if (!replica.ready && this.adapters) replica.adapters = this.adapters.forReplica();
    this.drain();
  }

  /** Serves held, then waiting, requests in order while replicas have room. */
  drain(): void {
    const wake = this.wakeQueue;
    if (wake && (wake.waking || wake.length > 0) && this.isReady) {
      wake.ready();
      wake.release((ctx, exclude) => {
        const r = this.tryPick(ctx, exclude);
        return r.ok ? r.replica : undefined;
      });
    }
    // Held requests came first: the saturation queue waits until they are placed.
    while (this.queue.length > 0 && this.heldLength === 0) {
      const head = this.queue[0]!;
      const r = this.tryPick(head.ctx, head.exclude);
      if (!r.ok && r.reason === "saturated") break;
      this.queue.shift();
      head.resolve(r);
    }
    if (this.queue.length === 0 && this.heldLength === 0 && this.recheck) {
      clearInterval(this.recheck);
      this.recheck = undefined;
    }
  }

  private leave(waiter: Waiter, result: AcquireResult): void {
    const i = this.queue.indexOf(waiter);
    if (i >= 0) this.queue.splice(i, 1);
    waiter.resolve(result);
  }

  private ensureRecheck(): void {
    if (!this.recheck) {
      this.recheck = setInterval(() => this.drain(), QUEUE_RECHECK_MS);
      this.recheck.unref();
    }
  }

  private tryPick(ctx: PickContext, exclude?: ReadonlySet<Replica>): AcquireResult {
    // Filter → score → pick: the filters here, the scoring and the pick in the strategy (balancer.ts).
    const ready = filters.ready(this.list, exclude);
    if (ready.length === 0) return { ok: false, reason: "not_ready" };
    let candidates = filters.unsaturated(ready);
    const adapter = this.adapters && ctx.adapter;
    // A replica with no room for the adapter (every slot holds one in use) is as good as saturated for this request.
    if (adapter) candidates = filters.adapterRoom(candidates, adapter);
    if (candidates.length === 0) return { ok: false, reason: "saturated" };
    const strategy = (adapter && this.adapterStrategy) || this.strategy;
    const replica = strategy.pick(candidates, ctx, ready);
    strategy.chosen?.(replica, ctx);
    if (adapter) this.adapters!.claim(replica, adapter);
    replica.inFlight += 1;
    return { ok: true, replica };
  }

  private newReplica(url: string, maxConcurrency?: number): Replica {
    const r = new Replica(this.model.id, trimSlash(url), maxConcurrency ?? this.model.maxConcurrency);
    r.adapters = this.adapters?.forReplica();
    r.maxWaiting = this.model.routing.maxWaitingRequests;
    r.maxKvCacheUsage = this.model.routing.maxKvCacheUsage;
    return r;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
