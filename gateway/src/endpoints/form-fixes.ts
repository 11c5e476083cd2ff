/**
 * Where vLLM's answers differ from OpenAI's published schema in form only, the gateway puts them in the schema's
 * form (docs/gateway-api.md, "Conformance"): a `null` where the schema wants an empty array becomes `[]`, a `null`
 * in an optional member the schema does not let be null is left out. Nothing whose meaning would change, and no
 * value the gateway does not know.
 *
 * The fixes work on the answer's text, without a parse: vLLM writes compact JSON (pydantic), and inside a JSON
 * string every quote is escaped, so `"annotations":null` can only be that member. One `replaceAll` per fix over a
 * few KiB: the hot path pays no parse and no re-serialization.
 */
export interface TextFix {
  /** What vLLM writes. */
  readonly find: string;
  /** What the schema wants instead. */
  readonly replace: string;
}

/** `"member":null` → `"member":[]`: the schema wants an array, `null` meant none. */
export function nullToEmptyList(member: string): TextFix[] {
  return [{ find: `"${member}":null`, replace: `"${member}":[]` }];
}

/** `"member":null` left out: an optional member whose schema does not allow null. */
export function dropNull(member: string): TextFix[] {
  // As a later member (after a comma), or the first of its object (before one).
  return [
    { find: `,"${member}":null`, replace: "" },
    { find: `{"${member}":null,`, replace: "{" },
    { find: `{"${member}":null}`, replace: "{}" },
  ];
}

/** Applies `fixes` to `text`; the same string when none applied (the caller then sends the model server's bytes). */
export function applyFixes(text: string, fixes: readonly TextFix[]): string {
  let out = text;
  for (const f of fixes) if (out.includes(f.find)) out = out.replaceAll(f.find, f.replace);
  return out;
}

/** Usage objects (chat, completions, embeddings): vLLM writes `prompt_tokens_details: null` when it has no details. */
export const USAGE_FIXES: readonly TextFix[] = dropNull("prompt_tokens_details");

/**
 * A chat choice's logprobs: the schema requires `refusal` beside `content` (null: no refusal); vLLM writes only
 * `content`. Only requests that asked for logprobs carry one.
 */
export const CHAT_LOGPROBS_FIXES: readonly TextFix[] = [{ find: '"logprobs":{"content":', replace: '"logprobs":{"refusal":null,"content":' }];

/** A chat completion: `message.annotations` null (OpenAI sends `[]`), its logprobs, and the usage's details. */
export const CHAT_ANSWER_FIXES: readonly TextFix[] = [...nullToEmptyList("annotations"), ...CHAT_LOGPROBS_FIXES, ...USAGE_FIXES];

/** A legacy completion: `system_fingerprint` null (a string when present), and the usage's details. */
export const COMPLETION_FIXES: readonly TextFix[] = [...dropNull("system_fingerprint"), ...USAGE_FIXES];
