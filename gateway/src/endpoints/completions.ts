import { CompletionRequestSchema, type CompletionRequest } from "../api/generation-schemas";
import { completionChunkFacts, fixUsageDetails, openAiStreaming, type ChunkForm } from "./chat-completions";
import { COMPLETION_FIXES, dropNull, USAGE_FIXES } from "./form-fixes";

const FINGERPRINT_FIXES = dropNull("system_fingerprint");

/** Legacy completion chunks: `system_fingerprint` null left out (a string when present). */
const COMPLETION_CHUNK_FORM: ChunkForm = {
  text: FINGERPRINT_FIXES,
  withUsage: [...FINGERPRINT_FIXES, ...USAGE_FIXES],
  object(chunk) {
    const fingerprint = chunk.system_fingerprint === null;
    if (fingerprint) delete chunk.system_fingerprint;
    return fixUsageDetails(chunk.usage) > 0 || fingerprint;
  },
};
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
  answerFixes: COMPLETION_FIXES,
  ...openAiStreaming,
  streamEvent: (data, parsed, wanted) => completionChunkFacts(data, parsed, wanted, textChunkHasToken, COMPLETION_CHUNK_FORM),
};
