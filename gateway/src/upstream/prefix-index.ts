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

/** Replicas recorded per block; a prefix hot enough to spill over lives on a few replicas at once. */
const MAX_OWNERS = 4;

export class PrefixIndex {
  /** block hash -> replicas that computed it, most recent last. */
  private readonly owners = new Map<number, string[]>();

  constructor(private readonly capacity = 100_000) {}

  /** For each replica holding the first block: how many leading blocks it holds (its warm prefix length). */
  matchedBlocks(hashes: readonly number[]): Map<string, number> {
    const out = new Map<string, number>();
    if (hashes.length === 0) return out;
    for (const owner of this.owners.get(hashes[0]!) ?? []) out.set(owner, 1);
    for (let i = 1; i < hashes.length && out.size > 0; i++) {
      const here = this.owners.get(hashes[i]!);
      let any = false;
      for (const [owner, n] of out) {
        if (n === i && here?.includes(owner)) {
          out.set(owner, i + 1);
          any = true;
        }
      }
      if (!any) break;
    }
    return out;
  }

  record(hashes: readonly number[], owner: string): void {
    for (const h of hashes) {
      const list = this.owners.get(h) ?? [];
      const at = list.indexOf(owner);
      if (at >= 0) list.splice(at, 1);
      list.push(owner);
      if (list.length > MAX_OWNERS) list.shift();
      this.owners.delete(h); // re-insert: Map order is recency order
      this.owners.set(h, list);
    }
    while (this.owners.size > this.capacity) this.owners.delete(this.owners.keys().next().value!);
  }

  get size(): number {
    return this.owners.size;
  }
}
