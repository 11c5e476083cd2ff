import type { Routing } from "../config/catalog";
import { PrefixIndex } from "./prefix-index";
import type { Replica } from "./replica";

/** What a strategy may look at besides the replicas. */
export interface PickContext {
  /** Chained prefix-block hashes of the prompt (prefix-affinity only). */
  prefix?: readonly number[];
}

/** Chooses among replicas that are ready, not saturated and not excluded; never sees an empty list. */
export interface Strategy {
  pick(candidates: readonly Replica[], ctx: PickContext): Replica;
  /** Told which replica got the request, so it can learn (prefix affinity). */
  chosen?(replica: Replica, ctx: PickContext): void;
}

export class RoundRobin implements Strategy {
  private next = 0;
  pick(candidates: readonly Replica[]): Replica {
    const r = candidates[this.next % candidates.length]!;
    this.next = (this.next + 1) % 1_000_000;
    return r;
  }
}

/** Fewest requests in flight plus queued at the model server; ties broken by KV-cache use, then rotation. */
export class LeastLoaded implements Strategy {
  private rotation = 0;
  pick(candidates: readonly Replica[]): Replica {
    const n = candidates.length;
    const start = this.rotation++ % n;
    let best = candidates[start]!;
    for (let i = 1; i < n; i++) {
      const r = candidates[(start + i) % n]!;
      if (r.load < best.load || (r.load === best.load && r.kvCacheUsage < best.kvCacheUsage)) best = r;
    }
    return best;
  }
}

/**
 * Sends a prompt to the replica that served its longest prefix recently (its KV cache is warm), unless that
 * replica is much busier than the least-loaded one: prefix-only routing piles hot prefixes on one replica
 * (llm-d measured ~55% success without a load gate), so affinity holds only "until saturated".
 */
export class PrefixAffinity implements Strategy {
  private readonly index = new PrefixIndex();
  private readonly fallback = new LeastLoaded();

  constructor(private readonly routing: Pick<Routing, "minPrefixBlocks" | "affinityLoadTolerance">) {}

  pick(candidates: readonly Replica[], ctx: PickContext): Replica {
    const least = this.fallback.pick(candidates);
    const hashes = ctx.prefix ?? [];
    if (hashes.length < this.routing.minPrefixBlocks) return least;
    const matched = this.index.matchedBlocks(hashes);
    // The warmest replica that is not much busier than the least-loaded one; ties go to the less loaded.
    let best: Replica | undefined;
    let bestBlocks = this.routing.minPrefixBlocks - 1;
    for (const r of candidates) {
      const blocks = matched.get(r.url) ?? 0;
      if (blocks <= bestBlocks && !(blocks === bestBlocks && best && r.load < best.load)) continue;
      const tolerance = Math.max(1, Math.ceil(this.routing.affinityLoadTolerance * r.maxConcurrency));
      if (r.load - least.load > tolerance) continue;
      best = r;
      bestBlocks = blocks;
    }
    return best ?? least;
  }

  chosen(replica: Replica, ctx: PickContext): void {
    if (ctx.prefix && ctx.prefix.length > 0) this.index.record(ctx.prefix, replica.url);
  }
}

export function createStrategy(routing: Routing): Strategy {
  switch (routing.strategy) {
    case "round-robin":
      return new RoundRobin();
    case "prefix-affinity":
      return new PrefixAffinity(routing);
    case "least-loaded":
      return new LeastLoaded();
  }
}
