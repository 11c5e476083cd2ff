import { z } from "zod";

/**
 * Bodies of the legacy completions and the Responses API, with OpenAI's ranges where the gateway has a reason to
 * check them (a value the model server would refuse anyway costs a replica slot). Loose like the chat schema:
 * unknown fields (vLLM extensions, newer API fields) pass through to the model server untouched.
 */

const tokenId = z.number().int().min(0);
const maxTokens = z.number().int().min(1);
const penalty = z.number().min(-2).max(2);

export const CompletionRequestSchema = z
  .looseObject({
    model: z.string().min(1),
    // OpenAI's four prompt forms; vLLM answers one choice per prompt of a batch.
    prompt: z.union([z.string(), z.array(z.string()).min(1).max(2048), z.array(tokenId).min(1), z.array(z.array(tokenId).min(1)).min(1).max(2048)]),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional(), continuous_usage_stats: z.boolean().optional() }).nullish(),
    // 0 is valid with echo (the prompt alone); vLLM refuses it without echo.
    max_tokens: z.number().int().min(0).nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    presence_penalty: penalty.nullish(),
    frequency_penalty: penalty.nullish(),
    logprobs: z.number().int().min(0).max(20).nullish(),
    echo: z.boolean().nullish(),
    seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
    user: z.string().nullish(),
  })
  .superRefine((r, ctx) => {
    if (r.stream_options && r.stream !== true) {
      ctx.addIssue({ code: "custom", path: ["stream_options"], message: "stream_options is only allowed when stream is true" });
    }
  });

/** An input item, loosely: its fields depend on its `type` (message, function_call, function_call_output, …), which the model server checks. */
const InputItemSchema = z.looseObject({ type: z.string().optional() });

const ResponsesToolSchema = z.looseObject({ type: z.string().min(1) });

export const ResponsesRequestSchema = z
  .looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItemSchema)]),
  instructions: z.string().nullish(),
  max_output_tokens: maxTokens.nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  tools: z.array(ResponsesToolSchema).nullish(),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.string().min(1) })]).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  background: z.boolean().nullish(),
  previous_response_id: z.string().min(1).max(256).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  })
  .superRefine((r, ctx) => {
    // A background response goes on generating after the answer: its slot, its tokens and its usage would escape
    // the key's limits and the metrics.
    if (r.background === true) ctx.addIssue({ code: "custom", path: ["background"], message: "background responses are not served: omit background, or stream the response" });
  });

export type CompletionRequest = z.infer<typeof CompletionRequestSchema>;
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
