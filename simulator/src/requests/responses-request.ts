import { z } from "zod";
import { checkSampling, issueReporter } from "./chat-request";

/**
 * The Responses API request as vLLM's `ResponsesRequest` takes it: `input` as a string or a list of items
 * (messages, `function_call`, `function_call_output`), `instructions`, function tools, `store` (default true),
 * `previous_response_id`, and vLLM's `request_id` extension (it becomes the response id). Unknown fields are
 * accepted, as vLLM's `extra="allow"` does; what the simulator cannot do is refused rather than ignored.
 */

const ContentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });
const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

/** Every input item, loosely: which fields an item needs depends on its `type` (checked below). */
const InputItemSchema = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: ContentSchema.optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  output: ContentSchema.optional(),
});

const FunctionToolSchema = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

/** `text.format`: flat, unlike chat's `response_format` (`{type: "json_schema", name, schema, strict}`). */
const TextFormatSchema = z.looseObject({
  type: z.enum(["text", "json_object", "json_schema"]),
  name: z.string().optional(),
  description: z.string().nullish(),
  schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
});

const ToolChoiceSchema = z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), name: z.string().min(1) })]);

export const ResponsesRequestSchema = z
  .looseObject({
    model: z.string().nullish(),
    input: z.union([z.string(), z.array(InputItemSchema)]),
    instructions: z.string().nullish(),
    max_output_tokens: z.number().int().nullish(),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    /** Not a Responses field; vLLM ignores it, the simulator uses it for determinism as in chat. */
    seed: z.number().int().nullish(),
    tools: z.array(FunctionToolSchema).nullish(),
    tool_choice: ToolChoiceSchema.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    background: z.boolean().nullish(),
    previous_response_id: z.string().nullish(),
    prompt: z.unknown().optional(),
    metadata: z.record(z.string(), z.string()).nullish(),
    text: z.looseObject({ format: TextFormatSchema.nullish() }).nullish(),
    reasoning: z.looseObject({}).nullish(),
    truncation: z.enum(["auto", "disabled"]).nullish(),
    service_tier: z.string().nullish(),
    max_tool_calls: z.number().int().nullish(),
    user: z.string().nullish(),
    /** vLLM extension: the id of the response (default `resp_` + 32 hex). */
    request_id: z.string().min(1).nullish(),
  })
  .superRefine((r, ctx) => {
    const fail = issueReporter(ctx);
    checkSampling({ temperature: r.temperature, top_p: r.top_p }, fail);
    if (r.max_output_tokens != null && r.max_output_tokens < 1) fail("max_output_tokens", `max_tokens must be at least 1, got ${r.max_output_tokens}.`);
    // vLLM's model validators, with their messages.
    if (r.background === true && r.store === false) fail("background", "background can only be used when `store` is true");
    else if (r.background === true) fail("background", "background mode is not supported by the simulator.");
    if (r.prompt != null) fail("prompt", "prompt template is not supported");
    const format = r.text?.format;
    if (format?.type === "json_schema" && (format.name === undefined || format.schema === undefined)) fail("text.format", "A json_schema text.format needs `name` and `schema`.");
    (r.tools ?? []).forEach((tool, i) => {
      if (tool.type !== "function") fail("tools", `Tool type '${tool.type}' is not supported by the simulator (function tools only).`);
      else if (!tool.name) fail(`tools.${i}.name`, "A function tool needs a name.");
    });
    if (typeof r.input !== "string") r.input.forEach((item, i) => checkItem(item, `input.${i}`, fail));
  });

export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
export type InputItem = z.infer<typeof InputItemSchema>;
export type ResponsesTool = z.infer<typeof FunctionToolSchema>;

/** The fields each kind of input item needs; an unknown kind is refused (the simulator cannot render it). */
function checkItem(item: InputItem, path: string, fail: (path: string, message: string) => void): void {
  const type = item.type ?? "message";
  switch (type) {
    case "message":
      if (!item.role || item.content === undefined) fail(path, "A message input item needs `role` and `content`.");
      return;
    case "function_call":
      if (!item.call_id || !item.name || item.arguments === undefined) fail(path, "A function_call input item needs `call_id`, `name` and `arguments`.");
      return;
    case "function_call_output":
      if (!item.call_id || item.output === undefined) fail(path, "A function_call_output input item needs `call_id` and `output`.");
      return;
    case "reasoning":
      return;
    default:
      fail(path, `Input item type '${type}' is not supported by the simulator.`);
  }
}
