import { VllmError } from "./errors";

/** vLLM's `_validate_input` checks, with its wording and `param`s. */
export function checkContextLength(maxModelLen: number, promptTokens: number, maxTokens: number | null): void {
  if (promptTokens >= maxModelLen) {
    throw new VllmError(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
      "input_tokens",
    );
  }
  if (maxTokens !== null && promptTokens + maxTokens > maxModelLen) {
    throw new VllmError(
      400,
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${maxModelLen} tokens and your request has ${promptTokens} input tokens (${maxTokens} > ${maxModelLen} - ${promptTokens}).`,
      "max_tokens",
    );
  }
}
