import type { CatalogLora } from "../../config/catalog";
import { systemClock, type Clock } from "../../context/clock";
import type { Replica } from "../replica";
import { AdapterClaim } from "./adapter-claim";
import type { AdapterServer } from "./adapter-client";
import { AdapterDemand } from "./adapter-demand";
import { ReplicaAdapters, type HeldAdapter } from "./replica-adapters";

/** Where adapter loads, failures and evictions are reported (metrics and the log: server.ts). */
export interface AdapterEvents {
  loaded(adapter: string, replica: string, seconds: number): void;
  loadFailed(adapter: string, replica: string, seconds: number, reason: string): void;
  /** `adapter` was unloaded from `replica` to make room for `forAdapter`. */
  evicted(adapter: string, replica: string, forAdapter: string): void;
}

/**
 * The adapters of one model (its catalog `lora` block) across its replicas: which replica holds which, loads on
 * demand, and evictions. A replica holds at most `maxLoras` adapters, preloaded ones included. A request for an
 * adapter claims it on the replica it was routed to (adapter-claim.ts): held, it is used at once; being loaded, the
 * request waits for that load (one load per adapter and replica); absent, it is loaded, after unloading an idle
 * adapter loaded on demand (the least asked for lately, then the least recently used) when the replica is full.
 * Routing sends no request to a replica with no room for its adapter (routing/filters.ts).
 */
export class PoolAdapters {
  private readonly paths: Map<string, string>;
  private readonly preloaded: Set<string>;
  private readonly demand = new AdapterDemand();
  private server: AdapterServer | undefined;
  private events: AdapterEvents | undefined;
  private listingTimeoutMs = 1000;
  /** Told when an adapter turns idle, finishes loading or is found gone: a waiting request may go now (the pool). */
  onChange: (() => void) | undefined;
  private readonly owner = { now: () => this.clock.now(), changed: () => this.onChange?.() };

  constructor(
    readonly modelId: string,
    readonly lora: CatalogLora,
    private readonly clock: Clock = systemClock,
  ) {
    this.paths = new Map(lora.adapters.map((a) => [a.id, a.path]));
    this.preloaded = new Set(lora.adapters.filter((a) => a.loading === "preload").map((a) => a.id));
  }

  /** Where loads and listings go and what they report; until then a load fails, and replicas hold what they preload. */
  connect(server: AdapterServer, events: AdapterEvents, listingTimeoutMs = 1000): void {
    this.server = server;
    this.events = events;
    this.listingTimeoutMs = listingTimeoutMs;
  }

  /**
   * The state of a new replica (or one that restarted, or may have): its preloaded adapters, the rest unknown until
   * learn() reads its listing. Loads and unloads this pod had under way on it (`previous`) carry over: they may
   * still land, and their outcome is the new state's.
   */
  forReplica(previous?: ReplicaAdapters): ReplicaAdapters {
    const state = new ReplicaAdapters(this.lora.maxLoras, [...this.preloaded], this.clock.now(), (name) => this.demand.of(name, this.clock.now()), false);
    for (const [name, entry] of previous?.held ?? []) if (entry.loading) state.held.set(name, entry);
    for (const name of previous?.unloading ?? []) state.unloading.add(name);
    return state;
  }

  /**
   * A replica turned ready: what it holds is read from its listing at once. If the listing fails, it is taken to hold
   * its preloaded adapters only (a restart), rather than leaving it unusable for adapters.
   */
  async learn(replica: Replica): Promise<void> {
    const slots = replica.adapters;
    if (!slots || slots.known) return;
    if (this.server) await this.sync(replica, this.listingTimeoutMs);
    if (!slots.known && replica.adapters === slots) {
      slots.known = true;
      this.onChange?.();
    }
  }

  /** Claims `name` on the replica a request was routed to, loading it there if needed. Synchronous: the next pick sees it. */
  claim(replica: Replica, name: string): AdapterClaim {
    const now = this.clock.now();
    this.demand.hit(name, now);
    const slots = replica.adapters!;
    let held = slots.held.get(name);
    if (!held) {
      const evict = slots.held.size >= this.lora.maxLoras ? slots.victim() : undefined;
      const victim = evict === undefined ? undefined : { name: evict, entry: slots.held.get(evict)! };
      if (victim) {
        slots.held.delete(victim.name);
        slots.unloading.add(victim.name);
      }
      held = { preload: this.preloaded.has(name), inFlight: 0, lastUsed: now, since: now };
      slots.held.set(name, held);
      held.loading = this.load(replica, name, victim, held);
      // Each claim awaits it (ready()); this branch only keeps a failure nobody waits for from being unhandled.
      held.loading.catch(() => undefined);
    }
    return new AdapterClaim(replica, name, held, this.owner);
  }

  /** Reads what the replica holds from its `/v1/models` (authoritative: other gateway pods load too). */
  async sync(replica: Replica, timeoutMs: number): Promise<void> {
    const slots = replica.adapters;
    if (!slots || !this.server) return;
    const askedAt = this.clock.now();
    const listed = await this.server.listed(replica.url, timeoutMs).catch(() => undefined);
    // A replica replaced meanwhile (it restarted) has a fresh state: this listing is not its.
    if (listed && replica.adapters === slots && slots.reconcile(listed, this.preloaded, askedAt, this.clock.now())) this.onChange?.();
  }

  /**
   * Unloads the victim, if any, then loads `name` on the replica. Each outcome is recorded in the replica's state as
   * it is when the outcome comes (it may have been reset meanwhile, with this load carried over: forReplica()).
   */
  private async load(replica: Replica, name: string, victim: { name: string; entry: HeldAdapter } | undefined, held: HeldAdapter): Promise<void> {
    const claimedOn = replica.adapters!;
    const started = this.clock.now();
    const seconds = () => (this.clock.now() - started) / 1000;
    try {
      if (!this.server) throw new Error("no adapter client");
      if (victim) {
        try {
          await this.server.unload(replica.url, victim.name);
          replica.adapters?.changed(victim.name, this.clock.now());
          this.events?.evicted(victim.name, replica.url, name);
        } catch (err) {
          // Not unloaded: it is still there (if nothing reset the state meanwhile), and there is no room for this one.
          if (replica.adapters === claimedOn && !claimedOn.held.has(victim.name)) claimedOn.held.set(victim.name, victim.entry);
          throw err;
        } finally {
          claimedOn.unloading.delete(victim.name);
          replica.adapters?.unloading.delete(victim.name);
          // Requests for the adapter unloaded waited for the unload to end: they may go (and load it) now.
          this.onChange?.();
        }
      }
      const path = this.paths.get(name);
      if (path === undefined) throw new Error(`adapter ${name} is not in the catalog of ${this.modelId}`);
      await this.server.load(replica.url, name, path);
      held.loading = undefined;
      held.since = this.clock.now();
      replica.adapters?.changed(name, held.since);
      this.events?.loaded(name, replica.url, seconds());
    } catch (err) {
      for (const state of [claimedOn, replica.adapters]) if (state?.held.get(name) === held) state.held.delete(name);
      this.events?.loadFailed(name, replica.url, seconds(), (err as Error).message);
      throw err;
    } finally {
      // A load that ended (either way) may let a waiting request go: the adapter is usable, or its slot is free.
      this.onChange?.();
    }
  }
}
