import type { Routing } from "../config/catalog";
import { PrefixIndex } from "./prefix-index";
import type { Replica } from "./replica";
import { WeightedPicker, type WeightedScorer } from "./routing/picker";
import { KvCacheScorer, PrefixScorer, QueueScorer, type PickContext } from "./routing/scorers";

export type { PickContext };

/**
 * Routing as filter → score → pick: the pool's filters (routing/filters.ts) leave the replicas that can take the
 * request, scorers rate each in [0, 1] (routing/scorers.ts), one picker takes the best weighted sum
 * (routing/picker.ts). The strategy names of the catalog are presets of weights, below.
 */
export interface Strategy {
  /** Chooses among replicas that are ready, not saturated and not excluded; never sees an empty list. */
  pick(candidates: readonly Replica[], ctx: PickContext): Replica;
  /** Told which replica got the request, so it can learn (prefix affinity). */
  chosen?(replica: Replica, ctx: PickContext): void;
}

/** KV-cache room only breaks ties of the scorers that matter. */
const KV_TIE_BREAK = 0.001;

/** No scorer: every candidate ties and the picker rotates (the Kubernetes Service baseline). */
export class RoundRobin extends WeightedPicker implements Strategy {
  constructor() {
    super([]);
  }
}

/**
 * Queue depth with a span of one request: only the least-loaded candidates score; ties go to KV-cache room,
 * then rotation. Load is our in-flight count plus what other gateway replicas have at that server.
 */
export class LeastLoaded extends WeightedPicker implements Strategy {
  constructor() {
    super([
      { scorer: new QueueScorer(() => 1), weight: 1 },
      { scorer: new KvCacheScorer(), weight: KV_TIE_BREAK },
    ]);
  }
}

/**
 * Prefix match weighed against queue depth: a prompt goes to the replica holding most of its prefix (its KV
 * cache is warm) while that replica is not much busier than the least-loaded one. Prefix-only routing piles hot
 * prefixes onto one replica and the tail pays (llm-d measured ~55% success without load), so load counts twice
 * as much as a whole-prompt match over a span of 2T+1 requests: a full match wins while the replica has at most
 * T = ceil(affinityLoadTolerance × cap) requests more than the least loaded, a partial match proportionally less,
 * and beyond the span nothing can outweigh the load. Affinity never sends a request to a replica far busier than
 * the rest.
 */
export class PrefixAffinity extends WeightedPicker implements Strategy {
  private readonly index: PrefixIndex;

  constructor(routing: Pick<Routing, "minPrefixBlocks" | "affinityLoadTolerance">, index = new PrefixIndex()) {
    const span = (r: Replica) => 2 * Math.max(1, Math.ceil(routing.affinityLoadTolerance * r.maxConcurrency)) + 1;
    const scorers: WeightedScorer[] = [
      { scorer: new PrefixScorer(index, routing.minPrefixBlocks), weight: 1 },
      { scorer: new QueueScorer(span), weight: 2 },
      { scorer: new KvCacheScorer(), weight: KV_TIE_BREAK },
    ];
    super(scorers);
    this.index = index;
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
