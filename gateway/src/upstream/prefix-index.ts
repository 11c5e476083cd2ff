/**
 * A prompt's prefix as routing sees it: the prompt is cut into fixed-size character blocks whose hashes are
 * chained, so block i matches only after an identical prefix 0..i; the hash of block `minPrefixBlocks - 1` is the
 * prefix's anchor, the key of its placement (routing/rendezvous.ts).
 */

export const BLOCK_CHARS = 128;

/** FNV-1a over a string's UTF-16 units, seeded with the parent block's hash. */
function fnv1a(text: string, from: number, to: number, seed: number): number {
  let h = seed >>> 0;
  for (let i = from; i < to; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Hashes of the prompt's first full blocks (at most `maxBlocks`), each chained to its predecessor. */
export function prefixHashes(prompt: string, maxBlocks = 256): number[] {
  const blocks = Math.min(maxBlocks, Math.floor(prompt.length / BLOCK_CHARS));
  const out: number[] = new Array<number>(blocks);
  let h = 0x811c9dc5;
  for (let b = 0; b < blocks; b++) {
    h = fnv1a(prompt, b * BLOCK_CHARS, (b + 1) * BLOCK_CHARS, h);
    out[b] = h;
  }
  return out;
}

/**
 * The text a model server's prefix cache sees first: the messages in order (tools after, as templates do), up to
 * about `maxChars` (routing reads only the first blocks; a long prompt is not copied whole for that).
 */
export function promptText(body: Record<string, unknown>, maxChars = Infinity): string {
  const parts: string[] = [];
  let length = 0;
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const m of messages as { role?: unknown; content?: unknown }[]) {
      if (length >= maxChars) break;
      const c = m.content;
      const text = typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => (p as { text?: unknown }).text ?? "").join("") : "";
      const part = `${String(m.role)}\n${text}\n`;
      parts.push(part);
      length += part.length;
    }
  } else if (typeof body.input === "string") parts.push(body.input);
  return parts.join("");
}
