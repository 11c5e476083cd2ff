import type { Replica } from "../replica";

/** Replicas a request may not use: those it tried already, or every one but the replica it is pinned to. */
export interface Exclusion {
  has(replica: Replica): boolean;
}

/**
 * Filters: which replicas can take a request. The scheduler asks whether any can (`usable`, `takes`); the pool
 * then scores only those (`candidates`). No usable replica means the model is not ready for it (503); usable ones
 * that cannot take it mean it is busy (the request waits, then 429).
 */

/** Ready (health checks pass, a pool has backends) and not excluded for this request. */
export function usable(r: Replica, exclude?: Exclusion): boolean {
  return r.ready && !exclude?.has(r);
}

/**
 * Can take the request now: below the gateway's cap and the model server's own queue and KV-cache thresholds, and,
 * for an adapter, holding it or with room to load it (a free slot, or an idle adapter loaded on demand to unload).
 */
export function takes(r: Replica, adapter?: string): boolean {
  return !r.saturated && (adapter === undefined || !r.adapters || r.adapters.room(adapter) !== "full");
}

/** The usable replicas, and those of them that can take the request now. */
export function candidates(replicas: readonly Replica[], exclude: Exclusion | undefined, adapter: string | undefined): { ready: Replica[]; candidates: Replica[] } {
  const ready = replicas.filter((r) => usable(r, exclude));
  return { ready, candidates: ready.filter((r) => takes(r, adapter)) };
}

/**
 * The load gate of prefix placement: replicas at most `tolerance(replica)` requests busier than the least-loaded
 * candidate. The least loaded always passes, so the result is never empty. Bounded-load consistent hashing
 * (Mirrokni et al., 2018) bounds by the mean; the least is what a pod knows best (its own in-flight count is exact).
 */
export function withinLoadBound(candidates: readonly Replica[], tolerance: (r: Replica) => number): Replica[] {
  let least = Infinity;
  for (const r of candidates) least = Math.min(least, r.load);
  return candidates.filter((r) => r.load <= least + tolerance(r));
}
