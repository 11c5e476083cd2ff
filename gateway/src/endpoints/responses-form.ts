/**
 * The Responses API's objects in the published schema's form (docs/gateway-api.md, "Conformance"), where vLLM's
 * differ in form only: the required `error` present (null: none), a function tool's required `strict` (null), `text` left out when null (optional, and not
 * nullable), an output text's `logprobs` an empty list rather than null, and the input tokens' `cache_write_tokens`
 * 0 when absent (required; vLLM writes no prompt cache entries that are billed as such, so 0 is true). vLLM's per-turn
 * usage lists are dropped too: the schema has numbers only there, and the OpenAI Agents SDK throws on a list.
 * Each function changes its object in place and says whether it changed anything (it is then re-serialized).
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** An output content part (or any object with `logprobs`) of type output_text: null logprobs become []. */
export function normalizePart(part: unknown): boolean {
  if (!isObj(part) || part.type !== "output_text" || part.logprobs !== null) return false;
  part.logprobs = [];
  return true;
}

/** An output item: its content parts. */
export function normalizeItem(item: unknown): boolean {
  if (!isObj(item) || !Array.isArray(item.content)) return false;
  let changed = false;
  for (const part of item.content) changed = normalizePart(part) || changed;
  return changed;
}

function normalizeUsage(usage: unknown): boolean {
  if (!isObj(usage)) return false;
  let changed = false;
  for (const details of Object.values(usage)) {
    if (!isObj(details)) continue;
    for (const [k, v] of Object.entries(details)) {
      if (k.endsWith("_per_turn") && Array.isArray(v)) {
        delete details[k];
        changed = true;
      }
    }
  }
  const input = usage.input_tokens_details;
  if (isObj(input) && input.cache_write_tokens === undefined) {
    input.cache_write_tokens = 0;
    changed = true;
  }
  return changed;
}

/** A response object (POST /v1/responses, GET /v1/responses/{id}, the stream events that carry it). */
export function normalizeResponse(response: unknown): boolean {
  if (!isObj(response)) return false;
  let changed = normalizeUsage(response.usage);
  if (!("error" in response)) {
    response.error = null;
    changed = true;
  }
  if (response.text === null) {
    delete response.text;
    changed = true;
  }
  if (Array.isArray(response.output)) for (const item of response.output) changed = normalizeItem(item) || changed;
  // A function tool's `strict` is required (null: not said); vLLM echoes the tool without it.
  if (Array.isArray(response.tools)) {
    for (const tool of response.tools) {
      if (isObj(tool) && tool.type === "function" && !("strict" in tool)) {
        tool.strict = null;
        changed = true;
      }
    }
  }
  return changed;
}

/** One stream event's payload: the response, item or part it carries. */
export function normalizeEvent(event: Obj): boolean {
  let changed = normalizeResponse(event.response);
  changed = normalizeItem(event.item) || changed;
  changed = normalizePart(event.part) || changed;
  if (event.logprobs === null && typeof event.type === "string" && event.type.startsWith("response.output_text.")) {
    event.logprobs = [];
    changed = true;
  }
  return changed;
}
