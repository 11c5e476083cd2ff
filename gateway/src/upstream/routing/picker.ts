import type { Replica } from "../replica";
import type { PickContext, Scorer } from "./scorers";

export interface WeightedScorer {
  scorer: Scorer;
  weight: number;
}

/** Scores closer than this are a tie (floating-point sums of the same terms in another order). */
const TIE = 1e-9;

/**
 * The one picker: the candidate with the highest weighted sum of scores; ties rotate, so with no scorer at all
 * it is round-robin. Candidates are what the filters left (ready, not excluded, not saturated: model-pool.ts).
 */
export class WeightedPicker {
  private rotation = 0;
  private scratch = new Float64Array(8);
  private totals = new Float64Array(8);

  constructor(private readonly scorers: readonly WeightedScorer[]) {}

  pick(candidates: readonly Replica[], ctx: PickContext = {}): Replica {
    const n = candidates.length;
    const start = this.rotation;
    this.rotation = (this.rotation + 1) % 1_000_000;
    if (n === 1 || this.scorers.length === 0) return candidates[start % n]!;
    if (this.totals.length < n) {
      this.totals = new Float64Array(n);
      this.scratch = new Float64Array(n);
    }
    this.totals.fill(0, 0, n);
    for (const { scorer, weight } of this.scorers) {
      scorer.score(candidates, ctx, this.scratch);
      for (let i = 0; i < n; i++) this.totals[i]! += weight * this.scratch[i]!;
    }
    let best = start % n;
    for (let k = 1; k < n; k++) {
      const i = (start + k) % n;
      if (this.totals[i]! > this.totals[best]! + TIE) best = i;
    }
    return candidates[best]!;
  }
}
