import { promptText } from "../upstream/prefix-index";
import { ChatCompletionRequestSchema, type ChatCompletionRequest } from "../api/schemas";
import { asUsage, type EndpointRequest, type EndpointSpec, type StreamEventFacts, type UsageWanted } from "./spec";
import { applyFixes, CHAT_ANSWER_FIXES, CHAT_LOGPROBS_FIXES, USAGE_FIXES, type TextFix } from "./form-fixes";
import { cutUsage, isUsageOnly } from "./stream-usage";

const COMMA = 44;

/**
 * Whether an OpenAI-style chunk carries generated output: content deltas carry text (the role-only first chunk,
 * content "", does not count), tool-call deltas carry arguments.
 */
export function chunkHasToken(data: string): boolean {
  return (data.includes('"content":"') && !data.includes('"content":""')) || data.includes('"tool_calls"');
}

/** How one endpoint's chunks are put in the published schema's form: on their text, or on a parsed chunk. */
export interface ChunkForm {
  /** Fixes of every chunk's text (form-fixes.ts). */
  readonly text: readonly TextFix[];
  /** The same fixes and those of a usage the client gets. */
  readonly withUsage: readonly TextFix[];
  /** The same on a parsed chunk; true when it changed it. */
  object(chunk: Record<string, unknown>): boolean;
}

/** Chat chunks: a choice's logprobs get their `refusal` (chat-completions' CHAT_LOGPROBS_FIXES). */
export const CHAT_CHUNK_FORM: ChunkForm = {
  text: CHAT_LOGPROBS_FIXES,
  withUsage: [...CHAT_LOGPROBS_FIXES, ...USAGE_FIXES],
  object: (chunk) => fixUsageDetails(chunk.usage) + fixChoiceLogprobs(chunk.choices) > 0,
};

/** A usage's null details left out; 1 when changed. */
export function fixUsageDetails(usage: unknown): number {
  if (!usage || typeof usage !== "object" || (usage as Record<string, unknown>).prompt_tokens_details !== null) return 0;
  delete (usage as Record<string, unknown>).prompt_tokens_details;
  return 1;
}

function fixChoiceLogprobs(choices: unknown): number {
  let changed = 0;
  if (!Array.isArray(choices)) return 0;
  for (const c of choices as { logprobs?: unknown }[]) {
    const lp = c?.logprobs as Record<string, unknown> | null | undefined;
    if (lp && typeof lp === "object" && "content" in lp && !("refusal" in lp)) {
      lp.refusal = null;
      changed++;
    }
  }
  return changed;
}

/**
 * Facts of an OpenAI-style chunk stream (chat and text completions). The gateway asks for the usage on every
 * chunk (`continuous_usage_stats`), so a stream the client cuts still says what it used; each chunk's running
 * usage is cut out again unless the client asked for it, and the usage-only chunk that ends the stream is dropped
 * unless it asked for that. Token chunks are not parsed: the usage member is cut from their text, and the chunk
 * put in the schema's form there too (`form`).
 */
export function completionChunkFacts(data: string, parsed: Record<string, unknown> | undefined, wanted: UsageWanted, hasToken = chunkHasToken, form: ChunkForm = CHAT_CHUNK_FORM): StreamEventFacts {
  if (!parsed) {
    const cut = cutUsage(data);
    let facts: StreamEventFacts;
    if (!cut) facts = { token: hasToken(data), drop: false };
    else if (isUsageOnly(data)) facts = { token: false, drop: !wanted, usage: cut.usage };
    else facts = { token: hasToken(cut.rest), drop: false, usage: cut.usage, send: wanted === "every chunk" ? undefined : cut.rest };
    if (facts.drop) return facts;
    const text = facts.send ?? data;
    const fixed = applyFixes(text, cut && wanted ? form.withUsage : form.text);
    if (fixed !== text) facts.send = fixed;
    return facts;
  }
  // Parsed anyway (the model is renamed, or it may be an error): the same decisions on the object.
  const usage = parsed.usage ? asUsage(parsed.usage) : undefined;
  const choices = parsed.choices;
  const usageOnly = usage !== undefined && Array.isArray(choices) && choices.length === 0;
  const strip = usage !== undefined && !usageOnly && wanted !== "every chunk";
  if (strip) delete parsed.usage;
  const fixed = form.object(parsed);
  // A parsed chunk counts as a token on any content (as it always has: "" included).
  const token = hasToken === chunkHasToken ? data.includes('"content":"') || data.includes('"tool_calls"') : hasToken(data);
  return { token: token && !usageOnly, drop: usageOnly && !wanted, usage, rewritten: strip || fixed };
}

/**
 * The OpenAI conventions both chat and embeddings follow for `stream` and `stream_options`: a stream always asks
 * for the usage, on every chunk (see completionChunkFacts); a member the gateway acts on that the client
 * repeated is rewritten too (the gateway decided on JSON.parse's value, the last; a model server keeping the
 * first would otherwise stream to a client expecting JSON).
 */
export const openAiStreaming = {
  streams: (r: EndpointRequest) => r.stream === true,
  upstreamMembers(r: EndpointRequest, repeated: ReadonlySet<string>): Record<string, string> {
    const replace: Record<string, string> = {};
    if (r.stream === true) replace.stream_options = JSON.stringify({ ...(r.stream_options ?? {}), include_usage: true, continuous_usage_stats: true });
    else if (repeated.has("stream_options")) replace.stream_options = JSON.stringify(r.stream_options ?? null);
    if (repeated.has("stream")) replace.stream = JSON.stringify(r.stream ?? null);
    return replace;
  },
  clientWantsUsage(r: EndpointRequest): UsageWanted {
    if (r.stream !== true || r.stream_options == null || r.stream_options.include_usage === false) return false;
    return r.stream_options.continuous_usage_stats === true ? "every chunk" : true;
  },
  usageOf: (answer: Record<string, unknown>) => asUsage(answer.usage),
  streamEvent: (data: string, parsed: Record<string, unknown> | undefined, wanted: UsageWanted) => completionChunkFacts(data, parsed, wanted),
  // Usage is cut from the text (cutUsage) where vLLM puts it, after another member; elsewhere the chunk is parsed.
  // Searched from the end, where vLLM writes it: one short search an event instead of two over the whole chunk.
  mayCarryUsage: (data: string) => {
    const at = data.lastIndexOf('"usage":{');
    return at >= 0 && data.charCodeAt(at - 1) !== COMMA;
  },
};

export const chatCompletions: EndpointSpec<ChatCompletionRequest & EndpointRequest> = {
  path: "/v1/chat/completions",
  what: "chat completions",
  category: "generative",
  schema: ChatCompletionRequestSchema,
  promptText: (r, maxChars) => promptText(r, maxChars),
  answerFixes: CHAT_ANSWER_FIXES,
  ...openAiStreaming,
};
