import { Replica } from "../../src/upstream/replica";
import { WeightedPicker } from "../../src/upstream/routing/picker";
import { KvCacheScorer, QueueScorer } from "../../src/upstream/routing/scorers";

function replicas(n: number, cap = 8): Replica[] {
  return Array.from({ length: n }, (_, i) => {
    const r = new Replica("m", `http://r${i}`, cap);
    r.markHealthy();
    return r;
  });
}

const scores = (scorer: { score(c: readonly Replica[], ctx: object, out: Float64Array): void }, rs: Replica[], ctx = {}) => {
  const out = new Float64Array(rs.length);
  scorer.score(rs, ctx, out);
  return [...out];
};

describe("scorers rate in [0, 1]", () => {
  it("queue depth: 1 for the least loaded, falling by load over the span, 0 beyond it", () => {
    const rs = replicas(3);
    [2, 4, 9].forEach((n, i) => (rs[i]!.inFlight = n));
    expect(scores(new QueueScorer(() => 4), rs)).toEqual([1, 0.5, 0]);
  });

  it("KV-cache room: 1 minus the reported use", () => {
    const rs = replicas(2);
    rs[0]!.recordLoad(0, 0.25);
    expect(scores(new KvCacheScorer(), rs)).toEqual([0.75, 1]);
  });
});

describe("the weighted picker", () => {
  it("with no scorer rotates: round-robin", () => {
    const rs = replicas(3);
    const p = new WeightedPicker([]);
    expect([0, 1, 2, 3, 4].map(() => p.pick(rs).url)).toEqual(["http://r0", "http://r1", "http://r2", "http://r0", "http://r1"]);
  });

  it("takes the best weighted sum", () => {
    const rs = replicas(2);
    rs[0]!.inFlight = 1;
    rs[1]!.recordLoad(0, 0.9);
    // Load outweighs KV-cache room 2 to 1: r1 (least loaded, cache nearly full) wins; 1 to 2: r0 wins.
    expect(new WeightedPicker([{ scorer: new QueueScorer(() => 1), weight: 2 }, { scorer: new KvCacheScorer(), weight: 1 }]).pick(rs).url).toBe("http://r1");
    expect(new WeightedPicker([{ scorer: new QueueScorer(() => 1), weight: 1 }, { scorer: new KvCacheScorer(), weight: 2 }]).pick(rs).url).toBe("http://r0");
  });
});
