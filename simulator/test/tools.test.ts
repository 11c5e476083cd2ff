import type { RunningSimulator } from "../src";
import { chat, chunksOf, fastSim, openaiClient, openStream, readEvents } from "./helpers";

const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        days: { type: "integer", minimum: 1, maximum: 7 },
        detailed: { type: "boolean" },
      },
      required: ["city", "unit", "days"],
    },
  },
};
const TIME_TOOL = {
  type: "function",
  function: { name: "get_time", parameters: { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] } },
};
const ASK = [{ role: "user", content: "What's the weather in Paris?" }];

function expectValidWeatherArgs(args: string): void {
  const parsed = JSON.parse(args);
  expect(typeof parsed.city).toBe("string");
  expect(["celsius", "fahrenheit"]).toContain(parsed.unit);
  expect(Number.isInteger(parsed.days)).toBe(true);
  expect(parsed.days).toBeGreaterThanOrEqual(1);
  expect(parsed.days).toBeLessThanOrEqual(7);
  for (const key of Object.keys(parsed)) expect(["city", "unit", "days", "detailed"]).toContain(key);
}

describe("tool calling", () => {
  let capable: RunningSimulator;
  let plain: RunningSimulator;
  beforeAll(async () => {
    capable = await fastSim({ models: ["tools-model"], toolCalling: true });
    plain = await fastSim({ models: ["plain-model"], toolCalling: false });
  });
  afterAll(async () => {
    await Promise.all([capable.close(), plain.close()]);
  });

  test("a tool-calling model answers with a tool call whose arguments fit the schema", async () => {
    const res = await chat(capable, { messages: ASK, tools: [WEATHER_TOOL], temperature: 0 });
    expect(res.status).toBe(200);
    const choice = res.body.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls[0];
    expect(call.id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
    expect(call.type).toBe("function");
    expect(call.function.name).toBe("get_weather");
    expectValidWeatherArgs(call.function.arguments);
    // Deterministic at temperature 0 (ids are random, as in vLLM).
    const again = await chat(capable, { messages: ASK, tools: [WEATHER_TOOL], temperature: 0 });
    expect(again.body.choices[0].message.tool_calls[0].function.arguments).toBe(call.function.arguments);
  });

  test("without temperature 0 the model picks among the offered tools", async () => {
    const names = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const res = await chat(capable, { messages: ASK, tools: [WEATHER_TOOL, TIME_TOOL] });
      names.add(res.body.choices[0].message.tool_calls[0].function.name);
    }
    expect([...names].sort()).toEqual(["get_time", "get_weather"]);
  });

  test("tool_choice none gives text; a named tool is called with finish_reason stop", async () => {
    const none = await chat(capable, { messages: ASK, tools: [WEATHER_TOOL], tool_choice: "none" });
    expect(none.body.choices[0].message.tool_calls).toBeUndefined();
    expect(typeof none.body.choices[0].message.content).toBe("string");
    const named = await chat(capable, { messages: ASK, tools: [WEATHER_TOOL, TIME_TOOL], tool_choice: { type: "function", function: { name: "get_time" } } });
    expect(named.body.choices[0].message.tool_calls[0].function.name).toBe("get_time");
    expect(named.body.choices[0].finish_reason).toBe("stop");
    expect(JSON.parse(named.body.choices[0].message.tool_calls[0].function.arguments)).toHaveProperty("timezone");
  });

  test("after a tool result the model answers in text, so agent loops end", async () => {
    const messages = [
      ...ASK,
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "18C, sunny" },
    ];
    const res = await chat(capable, { messages, tools: [WEATHER_TOOL] });
    expect(res.body.choices[0].finish_reason).toBe("stop");
    expect(res.body.choices[0].message.content.length).toBeGreaterThan(0);
  });

  test("a model without tool calling ignores tools and answers text", async () => {
    const res = await chat(plain, { messages: ASK, tools: [WEATHER_TOOL] });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.tool_calls).toBeUndefined();
    expect(res.body.choices[0].finish_reason).toBe("stop");
    expect(typeof res.body.choices[0].message.content).toBe("string");
  });

  test("tool_choice without tools is a 400 naming tool_choice", async () => {
    const res = await chat(capable, { messages: ASK, tool_choice: "auto" });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "BadRequestError", param: "tool_choice", code: 400 });
  });

  test("streaming sends id/type/name first, then argument fragments that join into valid JSON", async () => {
    const events = await readEvents(await openStream(capable, { messages: ASK, tools: [WEATHER_TOOL] }));
    const chunks = chunksOf(events);
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ index: 0, type: "function", function: { name: "get_weather" } });
    expect(toolDeltas[0].id).toMatch(/^chatcmpl-tool-/);
    const fragments = toolDeltas.slice(1);
    expect(fragments.length).toBeGreaterThan(3);
    for (const f of fragments) {
      expect(f.index).toBe(0);
      expect(f.id).toBeUndefined();
    }
    expectValidWeatherArgs(fragments.map((f) => f.function.arguments).join(""));
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe("tool_calls");
    expect(events[events.length - 1]?.data).toBe("[DONE]");
  });

  test("the openai SDK assembles a streamed tool call", async () => {
    const stream = openaiClient(capable).chat.completions.stream({
      model: "tools-model",
      messages: [{ role: "user", content: "weather?" }],
      tools: [WEATHER_TOOL as never],
    });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    if (call?.type !== "function") throw new Error("expected a function call");
    expect(call.function.name).toBe("get_weather");
    expectValidWeatherArgs(call.function.arguments);
    expect(final.choices[0]?.finish_reason).toBe("tool_calls");
  });
});
