import { PrefixAffinity } from "../../src/upstream/balancer";
import { prefixHashes, promptText } from "../../src/upstream/prefix-index";
import { Replica } from "../../src/upstream/replica";
import { PrefixPlacement } from "../../src/upstream/routing/placement";
import { placementKey, rendezvousWeight } from "../../src/upstream/routing/rendezvous";

/** Replicas as DNS discovery makes them: pod addresses, ready. */
function replicas(urls: readonly string[], cap = 12): Replica[] {
  return urls.map((url) => {
    const r = new Replica("m", url, cap);
    r.markHealthy();
    return r;
  });
}

const podUrls = (n: number, subnet = 7) => Array.from({ length: n }, (_, i) => `http://10.42.${subnet}.${11 + i * 17}:8000`);
const anchors = (n: number) => Array.from({ length: n }, (_, i) => Math.imul(i + 1, 0x9e3779b1) >>> 0);
const doc = (d: number, question: string) => ({ prefix: prefixHashes(promptText({ messages: [{ role: "user", content: `Document ${d}. ${"lorem ipsum ".repeat(120)}\n\n${question}` }] })) });

/** The rendezvous home (highest weight) of each key among `urls`. */
function rendezvousHomes(keys: readonly number[], urls: readonly string[]): string[] {
  const ids = urls.map(placementKey);
  return keys.map((k) => {
    let best = 0;
    for (let i = 1; i < ids.length; i++) if (rendezvousWeight(k, ids[i]!) > rendezvousWeight(k, ids[best]!)) best = i;
    return urls[best]!;
  });
}

/** The balanced home of each anchor, as a fresh pod that routed all of them computes it. */
function balancedHomes(keys: readonly number[], rs: readonly Replica[]): string[] {
  const p = new PrefixPlacement();
  keys.forEach((k) => p.record(k, 0));
  const out = new Float64Array(rs.length);
  return keys.map((k) => {
    p.score(k, rs, rs, out, 1000);
    let best = 0;
    for (let i = 1; i < rs.length; i++) if (out[i]! > out[best]!) best = i;
    return rs[best]!.url;
  });
}

const counts = (homes: readonly string[]) => [...homes.reduce((m, u) => m.set(u, (m.get(u) ?? 0) + 1), new Map<string, number>()).values()];

describe("rendezvous order", () => {
  const keys = anchors(20_000);

  it("spreads keys evenly and does not depend on the order replicas are listed in", () => {
    const urls = podUrls(4);
    const homes = rendezvousHomes(keys, urls);
    for (const n of counts(homes)) expect(Math.abs(n / keys.length - 0.25)).toBeLessThan(0.02);
    expect(rendezvousHomes(keys, [...urls].reverse())).toEqual(homes);
  });

  it("a replica leaving moves only the keys it held; one joining takes about 1/n and moves nothing else", () => {
    const urls = podUrls(5);
    const four = rendezvousHomes(keys, urls.slice(0, 4));
    const three = rendezvousHomes(keys, urls.slice(0, 3));
    four.forEach((u, i) => {
      if (u !== urls[3]) expect(three[i]).toBe(u);
    });
    const five = rendezvousHomes(keys, urls);
    const moved = four.filter((u, i) => five[i] !== u).length;
    expect(five.filter((u, i) => four[i] !== u).every((u) => u === urls[4])).toBe(true);
    expect(Math.abs(moved / keys.length - 0.2)).toBeLessThan(0.02);
  });
});

describe("balanced homes", () => {
  it("8 shared documents on 4 replicas: 2 each, whatever the replicas' addresses (rendezvous alone piles 3 or more on one)", () => {
    const docs = anchors(8);
    let unevenByHashing = 0;
    for (let subnet = 0; subnet < 20; subnet++) {
      const rs = replicas(podUrls(4, subnet));
      expect(counts(balancedHomes(docs, rs)).sort()).toEqual([2, 2, 2, 2]);
      if (Math.max(...counts(rendezvousHomes(docs, rs.map((r) => r.url)))) >= 3) unevenByHashing++;
    }
    expect(unevenByHashing).toBeGreaterThan(5);
  });

  it("a replica leaving moves only its prefixes; one joining takes its share and moves few others", () => {
    const keys = anchors(400);
    const urls = podUrls(5);
    const four = balancedHomes(keys, replicas(urls.slice(0, 4)));
    const three = balancedHomes(keys, replicas(urls.slice(0, 3)));
    const movedOnLeave = four.filter((u, i) => u !== urls[3] && three[i] !== u).length;
    // Balancing adds a short cascade (a prefix that had spilled may now fit its first choice): a few percent.
    expect(movedOnLeave).toBeLessThanOrEqual(keys.length * 0.05);
    const five = balancedHomes(keys, replicas(urls));
    const toNew = five.filter((u) => u === urls[4]).length;
    const moved = four.filter((u, i) => five[i] !== u).length;
    expect(toNew).toBe(keys.length / 5);
    expect(moved).toBeLessThanOrEqual(toNew * 1.15);
  });
});

describe("two gateway pods", () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000, doNotFake: ["nextTick", "setImmediate"] }));
  afterEach(() => jest.useRealTimers());

  /** One pod's strategy routing `questions` in the given order; returns the replica it picks for each document afterwards. */
  function pod(urls: readonly string[], arrivals: readonly number[]): string[] {
    const rs = replicas(urls);
    const s = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    for (const [i, d] of arrivals.entries()) {
      const ctx = doc(d, `question ${i}`);
      s.chosen(s.pick(rs, ctx, rs), ctx);
      jest.advanceTimersByTime(100);
    }
    jest.advanceTimersByTime(1000);
    return Array.from({ length: 12 }, (_, d) => s.pick(rs, doc(d, "and one more?"), rs).url);
  }

  it("pick the same replica for the same prefix, given the same replicas, whatever order each saw the traffic in", () => {
    const urls = podUrls(4, 3);
    const traffic = Array.from({ length: 60 }, (_, i) => (i * 7) % 12);
    const a = pod(urls, traffic);
    const b = pod([...urls].reverse(), [...traffic].reverse());
    expect(b).toEqual(a);
    expect(new Set(a).size).toBe(4); // and the 12 documents are spread over all four
  });

  it("a pod that has not seen a document yet sends it where the others do, while that replica is about as free as any", () => {
    const urls = podUrls(4, 9);
    const seasoned = pod(urls, Array.from({ length: 40 }, (_, i) => i % 12));
    const fresh = new PrefixAffinity({ minPrefixBlocks: 4, affinityLoadTolerance: 0.5 });
    const rs = replicas(urls);
    // A fresh pod places each prefix by its rendezvous order alone; the seasoned pod's balanced homes agree for most.
    const agree = Array.from({ length: 12 }, (_, d) => fresh.pick(rs, doc(d, "first?"), rs).url === seasoned[d]).filter(Boolean).length;
    expect(agree).toBeGreaterThanOrEqual(6);
  });
});
