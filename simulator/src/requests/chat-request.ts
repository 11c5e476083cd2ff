import { z } from "zod";
import { MAX_LOGPROBS } from "../logprobs";

/**
 * The chat-completions request as vLLM validates it: types by schema, ranges with vLLM's own messages
 * (`SamplingParams._verify_args`, `validate_stream_options`, `check_tool_usage`). Unknown fields are
 * accepted, as vLLM's `extra="allow"` does.
 */

const ContentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

const MessageSchema = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(ContentPartSchema), z.null()]).optional(),
  name: z.string().nullish(),
  tool_calls: z.array(z.looseObject({})).nullish(),
  tool_call_id: z.string().nullish(),
});

const ToolSchema = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});

const NamedToolChoiceSchema = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({ name: z.string().min(1) }),
});

/**
 * vLLM's `ResponseFormat`: `json_schema` carries `{name, description, schema, strict}`. `structural_tag` (a vLLM
 * extension) is refused below rather than ignored.
 */
export const ResponseFormatSchema = z.looseObject({
  type: z.enum(["text", "json_object", "json_schema", "structural_tag"]),
  json_schema: z
    .looseObject({
      name: z.string(),
      description: z.string().nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      strict: z.boolean().nullish(),
    })
    .nullish(),
});

export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;

export const StreamOptionsSchema = z.looseObject({ include_usage: z.boolean().nullish(), continuous_usage_stats: z.boolean().nullish() });

export const ChatCompletionRequestSchema = z
  .looseObject({
    model: z.string().nullish(),
    messages: z.array(MessageSchema),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    presence_penalty: z.number().nullish(),
    frequency_penalty: z.number().nullish(),
    max_tokens: z.number().int().nullish(),
    max_completion_tokens: z.number().int().nullish(),
    n: z.number().int().nullish(),
    seed: z.number().int().nullish(),
    stop: z.union([z.string(), z.array(z.string())]).nullish(),
    stream: z.boolean().nullish(),
    stream_options: StreamOptionsSchema.nullish(),
    tools: z.array(ToolSchema).nullish(),
    tool_choice: z.union([z.enum(["none", "auto", "required"]), NamedToolChoiceSchema]).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().nullish(),
    response_format: ResponseFormatSchema.nullish(),
    /** vLLM sampling extension: keep generating past EOS until max_tokens (benchmarks use it). */
    ignore_eos: z.boolean().nullish(),
  })
  .superRefine((r, ctx) => {
    const fail = issueReporter(ctx);
    checkSampling(r, fail);
    checkResponseFormat(r.response_format, fail);
    // vLLM's `check_logprobs`, then SamplingParams' cap at --max-logprobs.
    if (r.top_logprobs != null) {
      if (r.top_logprobs < -1) fail("top_logprobs", "`top_logprobs` must be a positive value or -1.");
      else if (r.top_logprobs !== 0 && r.logprobs !== true) fail("top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true.");
      else if (r.top_logprobs === -1 || r.top_logprobs > MAX_LOGPROBS) fail("logprobs", tooManyLogprobs(r.top_logprobs));
    }
    for (const key of ["max_tokens", "max_completion_tokens"] as const) {
      const v = r[key];
      if (v != null && v < 1) fail(key, `max_tokens must be at least 1, got ${v}.`);
    }
    if (r.tool_choice != null && r.tool_choice !== "none" && r.tools == null) fail("tool_choice", "When using `tool_choice`, `tools` must be set.");
    if (r.tools != null && r.tools.length === 0) fail("tools", "`tools` must contain at least one tool.");
    if (r.tools != null && typeof r.tool_choice === "object" && r.tool_choice !== null) {
      const name = r.tool_choice.function.name;
      if (!r.tools.some((t) => t.function.name === name)) fail("tool_choice", `The tool specified in \`tool_choice\` (${name}) does not match any of the specified \`tools\`.`);
    }
  });

/** SamplingParams' refusal above --max-logprobs; -1 (the whole vocabulary) is always above it. */
export function tooManyLogprobs(n: number): string {
  return `Requested sample logprobs of ${n === -1 ? "the whole vocabulary" : n}, which is greater than max allowed: ${MAX_LOGPROBS}`;
}

/** vLLM's `validate_response_format`, and what the simulator cannot produce. */
export function checkResponseFormat(format: ResponseFormat | null | undefined, fail: FailFn): void {
  if (format?.type === "json_schema" && format.json_schema == null) fail("response_format", "When response_format type is 'json_schema', the 'json_schema' field must be provided.");
  if (format?.type === "structural_tag") fail("response_format", "response_format type 'structural_tag' is not supported by the simulator.");
}

/** Reports a range failure on a field with vLLM's full sentence as the message. */
export type FailFn = (path: string, message: string) => void;

export function issueReporter(ctx: z.RefinementCtx): FailFn {
  return (path, message) => ctx.addIssue({ code: "custom", path: [path], message });
}

/** The sampling fields chat and legacy completions share. */
export interface SamplingFields {
  temperature?: number | null;
  top_p?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: unknown;
}

/** vLLM's `SamplingParams._verify_args` ranges and `validate_stream_options`, with their messages. */
export function checkSampling(r: SamplingFields, fail: FailFn): void {
  if (r.temperature != null) {
    if (!Number.isFinite(r.temperature) || r.temperature < 0) fail("temperature", `temperature must be non-negative, got ${r.temperature}.`);
    else if (r.temperature > 2) fail("temperature", `temperature must be in [0, 2], got ${r.temperature}.`);
  }
  if (r.top_p != null && !(r.top_p > 0 && r.top_p <= 1)) fail("top_p", `top_p must be in (0, 1], got ${r.top_p}.`);
  for (const key of ["presence_penalty", "frequency_penalty"] as const) {
    const v = r[key];
    if (v != null && !(v >= -2 && v <= 2)) fail(key, `${key} must be in [-2, 2], got ${v}.`);
  }
  if (r.n != null) {
    if (r.n < 1) fail("n", `n must be at least 1, got ${r.n}.`);
    // Multiple choices are not simulated; say so rather than silently answering one.
    else if (r.n > 1) fail("n", "n > 1 is not supported by the simulator.");
  }
  const stops = typeof r.stop === "string" ? [r.stop] : (r.stop ?? []);
  if (stops.some((s) => s.length === 0)) fail("stop", "stop cannot contain an empty string.");
  if (r.stream_options != null && r.stream !== true) fail("stream_options", "Stream options can only be defined when `stream=True`.");
}

export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;
export type ChatMessage = ChatCompletionRequest["messages"][number];
export type ChatTool = NonNullable<ChatCompletionRequest["tools"]>[number];

/** Stop sequences as a list. */
export function stopSequences(r: ChatCompletionRequest): string[] {
  if (r.stop == null) return [];
  return typeof r.stop === "string" ? [r.stop] : r.stop;
}

/** `max_completion_tokens` wins over the deprecated `max_tokens`, as in vLLM. */
export function requestedMaxTokens(r: ChatCompletionRequest): number | null {
  return r.max_completion_tokens ?? r.max_tokens ?? null;
}

/**
 * vLLM's `continuous_usage_stats`: every chunk carries the usage so far (it takes effect only with
 * `include_usage`), so a stream cut short still says how many tokens it used.
 */
export function continuousUsage(r: { stream_options?: { include_usage?: boolean | null; continuous_usage_stats?: boolean | null } | null }): boolean {
  return includeUsage(r) && r.stream_options?.continuous_usage_stats === true;
}

/** vLLM defaults `include_usage` to true once a `stream_options` object is present. */
export function includeUsage(r: { stream_options?: { include_usage?: boolean | null } | null }): boolean {
  return r.stream_options != null && r.stream_options.include_usage !== false;
}
