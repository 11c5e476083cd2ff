import Ajv2020 from "ajv/dist/2020";
import type { RunningSimulator } from "../src";
import { chat, chunksOf, fastSim, openaiClient, openStream, postJson, readEvents } from "./helpers";

/** `response_format` (chat, completions) and `text.format` (Responses) answer JSON, as vLLM's structured outputs do. */

const ajv = new Ajv2020({ strict: false });

const ORDER = {
  type: "object",
  $defs: { line: { type: "object", properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1, maximum: 9 } }, required: ["sku", "qty"], additionalProperties: false } },
  properties: {
    id: { type: "string" },
    status: { enum: ["open", "shipped"] },
    lines: { type: "array", items: { $ref: "#/$defs/line" }, minItems: 1, maxItems: 3 },
    note: { type: ["string", "null"] },
  },
  required: ["id", "status", "lines", "note"],
  additionalProperties: false,
};
const asSchema = { type: "json_schema", json_schema: { name: "order", schema: ORDER, strict: true } };

describe("structured outputs", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["json-model"] });
  });
  afterAll(() => sim.close());

  test("json_object: the content is a JSON object", async () => {
    for (const seed of [1, 2, 3]) {
      const res = await chat(sim, { seed, response_format: { type: "json_object" } });
      expect(res.status).toBe(200);
      const parsed = JSON.parse(res.body.choices[0].message.content);
      expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true);
      expect(res.body.choices[0].finish_reason).toBe("stop");
    }
  });

  test("json_schema: the content is an instance of the schema; usage counts its tokens", async () => {
    const validate = ajv.compile(ORDER);
    for (const seed of [1, 2, 3, 4, 5]) {
      const res = await chat(sim, { seed, response_format: asSchema });
      const content = res.body.choices[0].message.content;
      expect(validate(JSON.parse(content))).toBe(true);
      expect(res.body.usage.completion_tokens).toBeGreaterThan(5);
    }
  });

  test("streamed, the deltas join into the same JSON; with logprobs too", async () => {
    const body = { temperature: 0, response_format: asSchema, logprobs: true };
    const chunks = chunksOf(await readEvents(await openStream(sim, body)));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    const whole = await chat(sim, body);
    expect(text).toBe(whole.body.choices[0].message.content);
    expect(ajv.validate(ORDER, JSON.parse(text))).toBe(true);
    expect(whole.body.choices[0].logprobs.content.map((e: { token: string }) => e.token).join("")).toBe(text);
  });

  test("max_tokens below the JSON cuts it: invalid JSON, finish_reason length", async () => {
    const res = await chat(sim, { temperature: 0, response_format: asSchema, max_tokens: 4 });
    expect(res.body.choices[0].finish_reason).toBe("length");
    expect(res.body.usage.completion_tokens).toBe(4);
    expect(() => JSON.parse(res.body.choices[0].message.content)).toThrow();
  });

  test("the openai SDK sends response_format json_schema and reads an instance", async () => {
    const completion = await openaiClient(sim).chat.completions.create({
      model: "json-model",
      messages: [{ role: "user", content: "An order, please" }],
      response_format: { type: "json_schema", json_schema: { name: "order", schema: ORDER, strict: true } },
    });
    expect(ajv.validate(ORDER, JSON.parse(completion.choices[0]?.message.content ?? ""))).toBe(true);
  });

  test.each([
    [{ type: "json_schema" }, "When response_format type is 'json_schema', the 'json_schema' field must be provided."],
    [{ type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { id: { type: "string", pattern: "^a" } }, required: ["id"] } } }, "`pattern` is not supported by the simulator (at #/properties/id)"],
    [{ type: "structural_tag" }, "response_format type 'structural_tag' is not supported by the simulator."],
  ])("refused with a 400 naming response_format: %j", async (format, message) => {
    const res = await chat(sim, { response_format: format });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("response_format");
    expect(res.body.error.message).toContain(message);
  });

  test("legacy completions take response_format too", async () => {
    const res = await postJson(sim, "/v1/completions", { prompt: "An order:", max_tokens: 200, response_format: asSchema });
    expect(res.status).toBe(200);
    expect(ajv.validate(ORDER, JSON.parse(res.body.choices[0].text))).toBe(true);
  });

  test("the Responses API's text.format json_schema: the output text is an instance, text echoed", async () => {
    const format = { type: "json_schema", name: "order", schema: ORDER, strict: true };
    const res = await postJson(sim, "/v1/responses", { input: "An order, please", text: { format } });
    expect(res.status).toBe(200);
    expect(res.body.text).toEqual({ format });
    expect(ajv.validate(ORDER, JSON.parse(res.body.output[0].content[0].text))).toBe(true);
    const object = await postJson(sim, "/v1/responses", { input: "Hi", text: { format: { type: "json_object" } } });
    expect(typeof JSON.parse(object.body.output[0].content[0].text)).toBe("object");
    const missing = await postJson(sim, "/v1/responses", { input: "Hi", text: { format: { type: "json_schema", name: "x" } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe("text.format");
  });
});
