import type { CatalogLora } from "../../config/catalog";
import type { Replica } from "../replica";
import type { AdapterClient } from "./adapter-client";
import { AdapterDemand } from "./adapter-demand";
import { ReplicaAdapters } from "./replica-adapters";

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
 * adapter claims it on the replica it was routed to: held, it is used at once; being loaded, the request waits for
 * that load (one load per adapter and replica); absent, it is loaded, after unloading an idle adapter loaded on
 * demand (the least asked for lately, then the least recently used) when the replica is full. Routing sends no
 * request to a replica with no room for its adapter (routing/filters.ts).
 */
export class PoolAdapters {
  private readonly paths: Map<string, string>;
  private readonly preloaded: Set<string>;
  private readonly demand = new AdapterDemand();
  private client: AdapterClient | undefined;
  private events: AdapterEvents | undefined;

  constructor(
    readonly modelId: string,
    readonly lora: CatalogLora,
  ) {
    this.paths = new Map(lora.adapters.map((a) => [a.id, a.path]));
    this.preloaded = new Set(lora.adapters.filter((a) => a.loading === "preload").map((a) => a.id));
  }

  /** Where loads go and what they report; until then a load fails. */
  connect(client: AdapterClient, events: AdapterEvents): void {
    this.client = client;
    this.events = events;
  }

  /** The state of a new replica (or one that restarted): its preloaded adapters. */
  forReplica(): ReplicaAdapters {
    return new ReplicaAdapters(this.lora.maxLoras, [...this.preloaded], Date.now(), (name) => this.demand.of(name));
  }

  /** Counts a request for `name` on the replica it was routed to, loading the adapter there if needed. Synchronous: the next pick sees it. */
  claim(replica: Replica, name: string, now = Date.now()): void {
    this.demand.hit(name, now);
    const slots = replica.adapters!;
    let held = slots.held.get(name);
    if (!held) {
      const victim = slots.held.size >= this.lora.maxLoras ? slots.victim() : undefined;
      if (victim !== undefined) {
        slots.held.delete(victim);
        slots.unloading.add(victim);
      }
      held = { preload: this.preloaded.has(name), inFlight: 0, lastUsed: now, since: now };
      slots.held.set(name, held);
      held.loading = this.load(replica, slots, name, victim, held);
      // Each waiting request awaits it (ready()); this branch only keeps a failure nobody waits for from being unhandled.
      held.loading.catch(() => undefined);
    }
    held.inFlight += 1;
    held.lastUsed = now;
  }

  /** Resolves once `name` is usable on the replica a request claimed it on; rejects if its load failed. */
  ready(replica: Replica, name: string): Promise<void> {
    const held = replica.adapters?.held.get(name);
    if (!held) return Promise.reject(new Error(`adapter ${name} is not on ${replica.url}`));
    return held.loading ?? Promise.resolve();
  }

  release(replica: Replica, name: string, now = Date.now()): void {
    const held = replica.adapters?.held.get(name);
    if (!held || held.inFlight === 0) return;
    held.inFlight -= 1;
    held.lastUsed = now;
  }

  /** Reads what the replica holds from its `/v1/models` (authoritative: other gateway pods load too). */
  async sync(replica: Replica, timeoutMs: number): Promise<void> {
    const slots = replica.adapters;
    if (!slots || !this.client) return;
    const askedAt = Date.now();
    const listed = await this.client.listed(replica.url, timeoutMs).catch(() => undefined);
    // A replica replaced meanwhile (it restarted) has a fresh state: this listing is not its.
    if (listed && replica.adapters === slots) slots.reconcile(listed, this.preloaded, askedAt);
  }

  private async load(replica: Replica, slots: ReplicaAdapters, name: string, victim: string | undefined, held: { loading?: Promise<void>; since: number }): Promise<void> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      if (!this.client) throw new Error("no adapter client");
      if (victim !== undefined) {
        try {
          await this.client.unload(replica.url, victim);
          this.events?.evicted(victim, replica.url, name);
        } finally {
          slots.unloading.delete(victim);
        }
      }
      const path = this.paths.get(name);
      if (path === undefined) throw new Error(`adapter ${name} is not in the catalog of ${this.modelId}`);
      await this.client.load(replica.url, name, path);
      held.loading = undefined;
      held.since = Date.now();
      this.events?.loaded(name, replica.url, seconds());
    } catch (err) {
      if (slots.held.get(name) === held) slots.held.delete(name);
      this.events?.loadFailed(name, replica.url, seconds(), (err as Error).message);
      throw err;
    }
  }
}
