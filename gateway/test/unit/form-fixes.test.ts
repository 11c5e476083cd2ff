import { applyFixes, CHAT_ANSWER_FIXES, dropNull, USAGE_FIXES } from "../../src/endpoints/form-fixes";
import { normalizeEvent, normalizeResponse } from "../../src/endpoints/responses-form";
import { responses } from "../../src/endpoints/responses";

/**
 * The form fixes work on text: they must change the members they name, wherever vLLM puts them, and nothing inside
 * a string (a message or tool arguments that quote JSON), and leave the answer valid JSON with the same meaning.
 */
describe("form fixes on an answer's text", () => {
  const vllmChat = JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          // A model that writes JSON about annotations: escaped inside the string, never touched.
          content: 'Here: {"annotations":null,"prompt_tokens_details":null}',
          refusal: null,
          annotations: null,
          tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: '{"annotations":null}' } }],
        },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: { prompt_tokens: 3, total_tokens: 5, completion_tokens: 2, prompt_tokens_details: null },
  });

  it("turns a null annotations list into [] and leaves null usage details out, strings untouched", () => {
    const fixed = applyFixes(vllmChat, CHAT_ANSWER_FIXES);
    const answer = JSON.parse(fixed) as { choices: { message: { content: string; annotations: unknown; tool_calls: { function: { arguments: string } }[] } }[]; usage: Record<string, unknown> };
    expect(answer.choices[0]!.message.annotations).toEqual([]);
    expect(answer.usage).toEqual({ prompt_tokens: 3, total_tokens: 5, completion_tokens: 2 });
    expect(answer.choices[0]!.message.content).toBe('Here: {"annotations":null,"prompt_tokens_details":null}');
    expect(answer.choices[0]!.message.tool_calls[0]!.function.arguments).toBe('{"annotations":null}');
    // Everything else as it was.
    const before = JSON.parse(vllmChat) as { choices: { message: Record<string, unknown> }[]; usage: Record<string, unknown> };
    before.choices[0]!.message.annotations = [];
    delete before.usage.prompt_tokens_details;
    expect(answer).toEqual(before);
  });

  it("drops a null member wherever it stands in its object, and returns the same string when nothing applies", () => {
    const fixes = dropNull("x");
    expect(JSON.parse(applyFixes('{"x":null,"a":1}', fixes))).toEqual({ a: 1 });
    expect(JSON.parse(applyFixes('{"a":1,"x":null}', fixes))).toEqual({ a: 1 });
    expect(JSON.parse(applyFixes('{"o":{"x":null}}', fixes))).toEqual({ o: {} });
    const untouched = '{"a":{"x":{"y":1}},"prompt_tokens_details":{"cached_tokens":4}}';
    expect(applyFixes(untouched, USAGE_FIXES)).toBe(untouched);
  });
});

describe("Responses objects in the schema's form", () => {
  const vllmResponse = () => ({
    id: "resp_1",
    object: "response",
    text: null,
    output: [{ type: "message", content: [{ type: "output_text", text: "hi", annotations: [], logprobs: null }] }],
    usage: { input_tokens: 4, input_tokens_details: { cached_tokens: 0, cached_tokens_per_turn: [0] }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 6 },
  });

  it("adds the required error, leaves out a null text, gives output text an empty logprobs list and cache writes 0", () => {
    const r = vllmResponse() as Record<string, unknown>;
    expect(normalizeResponse(r)).toBe(true);
    expect(r).toEqual({
      id: "resp_1",
      object: "response",
      error: null,
      output: [{ type: "message", content: [{ type: "output_text", text: "hi", annotations: [], logprobs: [] }] }],
      usage: { input_tokens: 4, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 6 },
    });
    // A second pass finds nothing to do.
    expect(normalizeResponse(r)).toBe(false);
  });

  it("keeps a known error, a real text format and real logprobs", () => {
    const r = { ...vllmResponse(), error: { code: "server_error", message: "x" }, text: { format: { type: "json_object" } } } as Record<string, unknown>;
    (r.output as { content: { logprobs: unknown }[] }[])[0]!.content[0]!.logprobs = [{ token: "hi", logprob: -0.1, bytes: [104, 105], top_logprobs: [] }];
    normalizeResponse(r);
    expect(r.error).toEqual({ code: "server_error", message: "x" });
    expect(r.text).toEqual({ format: { type: "json_object" } });
    expect((r.output as { content: { logprobs: unknown[] }[] }[])[0]!.content[0]!.logprobs).toHaveLength(1);
  });

  it("fixes the items, parts and text deltas of stream events, and only those", () => {
    const part = { type: "response.content_part.added", part: { type: "output_text", text: "", annotations: [], logprobs: null } };
    expect(normalizeEvent(part)).toBe(true);
    expect(part.part.logprobs).toEqual([]);
    const delta = { type: "response.output_text.delta", delta: "h", logprobs: null as unknown };
    expect(normalizeEvent(delta)).toBe(true);
    expect(delta.logprobs).toEqual([]);
    const other = { type: "response.reasoning_text.delta", delta: "h", logprobs: null };
    expect(normalizeEvent(other)).toBe(false);
  });
});

describe("a Responses stream event's null logprobs", () => {
  it("is fixed on the text, unparsed, and an event without one is sent as it came", () => {
    const delta = '{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","output_index":0,"content_index":0,"delta":"hi","logprobs":null}';
    const facts = responses.streamEvent(delta, undefined, false);
    expect(facts.token).toBe(true);
    expect(JSON.parse(facts.send!)).toEqual({ ...JSON.parse(delta), logprobs: [] });
    expect(responses.streamEvent(delta.replace("null", "[]"), undefined, false).send).toBeUndefined();
  });
});
