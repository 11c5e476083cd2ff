/**
 * The LoRA adapters one replica holds, as this gateway pod knows them: what the replica's `/v1/models` listed (every
 * registered adapter, with its `parent`) plus the loads and unloads this pod made since. vLLM's
 * `vllm:lora_requests_info` cannot say this: it names only adapters with a running request.
 */

export interface HeldAdapter {
  /** Set while this pod's load is under way: requests for it wait for the same load. */
  loading?: Promise<void>;
  /** Loaded at the replica's start (`--lora-modules`): never evicted. */
  preload: boolean;
  /** This pod's requests on it now: an adapter with one is not idle, so not evicted. */
  inFlight: number;
  /** When a request of this pod last used it (0: never): breaks ties of eviction by demand. */
  lastUsed: number;
  /** When this pod learnt it is there. */
  since: number;
}

/** What taking a request for an adapter costs a replica: nothing, a load, a load after an eviction, or no room. */
export type AdapterRoom = "held" | "free" | "evict" | "full";

export class ReplicaAdapters {
  readonly held = new Map<string, HeldAdapter>();
  /** Names this pod is unloading: a listing taken meanwhile must not bring them back. */
  readonly unloading = new Set<string>();

  constructor(
    private readonly maxLoras: number,
    preloaded: readonly string[],
    now = Date.now(),
    /** How much an adapter is asked for now (adapter-demand.ts); the least is unloaded first. */
    private readonly demand: (name: string) => number = () => 0,
  ) {
    for (const name of preloaded) this.held.set(name, { preload: true, inFlight: 0, lastUsed: 0, since: now });
  }

  room(name: string): AdapterRoom {
    if (this.held.has(name)) return "held";
    if (this.held.size < this.maxLoras) return "free";
    return this.victim() === undefined ? "full" : "evict";
  }

  /**
   * The idle adapter loaded on demand to unload for another: the least asked for lately, then the least recently used.
   * Plain LRU evicts a popular adapter that happens to be idle for one rarely asked for, which then evicts the next:
   * with Zipf-like popularity that doubles the loads (docs/benchmarks.md, LoRA adapters).
   */
  victim(): string | undefined {
    let best: string | undefined;
    let bestDemand = Infinity;
    let bestUsed = Infinity;
    for (const [name, a] of this.held) {
      if (a.preload || a.loading || a.inFlight > 0) continue;
      const demand = this.demand(name);
      if (demand < bestDemand || (demand === bestDemand && a.lastUsed < bestUsed)) {
        best = name;
        bestDemand = demand;
        bestUsed = a.lastUsed;
      }
    }
    return best;
  }

  /** The demand for the victim (victim()); Infinity when there is none. */
  victimDemand(): number {
    const name = this.victim();
    return name === undefined ? Infinity : this.demand(name);
  }

  /**
   * The replica's own listing (the adapters of its `/v1/models`, requested at `askedAt`) wins: names it lists are
   * held, names it does not are gone, except loads and unloads of this pod that the listing may predate.
   */
  reconcile(listed: readonly string[], preloaded: ReadonlySet<string>, askedAt: number, now = Date.now()): void {
    const names = new Set(listed);
    for (const name of names) {
      if (!this.held.has(name) && !this.unloading.has(name)) this.held.set(name, { preload: preloaded.has(name), inFlight: 0, lastUsed: 0, since: now });
    }
    for (const [name, a] of this.held) if (!names.has(name) && !a.loading && a.since < askedAt) this.held.delete(name);
  }
}
