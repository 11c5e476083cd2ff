import type { RunningSimulator } from "../src";
import { chat, fastSim, openaiClient, postJson } from "./helpers";

/** vLLM's 400/404/413 answers, always in the nested envelope with an integer `code`. */
describe("request validation", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["sim-chat"], maxModelLen: 64, maxRequestBodyBytes: 4096 });
  });
  afterAll(() => sim.close());

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["negative temperature", { temperature: -0.5 }, "temperature", /^temperature must be non-negative, got -0\.5\.$/],
    ["temperature above 2", { temperature: 2.5 }, "temperature", /temperature must be in \[0, 2\]/],
    ["top_p of 0", { top_p: 0 }, "top_p", /^top_p must be in \(0, 1\], got 0\.$/],
    ["presence_penalty out of range", { presence_penalty: 3 }, "presence_penalty", /^presence_penalty must be in \[-2, 2\], got 3\.$/],
    ["frequency_penalty out of range", { frequency_penalty: -2.5 }, "frequency_penalty", /frequency_penalty must be in \[-2, 2\]/],
    ["max_tokens of 0", { max_tokens: 0 }, "max_tokens", /^max_tokens must be at least 1, got 0\.$/],
    ["empty stop string", { stop: ["ok", ""] }, "stop", /^stop cannot contain an empty string\.$/],
    ["stream_options without stream", { stream_options: { include_usage: true } }, "stream_options", /^Stream options can only be defined when `stream=True`\.$/],
    ["wrong type", { temperature: "hot" }, "temperature", /temperature/],
    ["messages missing", { messages: undefined }, "messages", /messages/],
  ];

  test.each(cases)("%s -> 400 with param", async (_name, body, param, message) => {
    const res = await chat(sim, body);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: { message: expect.stringMatching(message), type: "BadRequestError", param, code: 400 } });
  });

  test("unknown model -> 404 NotFoundError with vLLM's message", async () => {
    const res = await chat(sim, { model: "gpt-9" });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { message: "The model `gpt-9` does not exist.", type: "NotFoundError", param: "model", code: 404 } });
    await expect(openaiClient(sim).chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({
      status: 404,
      param: "model",
    });
  });

  test("prompt at or over max_model_len -> 400 input_tokens; max_tokens too large -> 400 max_tokens", async () => {
    const long = await chat(sim, { messages: [{ role: "user", content: Array.from({ length: 80 }, (_, i) => `w${i}`).join(" ") }] });
    expect(long.status).toBe(400);
    expect(long.body.error.param).toBe("input_tokens");
    expect(long.body.error.message).toMatch(/^This model's maximum context length is 64 tokens\. However, your request has \d+ input tokens\./);
    const tooMany = await chat(sim, { max_tokens: 60 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.param).toBe("max_tokens");
    expect(tooMany.body.error.message).toMatch(/^'max_tokens' or 'max_completion_tokens' is too large: 60\./);
  });

  test("without max_tokens the answer is cut at the context window with finish_reason length", async () => {
    const prompt = Array.from({ length: 50 }, (_, i) => `w${i}`).join(" ");
    const res = await chat(sim, { messages: [{ role: "user", content: prompt }], temperature: 0 });
    expect(res.status).toBe(200);
    expect(res.body.usage.total_tokens).toBe(64);
    expect(res.body.choices[0].finish_reason).toBe("length");
  });

  test("malformed JSON -> 400 in the envelope", async () => {
    const res = await postJson(sim, "/v1/chat/completions", '{"messages": [');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "BadRequestError", param: null, code: 400 });
    expect(res.body.error.message).toMatch(/JSON/);
  });

  test("body over the limit -> 413 in the envelope", async () => {
    const res = await chat(sim, { messages: [{ role: "user", content: "x".repeat(10_000) }] });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe(413);
    expect(typeof res.body.error.message).toBe("string");
  });

  test("unknown request fields are accepted (vLLM extra=allow)", async () => {
    const res = await chat(sim, { max_tokens: 2, some_future_field: { nested: true }, top_k: 5, repetition_penalty: 1.1 });
    expect(res.status).toBe(200);
    expect(res.body.usage.completion_tokens).toBe(2);
  });

  test("unknown routes -> 404 in the envelope", async () => {
    const res = await postJson(sim, "/v1/nothing-here", {});
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(404);
  });
});
