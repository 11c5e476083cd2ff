import type { Prng } from "./prng";

/**
 * Synthetic model output: sentences from a fixed vocabulary, produced as one-token pieces so that
 * streaming sends exactly one token per chunk and re-tokenizing the text gives the same count.
 */

/** The words of the synthetic text (log probabilities draw their alternatives from it too). */
export const VOCABULARY: readonly string[] = [
  "the", "model", "server", "answer", "request", "token", "stream", "cache", "prefix", "latency",
  "gateway", "cluster", "replica", "queue", "batch", "kernel", "memory", "block", "context", "prompt",
  "sample", "value", "result", "system", "simple", "quick", "steady", "careful", "useful", "clear",
  "is", "was", "can", "will", "should", "may", "returns", "holds", "sends", "keeps",
  "and", "or", "but", "with", "for", "from", "into", "over", "under", "about",
  "a", "an", "this", "that", "every", "some", "many", "few", "each", "most",
  "data", "signal", "metric", "route", "policy", "limit", "budget", "report", "record", "window",
];

/** Generates `count` pieces of sentence-like text; the first piece has no leading space. */
export function generateTextPieces(prng: Prng, count: number): string[] {
  const pieces: string[] = [];
  let sentenceLength = 0;
  let sentenceTarget = prng.int(5, 14);
  while (pieces.length < count) {
    const remaining = count - pieces.length;
    if (sentenceLength >= sentenceTarget || (remaining === 1 && sentenceLength > 0)) {
      pieces.push(".");
      sentenceLength = 0;
      sentenceTarget = prng.int(5, 14);
      continue;
    }
    if (sentenceLength >= 3 && sentenceLength < sentenceTarget - 2 && prng.next() < 0.08) {
      pieces.push(",");
      continue;
    }
    let word = prng.pick(VOCABULARY);
    if (sentenceLength === 0) word = word.charAt(0).toUpperCase() + word.slice(1);
    pieces.push(pieces.length === 0 ? word : ` ${word}`);
    sentenceLength++;
  }
  return pieces;
}

/** A random lowercase word from the vocabulary (for tool-call string arguments). */
export function randomWord(prng: Prng): string {
  return prng.pick(VOCABULARY);
}

/**
 * Cuts the pieces where the earliest stop sequence begins, like vLLM (stop string not included).
 * Returns the kept pieces (the last one possibly partial) and whether a stop sequence matched.
 */
export function truncateAtStop(pieces: readonly string[], stops: readonly string[]): { pieces: string[]; stopped: boolean } {
  if (stops.length === 0) return { pieces: [...pieces], stopped: false };
  const text = pieces.join("");
  let cut = -1;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at !== -1 && (cut === -1 || at < cut)) cut = at;
  }
  if (cut === -1) return { pieces: [...pieces], stopped: false };
  const kept: string[] = [];
  let offset = 0;
  for (const piece of pieces) {
    if (offset + piece.length <= cut) {
      kept.push(piece);
      offset += piece.length;
      continue;
    }
    const partial = piece.slice(0, cut - offset);
    if (partial.length > 0) kept.push(partial);
    break;
  }
  return { pieces: kept, stopped: true };
}
