import type { Replica } from "../replica";

/** What routing may look at besides the replicas. */
export interface PickContext {
  /** Chained hashes of the prompt's first `minPrefixBlocks` blocks (only for models routed by prefix); the last is the anchor. */
  prefix?: readonly number[];
  /** The LoRA adapter the request names (a model with a `lora` block, endpoints and dns modes). */
  adapter?: string;
}

/**
 * Rates every candidate in [0, 1], higher is better, into `out` (one slot per candidate). Scorers see only
 * replicas the filters let through, and say nothing about the others: a weight decides how much each counts.
 */
export interface Scorer {
  score(candidates: readonly Replica[], ctx: PickContext, out: Float64Array): void;
}

/**
 * Queue depth: how much busier a replica is than the least-loaded candidate, as a share of `span(replica)`
 * requests: 1 for the least loaded, 0 at `span` or more above it. Relative to the cap, not min-max normalised,
 * so one request more does not look like the whole range.
 */
export class QueueScorer implements Scorer {
  constructor(private readonly span: (r: Replica) => number) {}

  score(candidates: readonly Replica[], _ctx: PickContext, out: Float64Array): void {
    let least = Infinity;
    for (const r of candidates) least = Math.min(least, r.load);
    candidates.forEach((r, i) => (out[i] = Math.max(0, 1 - (r.load - least) / this.span(r))));
  }
}

/** KV-cache room the model server reports: 1 - its KV-cache use. */
export class KvCacheScorer implements Scorer {
  score(candidates: readonly Replica[], _ctx: PickContext, out: Float64Array): void {
    candidates.forEach((r, i) => (out[i] = 1 - Math.min(1, Math.max(0, r.kvCacheUsage))));
  }
}

/** What holding an adapter is worth: 1 held (or being loaded), a little for a free slot, less for one freed by an eviction. */
const ADAPTER_ROOM_SCORE = { held: 1, free: 0.1, evict: 0.05, full: 0 } as const;

/** Adapter affinity: a replica holding the request's adapter saves a load (and the engine's stall while it loads). */
export class AdapterScorer implements Scorer {
  score(candidates: readonly Replica[], ctx: PickContext, out: Float64Array): void {
    const name = ctx.adapter;
    candidates.forEach((r, i) => (out[i] = name === undefined || !r.adapters ? 0 : ADAPTER_ROOM_SCORE[r.adapters.room(name)]));
  }
}
