import { PrefixAffinity } from "../../src/upstream/balancer";
import { PrefixIndex, prefixHashes, promptText } from "../../src/upstream/prefix-index";
import { Replica } from "../../src/upstream/replica";
import { WeightedPicker } from "../../src/upstream/routing/picker";
import { KvCacheScorer, PrefixScorer, QueueScorer } from "../../src/upstream/routing/scorers";

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

const prompt = (doc: string, question: string) => prefixHashes(promptText({ messages: [{ role: "user", content: `${doc} `.repeat(150) + question }] }));

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

  it("prefix match: the share of the prompt's blocks a replica served, none below the minimum", () => {
    const rs = replicas(3);
    const index = new PrefixIndex();
    const full = prompt("manual", "q1");
    index.record(full, rs[0]!.url);
    index.record(full.slice(0, 3), rs[1]!.url);
    const s = scores(new PrefixScorer(index, 4), rs, { prefix: full });
    expect(s[0]).toBe(1);
    expect(s[1]).toBe(0); // 3 blocks: under minPrefixBlocks
    expect(s[2]).toBe(0);
    index.record(full.slice(0, Math.floor(full.length / 2)), rs[2]!.url);
    expect(scores(new PrefixScorer(index, 4), rs, { prefix: full })[2]).toBeCloseTo(Math.floor(full.length / 2) / full.length);
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

describe("prefix-affinity as weights", () => {
  it("never sends a request to a replica far busier than the rest, however warm", () => {
    const rs = replicas(2, 8);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const ctx = { prefix: prompt("contract", "q") };
    s.chosen(rs[0]!, ctx);
    // T = ceil(0.5 x 8) = 4: a whole-prompt match is worth up to 4 requests more than the least loaded.
    for (const [load, url] of [
      [4, "http://r0"],
      [5, "http://r1"],
      [50, "http://r1"],
    ] as const) {
      rs[0]!.inFlight = load;
      expect(s.pick(rs, ctx).url).toBe(url);
    }
  });

  it("a partial match is worth proportionally less load", () => {
    const rs = replicas(2, 8);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const full = prompt("handbook", "q");
    const half = { prefix: full.slice(0, Math.ceil(full.length / 2)) };
    s.chosen(rs[0]!, half);
    rs[0]!.inFlight = 2; // half a match is worth about 2 requests: r0 still wins at 2 more, not at 3
    expect(s.pick(rs, { prefix: full }).url).toBe("http://r0");
    rs[0]!.inFlight = 3;
    expect(s.pick(rs, { prefix: full }).url).toBe("http://r1");
  });
});
