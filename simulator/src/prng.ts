/**
 * Small seeded PRNG and string hashing. Determinism matters more than quality here:
 * the same request must produce the same text on every replica and every run.
 */

/** 32-bit FNV-1a over a string; stable across processes (unlike Math.random or object identity). */
export function hashString(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Combines two 32-bit hashes (for hash chains such as prefix-cache blocks). */
export function combineHashes(a: number, b: number): number {
  let h = (a ^ Math.imul(b, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** Approximately standard normal (sum of uniforms); enough for embedding vectors. */
  normal(): number;
}

/** mulberry32: tiny, fast, good enough for synthetic text and vectors. */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error("pick from empty array");
      return items[Math.floor(next() * items.length)] as T;
    },
    normal: () => next() + next() + next() + next() + next() + next() - 3,
  };
}

/** A fresh random seed for non-deterministic requests. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 4294967296) >>> 0;
}
