import { LeastLoaded, PrefixAffinity, RoundRobin } from "../../src/upstream/balancer";
import { readGauge } from "../../src/upstream/load-scraper";
import { prefixHashes, promptText } from "../../src/upstream/prefix-index";
import { Replica } from "../../src/upstream/replica";
import { VirtualClock } from "../sim/virtual-clock";

function replicas(n: number, cap = 8): Replica[] {
  return Array.from({ length: n }, (_, i) => {
    const r = new Replica("m", `http://r${i}`, cap);
    r.markHealthy();
    return r;
  });
}


const longPrompt = (topic: string, question: string) =>
  promptText({ messages: [{ role: "system", content: `${topic} `.repeat(200) }, { role: "user", content: question }] });

describe("strategies", () => {
  it("round-robin cycles through candidates", () => {
    const rs = replicas(3);
    const rr = new RoundRobin();
    expect([0, 1, 2, 3].map(() => rr.pick(rs).url)).toEqual(["http://r0", "http://r1", "http://r2", "http://r0"]);
  });

  it("least-loaded counts the model server's queue as well as the gateway's in-flight requests", () => {
    const [a, b, c] = replicas(3);
    a!.inFlight = 1;
    b!.inFlight = 0;
    b!.recordLoad(5, 0.1, 2); // idle here, but 7 requests run or wait inside that server (other gateway replicas)
    c!.inFlight = 2;
    expect(new LeastLoaded().pick([a!, b!, c!]).url).toBe("http://r0");
  });

  it("prefix-affinity sends every question about one document to the same replica; a document not seen yet goes to its home only while that is as free as any", () => {
    const rs = replicas(4);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const ask = (doc: string, q: string) => {
      const ctx = { prefix: prefixHashes(longPrompt(doc, q)) };
      const r = s.pick(rs, ctx, rs);
      s.chosen(r, ctx);
      return r;
    };
    const home = ask("contract", "clause 1?");
    for (const q of ["clause 2?", "clause 3?", "clause 4?"]) expect(ask("contract", q).url).toBe(home.url);
    // A new document whose home (on idle replicas) is the same replica:
    const probe = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const idle = replicas(4);
    const sameHome = Array.from({ length: 50 }, (_, i) => `invoice${i}`).find((d) => probe.pick(idle, { prefix: prefixHashes(longPrompt(d, "q")) }, idle).url === home.url)!;
    home.inFlight = 1;
    expect(ask(sameHome, "total?").url).not.toBe(home.url); // one more than the least loaded: not worth it for a stranger
    expect(ask("contract", "clause 5?").url).toBe(home.url); // a known document: T = ceil(0.5 x 8) = 4
  });

  it("prefix-affinity gives up the home when it is more than T requests busier than the least-loaded one", () => {
    const rs = replicas(2, 8);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.25 });
    const ctx = { prefix: prefixHashes(longPrompt("manual", "q")) };
    const home = s.pick(rs, ctx, rs);
    s.chosen(home, ctx);
    const other = rs.find((r) => r !== home)!;
    home.inFlight = 2; // T = ceil(0.25 x 8) = 2 more than the least loaded
    expect(s.pick(rs, ctx, rs).url).toBe(home.url);
    home.inFlight = 3;
    expect(s.pick(rs, ctx, rs).url).toBe(other.url);
  });

  it("short prompts are not pinned (below minPrefixBlocks)", () => {
    expect(prefixHashes("short prompt")).toHaveLength(0);
    expect(prefixHashes("x".repeat(128 * 5))).toHaveLength(5);
  });
});

describe("replica", () => {
  it("ignores stale scraped load", () => {
    const clock = new VirtualClock();
    const r = new Replica("m", "http://r0", 4, clock);
    r.markHealthy();
    r.maxWaiting = 1;
    r.recordLoad(10, 0);
    expect(r.saturated).toBe(true);
    r.inFlight = 1;
    expect(r.load).toBe(11); // ours now, plus the 10 that were not ours at the scrape
    r.loadScrapedAt = clock.now() - 60_000;
    expect(r.saturated).toBe(false);
    expect(r.load).toBe(1);
  });
});

describe("load scraping", () => {
  it("reads vLLM gauges, summing label sets and ignoring longer names", () => {
    const text = [
      "# HELP vllm:num_requests_waiting Number of requests waiting.",
      "# TYPE vllm:num_requests_waiting gauge",
      'vllm:num_requests_waiting{model_name="a"} 3',
      'vllm:num_requests_waiting{model_name="b"} 2',
      "vllm:num_requests_waiting_by_reason 99",
      'vllm:kv_cache_usage_perc{model_name="a"} 0.42',
    ].join("\n");
    expect(readGauge(text, "vllm:num_requests_waiting")).toBe(5);
    expect(readGauge(text, "vllm:kv_cache_usage_perc")).toBeCloseTo(0.42);
    expect(readGauge(text, "vllm:num_requests_running")).toBeUndefined();
  });
});
