import type { Routing } from "../config/catalog";
import { systemClock, type Clock } from "../context/clock";
import type { Replica } from "./replica";
import { withinLoadBound } from "./routing/filters";
import { WeightedPicker } from "./routing/picker";
import { PrefixPlacement } from "./routing/placement";
import { AdapterScorer, KvCacheScorer, QueueScorer, type PickContext } from "./routing/scorers";

export type { PickContext };

/**
 * Routing as filter → score → pick: the pool's filters (routing/filters.ts) leave the replicas that can take the
 * request, scorers rate each in [0, 1] (routing/scorers.ts), one picker takes the best weighted sum
 * (routing/picker.ts). The strategy names of the catalog are presets of weights, below.
 */
export interface Strategy {
  /**
   * Chooses among replicas that are ready, not saturated and not excluded (`candidates`, never empty); `ready` is
   * every ready replica, for choices that must not depend on which happen to have room now.
   */
  pick(candidates: readonly Replica[], ctx: PickContext, ready?: readonly Replica[]): Replica;
  /** Told which replica got the request, so it can learn (prefix affinity). */
  chosen?(replica: Replica, ctx: PickContext): void;
}

/** The gate for a prefix the pod has not routed yet: only the least-loaded replicas; the prefix's order breaks ties. */
const LEAST_LOADED_ONLY = (): number => 0;

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
 * Prefix placement with a load gate. A prompt of at least `minPrefixBlocks` blocks has an anchor (the hash of those
 * blocks) and goes to the anchor's home (routing/placement.ts: the same in every gateway pod) while the home is
 * within the gate, else to the next replica of the anchor's rendezvous order that is: a hot prefix spills to the same
 * few replicas from every pod, and they become warm for it. The gate: a prefix this pod has routed before (shared: a
 * document, a system prompt, an earlier turn) accepts up to T = ⌈affinityLoadTolerance × cap⌉ requests more than the
 * least-loaded candidate; one it has not seen goes to the least-loaded replicas, its order breaking ties: a prompt
 * that may never repeat is not worth queueing for, and a new shared prefix still lands on its home while that is as
 * free as any (on idle replicas, always). Shorter prompts go least-loaded. Prefix-only routing piles hot prefixes
 * onto one replica and the tail pays (llm-d measured ~55% success without load).
 */
export class PrefixAffinity implements Strategy {
  private readonly unanchored = new LeastLoaded();
  private readonly tolerance: (r: Replica) => number;
  private scores = new Float64Array(8);

  constructor(
    private readonly routing: Pick<Routing, "minPrefixBlocks" | "affinityLoadTolerance">,
    private readonly placement = new PrefixPlacement(),
  ) {
    this.tolerance = (r) => Math.ceil(routing.affinityLoadTolerance * r.maxConcurrency);
  }

  pick(candidates: readonly Replica[], ctx: PickContext, ready: readonly Replica[] = candidates): Replica {
    const anchor = this.anchor(ctx);
    if (anchor === undefined) return this.unanchored.pick(candidates, ctx);
    const gated = withinLoadBound(candidates, this.placement.has(anchor) ? this.tolerance : LEAST_LOADED_ONLY);
    if (this.scores.length < gated.length) this.scores = new Float64Array(gated.length);
    this.placement.score(anchor, gated, ready, this.scores);
    let best = 0;
    for (let i = 1; i < gated.length; i++) if (this.scores[i]! > this.scores[best]!) best = i;
    return gated[best]!;
  }

  chosen(_replica: Replica, ctx: PickContext): void {
    const anchor = this.anchor(ctx);
    if (anchor !== undefined) this.placement.record(anchor);
  }

  private anchor(ctx: PickContext): number | undefined {
    const n = this.routing.minPrefixBlocks;
    return ctx.prefix && ctx.prefix.length >= n ? ctx.prefix[n - 1] : undefined;
  }
}

/**
 * Requests for a LoRA adapter: where it is (routing/scorers.ts AdapterScorer) against queue depth over a span of 2T+1
 * requests, T = ⌈affinityLoadTolerance × cap⌉: a holder wins while it has about T requests more than the least-loaded
 * replica at most; past that another replica loads a second copy, in a free slot or in place of the coldest adapter.
 */
export class AdapterAffinity extends WeightedPicker implements Strategy {
  constructor(routing: Pick<Routing, "affinityLoadTolerance">) {
    super([
      { scorer: new AdapterScorer(), weight: 1 },
      { scorer: new QueueScorer((r) => 2 * Math.ceil(routing.affinityLoadTolerance * r.maxConcurrency) + 1), weight: 1 },
      { scorer: new KvCacheScorer(), weight: KV_TIE_BREAK },
    ]);
  }
}

export function createStrategy(routing: Routing, clock: Clock = systemClock): Strategy {
  switch (routing.strategy) {
    case "round-robin":
      return new RoundRobin();
    case "prefix-affinity":
      return new PrefixAffinity(routing, new PrefixPlacement(clock));
    case "least-loaded":
      return new LeastLoaded();
  }
}
