import { createPrng, hashString } from "./prng";
import type { EmbeddingInput } from "./requests/embeddings-request";
import { tokenize } from "./tokenizer";

/**
 * Deterministic unit-length embeddings: the normalized sum of one pseudo-random vector per token, so the
 * same input always gives the same vector and inputs sharing words point in similar directions.
 */

/** Token keys for an input (text tokens lowercased; ids kept distinct from words). */
export function embeddingTokens(input: EmbeddingInput): string[] {
  return input.kind === "text" ? tokenize(input.text).map((t) => t.toLowerCase()) : input.ids.map((id) => `#${id}`);
}

export function embedTokens(tokens: readonly string[], dimensions: number): Float32Array {
  const sum = new Float64Array(dimensions);
  // An empty input still needs a stable direction of its own.
  const keys = tokens.length > 0 ? tokens : ["\u0000empty"];
  for (const key of keys) {
    const prng = createPrng(hashString(key));
    for (let d = 0; d < dimensions; d++) sum[d] = (sum[d] ?? 0) + (prng.next() * 2 - 1);
  }
  let norm = 0;
  for (let d = 0; d < dimensions; d++) norm += (sum[d] ?? 0) ** 2;
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(dimensions);
  for (let d = 0; d < dimensions; d++) out[d] = (sum[d] ?? 0) / norm;
  return out;
}

/** Little-endian float32 bytes, base64: what openai-node's `toFloat32Array` and openai-python decode. */
export function toBase64Float32(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString("base64");
}
