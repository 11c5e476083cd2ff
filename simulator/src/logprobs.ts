import { createPrng, hashString, type Prng } from "./prng";
import { VOCABULARY } from "./text-generator";

/**
 * Log probabilities of generated tokens, in vLLM's two wire shapes (`_create_chat_logprobs` in the chat server,
 * `_create_completion_logprobs` in the completions server). Synthetic but well-formed: each position's
 * distribution gives the chosen token at least half the mass (greedy, so it heads its top list), the alternatives
 * share the rest in descending order, every value is a log of a probability (≤ 0) and the whole is a function of
 * the tokens, so a deterministic answer has deterministic log probabilities.
 */

/** vLLM's default `--max-logprobs`: the most alternatives a request may ask for. */
export const MAX_LOGPROBS = 20;

export interface Candidate {
  token: string;
  logprob: number;
}

/** One position: the chosen token and its `top` list (the chosen first when any are asked for). */
export interface TokenLogprob extends Candidate {
  top: Candidate[];
}

const PUNCTUATION = [".", ",", ";", ":", "!", "?", "-", "'"];

/** The log probabilities of `tokens`, each with `topN` candidates (0 to MAX_LOGPROBS). */
export function tokenLogprobs(tokens: readonly string[], topN: number): TokenLogprob[] {
  const prng = createPrng(hashString(tokens.join("\u0001")));
  return tokens.map((token) => position(token, topN, prng));
}

function position(token: string, topN: number, prng: Prng): TokenLogprob {
  const chosen = 0.5 + 0.49 * prng.next();
  const others: number[] = [];
  let rest = 1 - chosen;
  for (let i = 1; i < topN; i++) {
    const share = rest * (0.2 + 0.5 * prng.next());
    others.push(share);
    rest -= share;
  }
  others.sort((a, b) => b - a);
  const logprob = Math.log(chosen);
  const names = alternatives(token, topN - 1, prng);
  const top = topN === 0 ? [] : [{ token, logprob }, ...others.map((p, i) => ({ token: names[i] as string, logprob: Math.log(p) }))];
  return { token, logprob, top };
}

/** `count` tokens unlike `token` and each other, spelt as it is (a leading space, a capital). */
function alternatives(token: string, count: number, prng: Prng): string[] {
  const space = /^\s/.test(token) ? " " : "";
  const capital = /^\s*\p{Lu}/u.test(token);
  const pool = [...VOCABULARY.map((w) => space + (capital ? w.charAt(0).toUpperCase() + w.slice(1) : w)), ...PUNCTUATION].filter((t) => t !== token);
  // A partial Fisher-Yates shuffle: distinct picks, bounded work.
  for (let i = 0; i < count && i < pool.length; i++) {
    const j = i + Math.floor(prng.next() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j] as string, pool[i] as string];
  }
  return pool.slice(0, count);
}

const utf8 = (token: string): number[] => [...Buffer.from(token, "utf8")];

/** Chat's `choices[].logprobs`: `{content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}`. */
export function chatLogprobs(positions: readonly TokenLogprob[]) {
  return {
    content: positions.map((p) => ({
      token: p.token,
      logprob: p.logprob,
      bytes: utf8(p.token),
      top_logprobs: p.top.map((c) => ({ token: c.token, logprob: c.logprob, bytes: utf8(c.token) })),
    })),
  };
}

/** A prompt token echoed back: vLLM has no log probability for the first (nothing precedes it). */
export interface EchoedToken {
  token: string;
  logprob: null;
}

/**
 * Legacy completions' `choices[].logprobs`. `top_logprobs` maps token to log probability: the chosen token and the
 * N best (one entry for `logprobs: 0`, as vLLM always includes the sampled token); `text_offset` counts characters
 * from `firstOffset`.
 */
export function completionLogprobs(positions: readonly (TokenLogprob | EchoedToken)[], firstOffset: number) {
  const text_offset: number[] = [];
  let offset = firstOffset;
  for (const p of positions) {
    text_offset.push(offset);
    offset += [...p.token].length;
  }
  return {
    text_offset,
    token_logprobs: positions.map((p) => p.logprob),
    tokens: positions.map((p) => p.token),
    top_logprobs: positions.map((p) => {
      if (p.logprob === null) return null;
      const top = p.top.length > 0 ? p.top : [{ token: p.token, logprob: p.logprob }];
      return Object.fromEntries(top.map((c) => [c.token, c.logprob]));
    }),
  };
}
