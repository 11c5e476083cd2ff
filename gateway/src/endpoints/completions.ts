import { CompletionRequestSchema, type CompletionRequest } from "../api/generation-schemas";
import { completionChunkFacts, openAiStreaming } from "./chat-completions";
import type { EndpointRequest, EndpointSpec } from "./spec";

/** A legacy completion chunk carries generated output in `choices[].text` (an empty text is no token). */
export function textChunkHasToken(data: string): boolean {
  return data.includes('"text":"') && !data.includes('"text":""');
}

/** What the prefix cache sees first: the prompt as text (token-id prompts have no text to hash). */
function promptOf(r: CompletionRequest): string {
  if (typeof r.prompt === "string") return r.prompt;
  return r.prompt.every((p) => typeof p === "string") ? (r.prompt as string[]).join("") : "";
}

/**
 * `POST /v1/completions`, the legacy text completions: the chat conventions for streams and usage (the usage
 * chunk asked for on the client's behalf and dropped again if it did not ask), with tokens in `text`.
 */
export const completions: EndpointSpec<CompletionRequest & EndpointRequest> = {
  path: "/v1/completions",
  what: "completions",
  category: "generative",
  schema: CompletionRequestSchema,
  promptText: promptOf,
  ...openAiStreaming,
  streamEvent: (data, parsed, wanted) => completionChunkFacts(data, parsed, wanted, textChunkHasToken),
};
