import { KNOWN_EXCEPTIONS } from "./known-exceptions";
import { describeWithOpenApi, loadOpenApi, type OpenApi } from "./openapi";

/** The validator the conformance suites use: that it refuses what a strict client refuses, and no more. */

const chat = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "m",
  choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: "Hi", refusal: null, ...message } }],
  ...extra,
});

const chunk = (finish_reason: unknown) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "m",
  choices: [{ index: 0, delta: { content: "Hi" }, logprobs: null, finish_reason }],
});

describeWithOpenApi("the OpenAPI document as a strict client reads it", () => {
  let api: OpenApi;
  let chatSchema: string;
  beforeAll(() => {
    api = loadOpenApi();
    chatSchema = api.responsePointer("/chat/completions", "post");
  });

  it("accepts a well-formed answer, and fields the document does not forbid", () => {
    expect(api.check(chatSchema, chat({ annotations: [] }))).toEqual([]);
    expect(api.check(chatSchema, chat({}, { kv_transfer_params: null }))).toEqual([]);
  });

  it("refuses a null where the document wants an array, naming the field and the schema", () => {
    const problems = api.check(chatSchema, chat({ annotations: null }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^\/choices\/0\/message\/annotations: must be array .*schema #\/components\/schemas\/ChatCompletionResponseMessage\/properties\/annotations/);
  });

  it("refuses an integer error code and a missing required field", () => {
    const errors = api.errorPointer("/chat/completions", "post", 400);
    expect(api.check(errors, { error: { message: "m", type: "BadRequestError", param: null, code: 400 } })).toEqual([expect.stringMatching(/^\/error\/code: must be string/)]);
    expect(api.check(errors, { error: { message: "m", type: "t", code: null } })).toEqual([expect.stringMatching(/^\/error: must have required property 'param'/)]);
  });

  it("reads the document's `nullable` as null allowed, and nothing else", () => {
    const stream = api.responsePointer("/chat/completions", "post", 200, "text/event-stream");
    expect(api.check(stream, chunk(null))).toEqual([]);
    expect(api.check(stream, chunk("bogus"))).toEqual([expect.stringMatching(/^\/choices\/0\/finish_reason: must be equal to one of the allowed values/)]);
  });

  it("narrows a union to the member the value's type names", () => {
    const pointer = api.streamEventPointer("response.output_text.delta");
    expect(pointer).toBe("#/components/schemas/ResponseTextDeltaEvent");
    const event = { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hi", sequence_number: 3, logprobs: null };
    expect(api.check(pointer!, event)).toEqual([expect.stringMatching(/^\/logprobs: must be array/)]);
  });

  it("each known exception names evidence, and the document still has its pointer (loading would fail otherwise)", () => {
    for (const e of KNOWN_EXCEPTIONS) expect(e.evidence.length).toBeGreaterThan(40);
    expect(api.check(chatSchema, chat({}, { system_fingerprint: null }))).toEqual([]);
  });
});
