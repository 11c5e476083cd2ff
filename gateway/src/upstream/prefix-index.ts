/**
 * Which replica served a prompt prefix recently: the gateway-side stand-in for the model servers' prefix
 * caches (llm-d's approximate prefix scorer, production-stack's `prefixaware` router do the same).
 * A prompt is cut into fixed-size character blocks whose hashes are chained, so block i matches only
 * after an identical prefix 0..i. Bounded LRU: old prefixes fall out as they do from a KV cache.
 */

export const BLOCK_CHARS = 128;
const MAX_BLOCKS = 256; // 32 KiB of prompt: enough to tell long shared prefixes apart, bounded work

/** FNV-1a over a string's UTF-16 units, seeded with the parent block's hash. */
function fnv1a(text: string, from: number, to: number, seed: number): number {
  let h = seed >>> 0;
  for (let i = from; i < to; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Hashes of the prompt's full blocks, each chained to its predecessor. */
export function prefixHashes(prompt: string): number[] {
  const blocks = Math.min(MAX_BLOCKS, Math.floor(prompt.length / BLOCK_CHARS));
  const out: number[] = new Array<number>(blocks);
  let h = 0x811c9dc5;
  for (let b = 0; b < blocks; b++) {
    h = fnv1a(prompt, b * BLOCK_CHARS, (b + 1) * BLOCK_CHARS, h);
    out[b] = h;
  }
  return out;
}

/** The text a model server's prefix cache sees first: the messages in order (tools after, as templates do). */
export function promptText(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const m of messages as { role?: unknown; content?: unknown }[]) {
      const c = m.content;
      const text = typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => (p as { text?: unknown }).text ?? "").join("") : "";
      parts.push(`${String(m.role)}\n${text}\n`);
    }
  } else if (typeof body.input === "string") parts.push(body.input);
  return parts.join("");
}

export class PrefixIndex {
  private readonly owners = new Map<number, string>();

  constructor(private readonly capacity = 100_000) {}

  /** Owners of the matched leading blocks, deepest first (the deepest match is the warmest cache). */
  matchOwners(hashes: readonly number[]): { owner: string; blocks: number }[] {
    const out: { owner: string; blocks: number }[] = [];
    for (let i = 0; i < hashes.length; i++) {
      const owner = this.owners.get(hashes[i]!);
      if (owner === undefined) break;
      out.push({ owner, blocks: i + 1 });
    }
    return out.reverse();
  }

  record(hashes: readonly number[], owner: string): void {
    for (const h of hashes) {
      this.owners.delete(h); // re-insert: Map order is recency order
      this.owners.set(h, owner);
    }
    while (this.owners.size > this.capacity) this.owners.delete(this.owners.keys().next().value!);
  }

  get size(): number {
    return this.owners.size;
  }
}
