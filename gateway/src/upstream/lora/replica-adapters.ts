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
  /** Claims of this pod's requests on it now (adapter-claim.ts): an adapter with one is not idle, so not evicted. */
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
  /**
   * Whether what it holds beyond its preloaded adapters is known (a listing answered since this pod first saw it, or
   * saw it come back). Until then nothing is loaded on it: a replica that only lost its connection for a moment may
   * still hold adapters, and loading more would put it over maxLoras.
   */
  known: boolean;
  /** Names this pod is unloading: a listing taken meanwhile must not bring them back. */
  readonly unloading = new Set<string>();
  /**
   * When this pod last changed what it knows of a name itself (a load or an unload finished, a 404 said it is gone):
   * a listing asked for before then says nothing about that name.
   */
  private readonly changedAt = new Map<string, number>();
  /** When the listing last applied was asked for: one asked for earlier that answers later is older news. */
  private listedAt = -Infinity;

  constructor(
    readonly maxLoras: number,
    preloaded: readonly string[],
    now: number,
    /** How much an adapter is asked for now (adapter-demand.ts); the least is unloaded first. */
    private readonly demand: (name: string) => number = () => 0,
    known = true,
  ) {
    this.known = known;
    for (const name of preloaded) this.held.set(name, { preload: true, inFlight: 0, lastUsed: 0, since: now });
  }

  /** A load or unload of this pod is under way on it. */
  get busy(): boolean {
    if (this.unloading.size > 0) return true;
    for (const a of this.held.values()) if (a.loading) return true;
    return false;
  }

  room(name: string): AdapterRoom {
    if (this.held.has(name)) return "held";
    // Being unloaded (for another), or the rest of what the replica holds unknown: wait for that to end.
    if (!this.known || this.unloading.has(name)) return "full";
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

  /** This pod changed what the replica holds of `name` at `now` (see changedAt). */
  changed(name: string, now: number): void {
    this.changedAt.set(name, now);
  }

  /**
   * `entry` of `name` is not on the replica after all (it answered 404 for it): forgotten, unless a load of this
   * pod is under way or the entry was replaced meanwhile. True when it was forgotten.
   */
  forget(name: string, entry: HeldAdapter, now: number): boolean {
    if (this.held.get(name) !== entry || entry.loading) return false;
    this.held.delete(name);
    this.changed(name, now);
    return true;
  }

  /**
   * The replica's own listing (the adapters of its `/v1/models`, requested at `askedAt`) wins: names it lists are
   * held, names it does not are gone, except names this pod loaded, unloaded or forgot since the listing was asked
   * for, and loads under way; a listing asked for before the last one applied is ignored (listings may answer out of
   * order). True when what is held, or whether it is known, changed.
   */
  reconcile(listed: readonly string[], preloaded: ReadonlySet<string>, askedAt: number, now: number): boolean {
    if (askedAt < this.listedAt) return false;
    this.listedAt = askedAt;
    let changed = !this.known;
    this.known = true;
    const names = new Set(listed);
    const newer = (name: string) => (this.changedAt.get(name) ?? -Infinity) >= askedAt;
    for (const name of names) {
      if (this.held.has(name) || this.unloading.has(name) || newer(name)) continue;
      this.held.set(name, { preload: preloaded.has(name), inFlight: 0, lastUsed: 0, since: now });
      changed = true;
    }
    for (const [name, a] of this.held) {
      if (names.has(name) || a.loading || a.since >= askedAt || newer(name)) continue;
      this.held.delete(name);
      changed = true;
    }
    return changed;
  }
}
