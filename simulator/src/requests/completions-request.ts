import { z } from "zod";
import { tokenize } from "../tokenizer";
import { MAX_LOGPROBS } from "../logprobs";
import { checkResponseFormat, checkSampling, issueReporter, ResponseFormatSchema, StreamOptionsSchema, tooManyLogprobs } from "./chat-request";

/**
 * The legacy completions request as vLLM's `CompletionRequest` validates it: `prompt` in OpenAI's four forms,
 * `max_tokens` defaulting to 16, the chat sampling ranges, and its refusals (`suffix`, empty prompt).
 * Unknown fields are accepted, as vLLM's `extra="allow"` does.
 */

const TokenIds = z.array(z.number().int().nonnegative());

export const CompletionRequestSchema = z
  .looseObject({
    model: z.string().nullish(),
    prompt: z.union([z.string(), z.array(z.string()), TokenIds, z.array(TokenIds)]).nullish(),
    echo: z.boolean().nullish(),
    // Absent means OpenAI's (and vLLM's) default of 16; an explicit null means "up to the context window".
    max_tokens: z.number().int().nullish(),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    presence_penalty: z.number().nullish(),
    frequency_penalty: z.number().nullish(),
    n: z.number().int().nullish(),
    seed: z.number().int().nullish(),
    stop: z.union([z.string(), z.array(z.string())]).nullish(),
    stream: z.boolean().nullish(),
    stream_options: StreamOptionsSchema.nullish(),
    suffix: z.string().nullish(),
    logprobs: z.number().int().nullish(),
    ignore_eos: z.boolean().nullish(),
    response_format: ResponseFormatSchema.nullish(),
  })
  .superRefine((r, ctx) => {
    const fail = issueReporter(ctx);
    checkSampling(r, fail);
    // max_tokens 0 is allowed only to echo the prompt back without generating.
    if (r.max_tokens != null && r.max_tokens < (r.echo === true ? 0 : 1)) fail("max_tokens", `max_tokens must be at least 1, got ${r.max_tokens}.`);
    if (r.logprobs != null && r.logprobs < 0) fail("logprobs", "`logprobs` must be a positive value.");
    else if (r.logprobs != null && r.logprobs > MAX_LOGPROBS) fail("logprobs", tooManyLogprobs(r.logprobs));
    checkResponseFormat(r.response_format, fail);
  });

export type CompletionRequest = z.infer<typeof CompletionRequestSchema>;

/** The request's max_tokens as vLLM reads it: 16 when absent, null (no limit but the context) when sent as null. */
export function completionMaxTokens(r: CompletionRequest): number | null {
  return r.max_tokens === undefined ? 16 : r.max_tokens;
}

/** One prompt: its text (echoed back with `echo`) and its tokens. */
export interface CompletionPrompt {
  text: string;
  tokens: string[];
}

/**
 * The prompts of a request, in order (each becomes one choice). Token-id prompts count one token per id;
 * with no vocabulary to decode them, their echo is empty.
 */
export function completionPrompts(prompt: CompletionRequest["prompt"]): CompletionPrompt[] {
  if (prompt == null) return [];
  if (typeof prompt === "string") return prompt === "" ? [] : [{ text: prompt, tokens: tokenize(prompt) }];
  if (prompt.length === 0) return [];
  const first = prompt[0];
  if (typeof first === "string") return (prompt as string[]).map((text) => ({ text, tokens: tokenize(text) }));
  const ids = typeof first === "number" ? [prompt as number[]] : (prompt as number[][]);
  return ids.map((list) => ({ text: "", tokens: list.map((id) => `<${id}>`) }));
}
