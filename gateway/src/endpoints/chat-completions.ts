import { promptText } from "../upstream/prefix-index";
import { ChatCompletionRequestSchema, type ChatCompletionRequest } from "../api/schemas";
import { asUsage, type EndpointRequest, type EndpointSpec, type StreamEventFacts } from "./spec";

/**
 * Whether an OpenAI-style chunk carries generated output: content deltas carry text (the role-only first chunk,
 * content "", does not count), tool-call deltas carry arguments.
 */
export function chunkHasToken(data: string): boolean {
  return (data.includes('"content":"') && !data.includes('"content":""')) || data.includes('"tool_calls"');
}

/**
 * Facts of an OpenAI-style chunk stream (chat and text completions): the usage-only chunk (`choices: []` with
 * `usage`) the gateway asked for on the client's behalf is dropped unless the client asked for it.
 */
export function completionChunkFacts(data: string, parsed: Record<string, unknown> | undefined, clientWantsUsage: boolean): StreamEventFacts {
  if (!parsed) return { token: chunkHasToken(data), drop: false };
  const usage = parsed.usage ? asUsage(parsed.usage) : undefined;
  const choices = parsed.choices;
  const usageOnly = usage !== undefined && Array.isArray(choices) && choices.length === 0;
  // A parsed chunk counts as a token on any content (as it always has: "" included).
  return { token: data.includes('"content":"') || data.includes('"tool_calls"'), drop: usageOnly && !clientWantsUsage, usage };
}

/**
 * The OpenAI conventions both chat and embeddings follow for `stream` and `stream_options`: a stream always asks
 * for the usage chunk; a member the gateway acts on that the client repeated is rewritten too (the gateway
 * decided on JSON.parse's value, the last; a model server keeping the first would otherwise stream to a client
 * expecting JSON).
 */
export const openAiStreaming = {
  streams: (r: EndpointRequest) => r.stream === true,
  upstreamMembers(r: EndpointRequest, repeated: ReadonlySet<string>): Record<string, string> {
    const replace: Record<string, string> = {};
    if (r.stream === true) replace.stream_options = JSON.stringify({ ...(r.stream_options ?? {}), include_usage: true });
    else if (repeated.has("stream_options")) replace.stream_options = JSON.stringify(r.stream_options ?? null);
    if (repeated.has("stream")) replace.stream = JSON.stringify(r.stream ?? null);
    return replace;
  },
  clientWantsUsage: (r: EndpointRequest) => r.stream === true && r.stream_options != null && r.stream_options.include_usage !== false,
  usageOf: (answer: Record<string, unknown>) => asUsage(answer.usage),
  streamEvent: completionChunkFacts,
  mayCarryUsage: (data: string) => data.includes('"usage":{'),
};

export const chatCompletions: EndpointSpec<ChatCompletionRequest & EndpointRequest> = {
  path: "/v1/chat/completions",
  what: "chat completions",
  category: "generative",
  schema: ChatCompletionRequestSchema,
  promptText: (r) => promptText(r),
  ...openAiStreaming,
};
