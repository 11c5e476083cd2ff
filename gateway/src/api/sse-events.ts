import type { ApiError } from "./errors";

/** An error as an SSE event, in the envelope (as vLLM sends errors once a stream started). */
export function sseErrorEvent(err: ApiError): string {
  return `data: ${JSON.stringify(err.toEnvelope())}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";
