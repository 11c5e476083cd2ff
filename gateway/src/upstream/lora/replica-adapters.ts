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
  /** When a request of this pod last used it (0: never), for least-recently-used eviction. */
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
  ) {
    for (const name of preloaded) this.held.set(name, { preload: true, inFlight: 0, lastUsed: 0, since: now });
  }

  room(name: string): AdapterRoom {
    if (this.held.has(name)) return "held";
    if (this.held.size < this.maxLoras) return "free";
    return this.victim() === undefined ? "full" : "evict";
  }

  /** The least recently used idle adapter loaded on demand: the one to unload for another. */
  victim(): string | undefined {
    let best: string | undefined;
    let bestUsed = Infinity;
    for (const [name, a] of this.held) {
      if (a.preload || a.loading || a.inFlight > 0) continue;
      if (a.lastUsed < bestUsed) {
        best = name;
        bestUsed = a.lastUsed;
      }
    }
    return best;
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
