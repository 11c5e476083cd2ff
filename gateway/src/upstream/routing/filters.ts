import type { Replica } from "../replica";

/**
 * Filters drop the replicas that cannot take the request; scorers then only rank the rest. In the order the
 * pool applies them: an empty result after `ready` means the model is not ready (503), after `unsaturated` that
 * it is busy (the request waits in the model's queue, then 429).
 */
export type Filter = (replicas: readonly Replica[], exclude?: ReadonlySet<Replica>) => Replica[];

/** Ready (health checks pass, a pool has backends) and not already tried by this request. */
export const ready: Filter = (replicas, exclude) => replicas.filter((r) => r.ready && !exclude?.has(r));

/** Below the gateway's cap and the model server's own queue and KV-cache thresholds. */
export const unsaturated: Filter = (replicas) => replicas.filter((r) => !r.saturated);

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

/** Replicas that hold the adapter or have room to load it (a free slot, or an idle adapter loaded on demand to unload). */
export function adapterRoom(candidates: readonly Replica[], adapter: string): Replica[] {
  return candidates.filter((r) => !r.adapters || r.adapters.room(adapter) !== "full");
}
