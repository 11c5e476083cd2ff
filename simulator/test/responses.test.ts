import type { EventSourceMessage } from "eventsource-parser";
import type { RunningSimulator } from "../src";
import { fastSim, type Json, openaiClient, postJson, readEvents } from "./helpers";

/** The Responses API (`/v1/responses`) as vLLM serves it, over raw HTTP: shapes, events, storage and errors. */

const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function respond(sim: RunningSimulator, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return postJson(sim, "/v1/responses", { input: "Hello there", ...body }, headers);
}

async function get(sim: RunningSimulator, path: string, method = "GET") {
  const res = await fetch(`${sim.url}${path}`, { method });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : undefined };
}

function openResponseStream(sim: RunningSimulator, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sim.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ input: "Hello there", stream: true, ...body }),
  });
}

/** Each event's name must be its data's `type`; the payloads, in order. */
function payloads(events: EventSourceMessage[]): Json[] {
  return events.map((e) => {
    const data = JSON.parse(e.data);
    expect(e.event).toBe(data.type);
    return data;
  });
}

const notFound = (id: string) => ({ message: `Response with id '${id}' not found.`, type: "invalid_request_error", param: "response_id", code: 404 });

describe("/v1/responses", () => {
  let sim: RunningSimulator;
  let tools: RunningSimulator;
  beforeAll(async () => {
    [sim, tools] = await Promise.all([fastSim({ models: ["resp-model"] }), fastSim({ models: ["tools-model"], toolCalling: true })]);
  });
  afterAll(async () => {
    await Promise.all([sim.close(), tools.close()]);
  });

  test("answers a response object with one message item and usage, in vLLM's shape", async () => {
    const res = await respond(sim, { instructions: "Be brief.", temperature: 0 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = res.body;
    expect(body.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "resp-model", instructions: "Be brief.", incomplete_details: null, previous_response_id: null, tools: [], tool_choice: "auto", temperature: 0, top_p: 1, background: false });
    expect(body.output).toHaveLength(1);
    const [message] = body.output;
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(message).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    expect(message.content).toEqual([{ type: "output_text", text: expect.any(String), annotations: [], logprobs: null }]);
    const usage = body.usage;
    expect(usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(0);
    expect(usage.output_tokens_details).toMatchObject({ reasoning_tokens: 0 });
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    // The instructions are part of the prompt.
    const without = await respond(sim, { temperature: 0 });
    expect(usage.input_tokens).toBeGreaterThan(without.body.usage.input_tokens);
    // max_output_tokens is the effective limit: the context window left over, by default.
    expect(body.max_output_tokens).toBe(8192 - usage.input_tokens);
  });

  test("max_output_tokens cuts the answer and marks it incomplete", async () => {
    const res = await respond(sim, { max_output_tokens: 3 });
    expect(res.body).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, max_output_tokens: 3 });
    expect(res.body.usage.output_tokens).toBe(3);
    expect((await respond(sim, { max_output_tokens: 0 })).body.error).toMatchObject({ param: "max_output_tokens", code: 400 });
  });

  test("stored responses: GET returns it; unknown ids, store:false, cancel and DELETE answer as vLLM does", async () => {
    const created = (await respond(sim, {})).body;
    const got = await get(sim, `/v1/responses/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);

    const unknown = await get(sim, "/v1/responses/resp_0123456789abcdef0123456789abcdef");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: notFound("resp_0123456789abcdef0123456789abcdef") });

    const unstored = (await respond(sim, { store: false })).body;
    expect((await get(sim, `/v1/responses/${unstored.id}`)).status).toBe(404);

    const cancel = await get(sim, `/v1/responses/${created.id}/cancel`, "POST");
    expect(cancel.body.error).toEqual({ message: "Cannot cancel a synchronous response.", type: "invalid_request_error", param: "response_id", code: 400 });
    expect((await get(sim, "/v1/responses/resp_x/cancel", "POST")).body.error).toEqual(notFound("resp_x"));

    const del = await get(sim, `/v1/responses/${created.id}`, "DELETE");
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toBe("GET");
    expect(del.body.error).toMatchObject({ message: "Method Not Allowed", type: "Method Not Allowed", code: 405 });
    // Still there: vLLM has no way to delete a response.
    expect((await get(sim, `/v1/responses/${created.id}`)).status).toBe(200);
  });

  test("previous_response_id continues the stored conversation; an unknown one is vLLM's 404", async () => {
    const first = (await respond(sim, { input: "My name is Ada.", instructions: "Be kind." })).body;
    const second = (await respond(sim, { input: "What is my name?", previous_response_id: first.id })).body;
    expect(second.previous_response_id).toBe(first.id);
    // The history (first input, first answer) is in the prompt.
    const alone = (await respond(sim, { input: "What is my name?" })).body;
    expect(second.usage.input_tokens).toBeGreaterThan(alone.usage.input_tokens + first.usage.output_tokens);
    const third = (await respond(sim, { input: "And again?", previous_response_id: second.id })).body;
    expect(third.usage.input_tokens).toBeGreaterThan(second.usage.input_tokens + second.usage.output_tokens);

    const missing = await respond(sim, { previous_response_id: "resp_gone" });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual(notFound("resp_gone"));
  });

  test("the store is this replica's, bounded and least-recently-used; ids never collide across replicas", async () => {
    const [a, b] = await Promise.all([fastSim({ responsesStoreSize: 2 }), fastSim({ responsesStoreSize: 0 })]);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await respond(a, {})).body.id);
      expect((await get(a, `/v1/responses/${ids[0]}`)).status).toBe(404); // evicted
      expect((await get(a, `/v1/responses/${ids[1]}`)).status).toBe(200); // now most recent
      ids.push((await respond(a, {})).body.id);
      expect((await get(a, `/v1/responses/${ids[1]}`)).status).toBe(200);
      expect((await get(a, `/v1/responses/${ids[2]}`)).status).toBe(404);
      // Another replica does not know them: the gateway must route follow-ups to the one that does.
      const elsewhere = await respond(b, { previous_response_id: ids[3] });
      expect(elsewhere.body.error).toEqual(notFound(ids[3] as string));
      // Without a store, `store` is silently ignored, as in vLLM without VLLM_ENABLE_RESPONSES_API_STORE.
      const kept = (await respond(b, {})).body;
      expect(kept.status).toBe("completed");
      expect((await get(b, `/v1/responses/${kept.id}`)).status).toBe(404);
      const all = new Set([...ids, kept.id, (await respond(sim, {})).body.id]);
      expect(all.size).toBe(6);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("vLLM's request_id extension becomes the response id", async () => {
    const res = await respond(sim, { request_id: "resp_from-the-gateway-1" });
    expect(res.body.id).toBe("resp_from-the-gateway-1");
    expect((await get(sim, "/v1/responses/resp_from-the-gateway-1")).status).toBe(200);
  });

  test("streams the Responses events with consecutive sequence numbers, ending with response.completed (no [DONE])", async () => {
    const res = await openResponseStream(sim, { max_output_tokens: 4 });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = payloads(await readEvents(res));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const created = events[0].response;
    expect(created).toMatchObject({ status: "in_progress", output: [], usage: null });
    const final = events[events.length - 1].response;
    expect(final.id).toBe(created.id);
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    const itemId = final.output[0].id;
    for (const d of deltas) expect(d).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0 });
    expect(deltas.map((d) => d.delta).join("")).toBe(final.output[0].content[0].text);
    expect(events[8].text).toBe(final.output[0].content[0].text);
    expect(final).toMatchObject({ status: "incomplete", usage: { output_tokens: 4 } });
    // Streamed responses are stored too.
    expect((await get(sim, `/v1/responses/${final.id}`)).body).toEqual(final);
  });

  test("a tool-calling model answers with a function_call item; a function_call_output gets a text answer", async () => {
    const ask = [{ role: "user", content: "Weather in Paris?" }];
    const res = await respond(tools, { model: "tools-model", input: ask, tools: [WEATHER_TOOL] });
    const [call] = res.body.output;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(call.id).toMatch(/^fc_[0-9a-f]{32}$/);
    expect(call.call_id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
    expect(typeof JSON.parse(call.arguments).city).toBe("string");
    expect(res.body.status).toBe("completed");

    const followUp = await respond(tools, {
      input: [...ask, { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments }, { type: "function_call_output", call_id: call.call_id, output: "18C, sunny" }],
      tools: [WEATHER_TOOL],
    });
    expect(followUp.body.output[0].type).toBe("message");
    // The same through the stored state: only the output is sent.
    const chained = await respond(tools, { previous_response_id: res.body.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "18C" }], tools: [WEATHER_TOOL] });
    expect(chained.body.output[0].type).toBe("message");
    // tool_choice none answers text; a named tool is called.
    expect((await respond(tools, { input: ask, tools: [WEATHER_TOOL], tool_choice: "none" })).body.output[0].type).toBe("message");
    expect((await respond(tools, { input: ask, tools: [WEATHER_TOOL], tool_choice: { type: "function", name: "get_weather" } })).body.output[0].name).toBe("get_weather");
  });

  test("a streamed function call: the item, argument deltas, then arguments.done and the item done", async () => {
    const events = payloads(await readEvents(await openResponseStream(tools, { input: "Weather?", tools: [WEATHER_TOOL] })));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(types.slice(-3)).toEqual(["response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
    const added = events[2].item;
    expect(added).toMatchObject({ type: "function_call", name: "get_weather", arguments: "", status: "in_progress" });
    const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(deltas.length).toBeGreaterThan(3);
    const args = deltas.map((d) => d.delta).join("");
    expect(JSON.parse(args)).toHaveProperty("city");
    const final = events[events.length - 1].response;
    expect(final.output).toEqual([{ ...added, arguments: args, status: "completed" }]);
    expect(events[events.length - 3]).toMatchObject({ item_id: added.id, name: "get_weather", arguments: args });
  });

  test("refusals in vLLM's envelope: embedding model, bad input items, unsupported features", async () => {
    const embed = await fastSim({ kind: "embed" });
    try {
      const res = await respond(embed, {});
      expect(res.body.error).toMatchObject({ message: "The model does not support Responses API", type: "BadRequestError", code: 400 });
      expect((await get(embed, "/v1/responses/resp_x")).body.error.message).toBe("The model does not support Responses API");
    } finally {
      await embed.close();
    }
    const cases: [Record<string, unknown>, string][] = [
      [{ input: [{ type: "function_call_output", output: "x" }] }, "input.0"],
      [{ input: [{ type: "web_search_call", id: "x" }] }, "input.0"],
      [{ tools: [{ type: "web_search_preview" }] }, "tools"],
      [{ background: true }, "background"],
      [{ prompt: { id: "pmpt_1" } }, "prompt"],
      [{ temperature: 5 }, "temperature"],
      [{ input: 42 }, "input"],
    ];
    for (const [body, param] of cases) {
      const res = await respond(sim, body);
      expect({ body, status: res.status, param: res.body.error?.param }).toEqual({ body, status: 400, param });
    }
    const long = await respond(sim, { input: "word ".repeat(9000) });
    expect(long.body.error).toMatchObject({ type: "invalid_request_error", param: "input", code: 400 });
  });

  test("faults: an engine error mid-stream is an `error` event; a drop cuts the stream", async () => {
    const errored = payloads(await readEvents(await openResponseStream(sim, { max_output_tokens: 10 }, { "X-Stream-Error-After-Tokens": "2" })));
    expect(errored.filter((e) => e.type === "response.output_text.delta")).toHaveLength(2);
    expect(errored[errored.length - 1]).toMatchObject({ type: "error", code: "server_error", sequence_number: errored.length - 1 });
    const received: string[] = [];
    await expect(readEvents(await openResponseStream(sim, { max_output_tokens: 10 }, { "X-Drop-After-Tokens": "2" }), (e) => received.push(e.event ?? ""))).rejects.toThrow();
    expect(received.filter((t) => t === "response.output_text.delta")).toHaveLength(2);
    expect(received).not.toContain("response.completed");
  });

  test("the API key guards the Responses routes as it guards every /v1 path", async () => {
    const keyed = await fastSim({ apiKey: "secret" });
    try {
      expect((await respond(keyed, {})).status).toBe(401);
      expect((await get(keyed, "/v1/responses/resp_x")).body).toEqual({ error: "Unauthorized" });
      const ok = await respond(keyed, {}, { authorization: "Bearer secret" });
      expect(ok.status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  test("the openai SDK: responses.create, responses.stream, responses.retrieve and a multi-turn conversation", async () => {
    const client = openaiClient(sim);
    const first = await client.responses.create({ model: "resp-model", input: "Hi, I am Ada.", instructions: "Be brief." });
    expect(first.output_text.length).toBeGreaterThan(0);
    const second = await client.responses.create({ model: "resp-model", input: "Who am I?", previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect((await client.responses.retrieve(second.id)).output_text).toBe(second.output_text);

    let streamed = "";
    const stream = client.responses.stream({ model: "resp-model", input: [{ role: "user", content: "Tell me more" }], previous_response_id: second.id });
    stream.on("response.output_text.delta", (e) => {
      streamed += e.delta;
    });
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe(streamed);
    expect(final.usage?.input_tokens).toBeGreaterThan(second.usage?.input_tokens ?? Infinity);
    await expect(client.responses.retrieve("resp_nope")).rejects.toMatchObject({ status: 404 });
  });
});
