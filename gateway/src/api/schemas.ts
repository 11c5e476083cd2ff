import { z } from "zod";
import { errors, type ApiError } from "./errors";
import { describeIssue, formatParam } from "./issue-messages";

/**
 * Request bodies of the public API, with OpenAI's ranges. Objects are loose: unknown fields are
 * vLLM extensions (top_k, min_p, guided_json, ...) and pass through to the model server untouched.
 */

const penalty = z.number().min(-2).max(2);
const maxTokens = z.number().int().min(1);

const ContentPartSchema = z.looseObject({ type: z.string().min(1) });
const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const MessageSchema = z
  .looseObject({
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    content: ContentSchema.nullish(),
    name: z.string().optional(),
    tool_calls: z.array(ToolCallSchema).optional(),
    tool_call_id: z.string().optional(),
  })
  .superRefine((m, ctx) => {
    const hasContent = m.content !== undefined && m.content !== null;
    if (m.role === "assistant" ? !hasContent && !m.tool_calls?.length : !hasContent) {
      // Absent is "missing"; an explicit null is a wrong value for this role.
      if (m.content === undefined) ctx.addIssue({ code: "invalid_type", expected: "string", input: undefined, path: ["content"], message: "required" });
      else ctx.addIssue({ code: "custom", path: ["content"], message: `a '${m.role}' message needs content` });
    }
    if (m.role === "tool" && !m.tool_call_id) {
      ctx.addIssue({ code: "invalid_type", expected: "string", input: undefined, path: ["tool_call_id"], message: "required" });
    }
  });

const FunctionNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 of a-z, A-Z, 0-9, _ and -");

/** The spec's tool: type "function", function.name, function.parameters a JSON-schema object. */
const ToolSchema = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: FunctionNameSchema,
    description: z.string().optional(),
    parameters: z
      .looseObject({
        type: z.string().optional(),
        properties: z.record(z.string(), z.unknown()).optional(),
        required: z.array(z.string()).optional(),
      })
      .optional(),
  }),
});

const ToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: FunctionNameSchema }) }),
]);

const StopSchema = z.union([
  z.string().min(1, "stop sequences cannot be empty"),
  z.array(z.string().min(1, "stop sequences cannot be empty")).max(4, "at most 4 stop sequences"),
]);

export const ChatCompletionRequestSchema = z
  .looseObject({
    model: z.string().min(1),
    messages: z.array(MessageSchema).min(1, "messages must contain at least one message"),
    stream: z.boolean().nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    max_tokens: maxTokens.nullish(),
    max_completion_tokens: maxTokens.nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    stop: StopSchema.nullish(),
    seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
    presence_penalty: penalty.nullish(),
    frequency_penalty: penalty.nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullish(),
    tools: z.array(ToolSchema).min(1, "tools must not be empty; omit it instead").nullish(),
    tool_choice: ToolChoiceSchema.nullish(),
    user: z.string().nullish(),
  })
  .superRefine((r, ctx) => {
    if (r.stream_options && r.stream !== true) {
      ctx.addIssue({ code: "custom", path: ["stream_options"], message: "stream_options is only allowed when stream is true" });
    }
    if (r.tool_choice && r.tool_choice !== "none" && !r.tools) {
      ctx.addIssue({ code: "custom", path: ["tool_choice"], message: "tool_choice needs tools" });
    }
    if (r.tool_choice && typeof r.tool_choice === "object" && r.tools) {
      const name = r.tool_choice.function.name;
      if (!r.tools.some((t) => t.function.name === name)) {
        ctx.addIssue({ code: "custom", path: ["tool_choice"], message: `tool_choice names '${name}', which is not in tools` });
      }
    }
    if (r.top_logprobs != null && r.top_logprobs > 0 && r.logprobs !== true) {
      ctx.addIssue({ code: "custom", path: ["top_logprobs"], message: "top_logprobs needs logprobs: true" });
    }
  });

const tokenId = z.number().int().min(0);

export const EmbeddingRequestSchema = z.looseObject({
  model: z.string().min(1),
  // LangChain may send "" and sends token-id arrays by default, so all four OpenAI forms are accepted.
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(2048),
    z.array(tokenId).min(1).max(2048),
    z.array(z.array(tokenId).min(1)).min(1).max(2048),
  ]),
  encoding_format: z.enum(["float", "base64"]).nullish(),
  dimensions: z.number().int().min(1).nullish(),
  user: z.string().nullish(),
});

export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;
export type EmbeddingRequest = z.infer<typeof EmbeddingRequestSchema>;

/** One line per issue, `field: message`, for configuration files whose every problem should be named. */
export function issueLines(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((i) => `${formatParam(i.path) ?? "(root)"}: ${i.message}`);
}

/**
 * Validates a parsed JSON body; the first issue becomes a 400 envelope naming the field and saying whether it
 * is missing, of the wrong type, out of range or not an accepted value (see issue-messages.ts).
 */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): { ok: true; value: T } | { ok: false; error: ApiError } {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { ok: false, error: errors.invalidRequest("The request body must be a JSON object.", null) };
  }
  // reportInput: the issue carries the offending value, so a wrong type is told apart from a missing field.
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  if (!issue) return { ok: false, error: errors.invalidRequest("Invalid request.") };
  const { message, param, code } = describeIssue(issue);
  return { ok: false, error: errors.invalidRequest(message, param, code) };
}
