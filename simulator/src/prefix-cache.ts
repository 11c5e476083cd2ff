import { combineHashes, hashString } from "./prng";

/** What a request finds in the cache: how many prompt tokens it reuses, and when the last of them is computed. */
export interface CacheMatch {
  tokens: number;
  /** Monotonic ms when every reused block's KV exists (0: already). */
  readyAtMs: number;
}

/**
 * Automatic prefix caching as in vLLM v1: the prompt is cut into full blocks of `blockSize` tokens,
 * each block identified by a hash chained with its parent's (so a block only matches after an identical
 * prefix). Blocks live in an LRU of `capacityBlocks`; a request reuses its longest cached leading run.
 * vLLM registers a block's hash when it schedules the step that computes it (kv_cache_manager.allocate_slots
 * caches up to the tokens of that step), so a request arriving while another computes the same prefix reuses it
 * once that step is done instead of computing it again: a block here carries the time its KV is ready.
 */
export class PrefixCache {
  /** Block hash -> when its KV is computed. Insertion order doubles as recency order: re-inserting moves it to the end. */
  private readonly lru = new Map<number, number>();

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
  match(hashes: readonly number[], promptTokenCount: number): CacheMatch {
    let hits = 0;
    let readyAtMs = 0;
    for (const h of hashes) {
      const ready = this.lru.get(h);
      if (ready === undefined) break;
      this.touch(h, ready);
      readyAtMs = Math.max(readyAtMs, ready);
      hits++;
    }
    if (hits > 0 && hits * this.blockSize >= promptTokenCount) hits--;
    return { tokens: hits * this.blockSize, readyAtMs };
  }

  /**
   * Registers the prompt's blocks as computed at `readyAtMs` (when the request's prefill is scheduled), evicting
   * least-recently used ones beyond capacity. Blocks already cached keep their earlier time.
   */
  insert(hashes: readonly number[], readyAtMs = 0): void {
    for (const h of hashes) this.touch(h, Math.min(this.lru.get(h) ?? readyAtMs, readyAtMs));
    while (this.lru.size > this.capacityBlocks) {
      const oldest = this.lru.keys().next();
      if (oldest.done) break;
      this.lru.delete(oldest.value);
    }
  }

  /** A prefill abandoned before `readyAtMs`: the blocks it was to compute, and no one else had, are gone. */
  forget(hashes: readonly number[], readyAtMs: number): void {
    for (const h of hashes) if (this.lru.get(h) === readyAtMs) this.lru.delete(h);
  }

  private touch(h: number, readyAtMs: number): void {
    this.lru.delete(h);
    this.lru.set(h, readyAtMs);
  }
}
