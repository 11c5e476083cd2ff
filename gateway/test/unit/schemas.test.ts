import { ChatCompletionRequestSchema, EmbeddingRequestSchema, parseBody } from "../../src/api/schemas";

const chat = (extra: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });

function paramOf(schema: Parameters<typeof parseBody>[0], body: unknown): string | null | "ok" {
  const r = parseBody(schema, body);
  return r.ok ? "ok" : r.error.param;
}

describe("chat completion request validation", () => {
  it.each([
    [{ temperature: 2.01 }, "temperature"],
    [{ temperature: -0.1 }, "temperature"],
    [{ top_p: 0 }, "top_p"],
    [{ top_p: 1.5 }, "top_p"],
    [{ presence_penalty: -2.5 }, "presence_penalty"],
    [{ frequency_penalty: 3 }, "frequency_penalty"],
    [{ max_tokens: 0 }, "max_tokens"],
    [{ max_tokens: 1.5 }, "max_tokens"],
    [{ stop: ["a", "b", "c", "d", "e"] }, "stop"],
    [{ stop: "" }, "stop"],
    [{ seed: 1.2 }, "seed"],
    [{ stream: "yes" }, "stream"],
    [{ stream_options: { include_usage: true } }, "stream_options"],
    [{ tools: [] }, "tools"],
    [{ tools: [{ type: "function", function: { name: "bad name!" } }] }, "tools[0].function.name"],
    [{ tools: [{ type: "retrieval" }] }, "tools[0].type"],
    [{ tool_choice: "auto" }, "tool_choice"],
    [{ messages: [] }, "messages"],
    [{ messages: [{ role: "robot", content: "x" }] }, "messages[0].role"],
    [{ messages: [{ role: "user" }] }, "messages[0].content"],
    [{ model: "" }, "model"],
  ])("rejects %j naming param %s", (extra, param) => {
    expect(paramOf(ChatCompletionRequestSchema, chat(extra))).toBe(param);
  });

  it("names a missing model as required", () => {
    const r = parseBody(ChatCompletionRequestSchema, { messages: [{ role: "user", content: "x" }] });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.status).toBe(400);
      expect(r.error.param).toBe("model");
      expect(r.error.message).toMatch(/required/);
    }
  });

  it.each([
    [{ temperature: 0, top_p: 1, max_tokens: 1, seed: 42, stop: ["x", "y", "z", "w"] }],
    [{ stream: true, stream_options: { include_usage: true } }],
    [{ tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {}, required: [] } } }], tool_choice: { type: "function", function: { name: "get_weather" } } }],
    [{ messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c1", content: "42" }] }],
    [{ top_k: 20, guided_json: { type: "object" } }],
  ])("accepts %j", (extra) => {
    expect(paramOf(ChatCompletionRequestSchema, chat(extra))).toBe("ok");
  });

  it("echoes a client-chosen key bounded and escaped, in param and message", () => {
    const key = `${"k".repeat(300_000)}\n{"forged":1}`;
    const r = parseBody(ChatCompletionRequestSchema, chat({ logit_bias: { [key]: 1000 } }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.param!.startsWith("logit_bias.kkk")).toBe(true);
    expect(r.error.param!.length).toBeLessThan(300);
    expect(r.error.message.length).toBeLessThan(700);
    expect(r.error.message).not.toContain("\n");
    expect(r.error.param).toContain("(300013 characters)");
  });

  it("keeps unknown fields so they reach the model server", () => {
    const r = parseBody(ChatCompletionRequestSchema, chat({ top_k: 5, min_p: 0.1 }));
    expect(r.ok && (r.value as Record<string, unknown>).top_k).toBe(5);
  });

  it("rejects a tool_choice naming a tool that is not defined", () => {
    const body = chat({ tools: [{ type: "function", function: { name: "a" } }], tool_choice: { type: "function", function: { name: "b" } } });
    expect(paramOf(ChatCompletionRequestSchema, body)).toBe("tool_choice");
  });

  it.each([null, [], "text", 42])("rejects a non-object body %j", (body) => {
    const r = parseBody(ChatCompletionRequestSchema, body);
    expect(r.ok).toBe(false);
  });
});

describe("embedding request validation", () => {
  it.each([["text"], [["a", "b"]], [[1, 2, 3]], [[[1, 2], [3]]], [""]])("accepts input %j", (input) => {
    expect(paramOf(EmbeddingRequestSchema, { model: "e", input })).toBe("ok");
  });
  it.each([
    [{ input: [] }, "input"],
    [{ input: [[]] }, "input[0]"],
    [{ input: [-1] }, "input[0]"],
    [{ input: "x", encoding_format: "hex" }, "encoding_format"],
    [{ input: "x", dimensions: 0 }, "dimensions"],
    [{}, "input"],
  ])("rejects %j naming %s", (extra, param) => {
    expect(paramOf(EmbeddingRequestSchema, { model: "e", ...extra })).toBe(param);
  });
});

describe("validation messages say what is wrong and where", () => {
  const error = (schema: Parameters<typeof parseBody>[0], body: unknown) => {
    const r = parseBody(schema, body);
    if (r.ok) throw new Error("expected a validation error");
    return r.error.toEnvelope().error;
  };
  it.each([
    [{ model: undefined }, "model", "missing_required_parameter", "Missing required parameter: 'model'."],
    [{ temperature: "hot" }, "temperature", "invalid_type", "Invalid type for 'temperature': expected a number, but got a string instead."],
    [{ temperature: 2.5 }, "temperature", "decimal_above_max_value", "Expected a value <= 2, but got 2.5 instead."],
    [{ max_tokens: 0 }, "max_tokens", "integer_below_min_value", "Expected a value >= 1, but got 0 instead."],
    [{ max_tokens: 1.5 }, "max_tokens", "invalid_type", "expected an integer, but got a decimal instead."],
    [{ messages: "hi" }, "messages", "invalid_type", "expected an array, but got a string instead."],
    [{ messages: [] }, "messages", "empty_array", "Expected an array with minimum length 1"],
    [{ messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }, { role: "user", content: "c" }, { role: "user", content: 5 }] }, "messages[3].content", "invalid_type", "expected a string or an array, but got an integer instead."],
    [{ messages: [{ role: "user", content: [{ type: 5 }] }] }, "messages[0].content[0].type", "invalid_type", "expected a string, but got an integer instead."],
    [{ messages: [{ role: "user" }] }, "messages[0].content", "missing_required_parameter", "Missing required parameter: 'messages[0].content'."],
    [{ messages: [{ role: "tool", content: "42" }] }, "messages[0].tool_call_id", "missing_required_parameter", "Missing required parameter"],
    [{ messages: [{ role: "robot", content: "x" }] }, "messages[0].role", "invalid_value", "Invalid value for 'messages[0].role': 'robot'. Supported values are: 'system', 'developer', 'user', 'assistant', 'tool', and 'function'."],
    [{ stop: ["a", "b", "c", "d", "e"] }, "stop", "array_above_max_length", "maximum length 4, but got an array with length 5"],
    [{ stop: [""] }, "stop[0]", "empty_string", "string too short"],
    [{ tool_choice: "sometimes" }, "tool_choice", "invalid_value", "Supported values are: 'none', 'auto', and 'required'."],
  ])("%j: %s %s", (extra, param, code, text) => {
    const e = error(ChatCompletionRequestSchema, chat(extra));
    expect(e).toMatchObject({ param, code, type: "invalid_request_error" });
    expect(e.message).toContain(text);
  });

  it("shows a long wrong value bounded, never whole", () => {
    const e = error(ChatCompletionRequestSchema, chat({ tool_choice: "x".repeat(100_000) }));
    expect(e.message.length).toBeLessThan(300);
  });

  it("names the embedding input element that is wrong", () => {
    expect(error(EmbeddingRequestSchema, { model: "e", input: [-1] })).toMatchObject({ param: "input[0]", code: "integer_below_min_value" });
    expect(error(EmbeddingRequestSchema, { model: "e", input: ["a", 5] })).toMatchObject({ param: "input[1]", code: "invalid_type" });
    expect(error(EmbeddingRequestSchema, { model: "e" })).toMatchObject({ param: "input", code: "missing_required_parameter" });
  });
});
