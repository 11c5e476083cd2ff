import { combineHashes, hashString } from "./prng";

/**
 * Automatic prefix caching as in vLLM v1: the prompt is cut into full blocks of `blockSize` tokens,
 * each block identified by a hash chained with its parent's (so a block only matches after an identical
 * prefix). Blocks live in an LRU of `capacityBlocks`; a request reuses its longest cached leading run.
 */
export class PrefixCache {
  /** Insertion order doubles as recency order: re-inserting a key moves it to the end. */
  private readonly lru = new Map<number, true>();

  constructor(
    readonly blockSize: number,
    readonly capacityBlocks: number,
  ) {}

  get size(): number {
    return this.lru.size;
  }

  /** `salt` (a LoRA adapter's name) starts the chain elsewhere, as vLLM's extra hash keys do. */
  blockHashes(tokens: readonly string[], salt?: string): number[] {
    const hashes: number[] = [];
    let parent = salt === undefined ? 0x12345678 : combineHashes(0x12345678, hashString(salt));
    const fullBlocks = Math.floor(tokens.length / this.blockSize);
    for (let b = 0; b < fullBlocks; b++) {
      let h = parent;
      for (let i = b * this.blockSize; i < (b + 1) * this.blockSize; i++) h = combineHashes(h, hashString(tokens[i] ?? ""));
      hashes.push(h);
      parent = h;
    }
    return hashes;
  }

  /**
   * Number of prompt tokens served from cache. Like vLLM, at least the last prompt token is always
   * recomputed (it is needed to produce the first output token), so a fully cached prompt drops one block.
   */
  match(hashes: readonly number[], promptTokenCount: number): number {
    let hits = 0;
    for (const h of hashes) {
      if (!this.lru.has(h)) break;
      this.touch(h);
      hits++;
    }
    if (hits > 0 && hits * this.blockSize >= promptTokenCount) hits--;
    return hits * this.blockSize;
  }

  /** Records blocks as computed (after prefill), evicting least-recently used ones beyond capacity. */
  insert(hashes: readonly number[]): void {
    for (const h of hashes) this.touch(h);
    while (this.lru.size > this.capacityBlocks) {
      const oldest = this.lru.keys().next();
      if (oldest.done) break;
      this.lru.delete(oldest.value);
    }
  }

  private touch(h: number): void {
    this.lru.delete(h);
    this.lru.set(h, true);
  }
}
