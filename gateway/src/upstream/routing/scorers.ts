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

/**
 * Adapter affinity: 1 for a replica holding the request's adapter (or loading it), which saves a load and the engine's
 * stall while it loads. Where a load is needed: 0.5 for a free slot, and for an eviction 0.5 down to 0 by the demand
 * for its victim among the candidates' victims: loads go where the least wanted adapter is, so the churn of rarely used
 * adapters stays in few slots and the popular ones stay put.
 */
export class AdapterScorer implements Scorer {
  score(candidates: readonly Replica[], ctx: PickContext, out: Float64Array): void {
    const name = ctx.adapter;
    const room = (r: Replica) => (name === undefined || !r.adapters ? "full" : r.adapters.room(name));
    // The least and most wanted victims (named as ages: the least wanted is the one to go).
    let oldest = Infinity;
    let newest = -Infinity;
    for (const r of candidates) {
      if (room(r) !== "evict") continue;
      const used = r.adapters!.victimDemand();
      oldest = Math.min(oldest, used);
      newest = Math.max(newest, used);
    }
    candidates.forEach((r, i) => {
      const where = room(r);
      if (where !== "evict") out[i] = where === "held" ? 1 : where === "free" ? 0.5 : 0;
      else out[i] = newest === oldest ? 0.5 : (0.5 * (newest - r.adapters!.victimDemand())) / (newest - oldest);
    });
  }
}
