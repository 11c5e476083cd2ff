import { systemClock, type Clock } from "../../context/clock";
import type { Replica } from "../replica";
import { placementKey, rendezvousWeight } from "./rendezvous";

/** How long a prefix counts after its last request, ms: about as long as a busy replica's KV cache keeps it. */
const WINDOW_MS = 60_000;
/** Recent prefixes the homes are balanced over, at most (the most recent): bounds the work of a recomputation. */
const BALANCED = 4096;
/** Homes are recomputed at most this often, ms; meanwhile a new prefix follows its rendezvous order. */
const RECOMPUTE_MS = 250;
/** Prefixes remembered at most (the least recent are forgotten first). */
const CAPACITY = 50_000;

/**
 * Where each prefix lives, agreed by every gateway pod without talking to the others. A prefix (its anchor: the hash
 * of its first blocks) has an order of replicas, its rendezvous order (rendezvous.ts), the same in every pod. Hashing
 * alone spreads few prefixes unevenly: 8 shared documents on 4 replicas put 4 or more on one replica in 45% of all
 * draws, twice the mean, which its KV cache may not hold. So the prefixes routed in the last minute get balanced homes, by
 * bounded-load consistent hashing over keys: taken in a fixed order (by anchor), each goes to the first replica of its
 * own order holding fewer than ⌈recent prefixes / replicas⌉. The homes depend only on the set of recent prefixes and
 * of ready replicas, and gateway pods behind one Service see the same traffic, so they compute the same homes.
 */
export class PrefixPlacement {
  /** Anchor -> when this pod last routed it; Map order is recency order. */
  private readonly seen = new Map<number, number>();
  private readonly keys = new WeakMap<Replica, number>();
  private homes = new Map<number, number>();
  private homesFor = -1;
  private stale = false;
  private computedAt = -Infinity;

  constructor(private readonly clock: Clock = systemClock) {}

  /** Whether this pod routed the anchor within the window. */
  has(anchor: number, now = this.clock.now()): boolean {
    const last = this.seen.get(anchor);
    return last !== undefined && now - last <= WINDOW_MS;
  }

  record(anchor: number, now = this.clock.now()): void {
    if (!this.homes.has(anchor)) this.stale = true;
    this.seen.delete(anchor);
    this.seen.set(anchor, now);
    if (this.seen.size > CAPACITY) this.seen.delete(this.seen.keys().next().value!);
  }

  /**
   * Rates each candidate for the anchor into `out`, higher first: its rendezvous weight, + 1 for the prefix's balanced
   * home. A prefix new to this pod has none yet: its rendezvous order alone, which is every pod's first guess too.
   * `ready` is every ready replica: homes are balanced over them, not over the ones that happen to have room now.
   */
  score(anchor: number, candidates: readonly Replica[], ready: readonly Replica[], out: Float64Array, now = this.clock.now()): void {
    this.refresh(ready, now);
    const home = this.homes.get(anchor);
    candidates.forEach((r, i) => {
      const key = this.keyOf(r);
      out[i] = (key === home ? 1 : 0) + rendezvousWeight(anchor, key);
    });
  }

  private refresh(ready: readonly Replica[], now: number): void {
    const set = this.signature(ready);
    if (set === this.homesFor && !(this.stale && now - this.computedAt >= RECOMPUTE_MS)) return;
    this.homesFor = set;
    this.stale = false;
    this.computedAt = now;
    const recent: number[] = [];
    for (const [anchor, last] of this.seen) if (now - last <= WINDOW_MS) recent.push(anchor);
    const balanced = recent.slice(-BALANCED).sort((a, b) => a - b);
    const cap = Math.ceil(balanced.length / Math.max(1, ready.length));
    const taken = new Map<number, number>();
    this.homes = new Map();
    for (const anchor of balanced) {
      const home = this.homeOf(anchor, ready, taken, cap);
      if (home === undefined) break;
      taken.set(home, (taken.get(home) ?? 0) + 1);
      this.homes.set(anchor, home);
    }
  }

  /** The first replica of the anchor's rendezvous order with fewer than `cap` prefixes in `taken`. */
  private homeOf(anchor: number, ready: readonly Replica[], taken: ReadonlyMap<number, number>, cap: number): number | undefined {
    let best: number | undefined;
    let bestWeight = -1;
    for (const r of ready) {
      const key = this.keyOf(r);
      const weight = rendezvousWeight(anchor, key);
      if (weight > bestWeight && (taken.get(key) ?? 0) < cap) {
        best = key;
        bestWeight = weight;
      }
    }
    return best;
  }

  /** An order-independent signature of the ready set: a change of membership recomputes the homes. */
  private signature(ready: readonly Replica[]): number {
    let sum = 0;
    let xor = 0;
    for (const r of ready) {
      const k = this.keyOf(r);
      sum = (sum + k) >>> 0;
      xor ^= Math.imul(k, 0x9e3779b1);
    }
    return (sum ^ Math.imul(xor, 31) ^ ready.length) >>> 0;
  }

  private keyOf(r: Replica): number {
    let key = this.keys.get(r);
    if (key === undefined) this.keys.set(r, (key = placementKey(r.url)));
    return key;
  }
}
