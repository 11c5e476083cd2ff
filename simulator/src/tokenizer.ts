/**
 * A dummy tokenizer like llm-d sim's `--force-dummy-tokenizer`: words and single punctuation marks.
 * Token counts only need to be consistent (usage, max_model_len, prefix-cache blocks), not model-exact.
 */

const TOKEN_PATTERN = /[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu;

/** The tokens of a text, without whitespace. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN_PATTERN) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

/**
 * Splits text into pieces that concatenate back to exactly the input, one token per piece
 * (leading whitespace is carried by the following token). Used to stream arbitrary text token by token.
 */
export function splitIntoTokenPieces(text: string): string[] {
  const pieces = text.match(/\s*(?:[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s])|\s+$/gu) ?? [];
  return pieces;
}
