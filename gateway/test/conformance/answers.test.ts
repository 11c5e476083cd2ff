import { chatBody, startHarness, type Harness } from "../support/harness";
import { describeWithOpenApi, loadOpenApi, type OpenApi } from "./openapi";
import { readEvents, streamChunks } from "./sse";

/**
 * Every successful answer of the gateway, in front of simulated vLLM replicas, against the response schema OpenAI's
 * published OpenAPI document gives its operation: what a strict, schema-generated client decodes. Streams are
 * checked chunk by chunk, Responses API events each against the member of `ResponseStreamEvent` for its type.
 */

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["city"] },
  },
} as const;

const person = {
  type: "object",
  properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 }, tags: { type: "array", items: { type: "string" } } },
  required: ["name", "age", "tags"],
  additionalProperties: false,
} as const;

interface ChatAnswer {
  choices: { message: { content: string | null; tool_calls?: unknown[] }; logprobs: { content: unknown[] | null } | null }[];
}

describeWithOpenApi("answers against OpenAI's published OpenAPI document", () => {
  let api: OpenApi;
  let h: Harness;

  beforeAll(async () => {
    api = loadOpenApi();
    h = await startHarness([{ id: "chat", sim: { toolCalling: true } }, { id: "vectors", category: "embedder" }], {
      settings: { responseIdSecret: "a-conformance-secret-of-enough-length" },
    });
  });
  afterAll(() => h?.close());

  /** The answer against the schema, the problems listed by where they are (empty when it conforms). */
  function expectConforms(pointer: string, value: unknown, what = pointer) {
    expect({ what, problems: api.check(pointer, value) }).toEqual({ what, problems: [] });
  }

  async function post(path: string, body: Record<string, unknown>): Promise<unknown> {
    const res = await h.fetch(path, { json: body });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    return res.json();
  }

  async function postStream(path: string, body: Record<string, unknown>) {
    const res = await h.fetch(path, { json: { ...body, stream: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    return readEvents(res);
  }

  describe("models", () => {
    it("GET /v1/models is a ListModelsResponse", async () => {
      const res = await h.fetch("/v1/models");
      expect(res.status).toBe(200);
      expectConforms(api.responsePointer("/models", "get"), await res.json());
    });

    it("GET /v1/models/{model} is a Model", async () => {
      const res = await h.fetch("/v1/models/chat");
      expect(res.status).toBe(200);
      expectConforms(api.responsePointer("/models/{model}", "get"), await res.json());
    });
  });

  describe("chat completions", () => {
    const schema = () => api.responsePointer("/chat/completions", "post");

    it("plain", async () => {
      expectConforms(schema(), await post("/v1/chat/completions", chatBody("chat", { max_tokens: 12 })));
    });

    it("with tools: an answer carrying tool calls", async () => {
      const body = (await post("/v1/chat/completions", chatBody("chat", { tools: [weather] }))) as ChatAnswer;
      expect(body.choices[0]!.message.tool_calls?.length).toBeGreaterThan(0);
      expectConforms(schema(), body);
    });

    it("with logprobs and top_logprobs: the tokens' log probabilities", async () => {
      const body = (await post("/v1/chat/completions", chatBody("chat", { max_tokens: 8, logprobs: true, top_logprobs: 2 }))) as ChatAnswer;
      // The simulator's feature, as vLLM: a log probability per generated token (null where it is missing).
      expect(body.choices[0]!.logprobs?.content?.length).toBeGreaterThan(0);
      expectConforms(schema(), body);
    });

    it("with response_format json_object: the content is JSON", async () => {
      const body = (await post("/v1/chat/completions", chatBody("chat", { max_tokens: 200, response_format: { type: "json_object" } }))) as ChatAnswer;
      expectConforms(schema(), body);
      // The simulator's feature, as vLLM's structured output: prose here means the simulator lacks it.
      expect(() => JSON.parse(body.choices[0]!.message.content ?? "") as unknown).not.toThrow();
    });

    it("with response_format json_schema: the content is an instance of the schema", async () => {
      const format = { type: "json_schema", json_schema: { name: "person", strict: true, schema: person } };
      const body = (await post("/v1/chat/completions", chatBody("chat", { max_tokens: 200, response_format: format }))) as ChatAnswer;
      expectConforms(schema(), body);
      const content = body.choices[0]!.message.content ?? "";
      expect(() => JSON.parse(content) as unknown).not.toThrow();
      const instance = JSON.parse(content) as { name?: unknown; age?: unknown; tags?: unknown };
      expect(typeof instance.name).toBe("string");
      expect(Number.isInteger(instance.age)).toBe(true);
      expect(Array.isArray(instance.tags)).toBe(true);
    });
  });

  describe("chat streams: every chunk", () => {
    const schema = () => api.responsePointer("/chat/completions", "post", 200, "text/event-stream");
    const cases: [string, Record<string, unknown>][] = [
      ["plain", { max_tokens: 10 }],
      ["include_usage", { max_tokens: 10, stream_options: { include_usage: true } }],
      ["tools", { tools: [weather] }],
      ["logprobs", { max_tokens: 6, logprobs: true, top_logprobs: 2 }],
    ];

    it.each(cases)("%s", async (_name, extra) => {
      const chunks = streamChunks(await postStream("/v1/chat/completions", chatBody("chat", extra)));
      expect(chunks.length).toBeGreaterThan(2);
      chunks.forEach((c, i) => expectConforms(schema(), c, `chunk ${i}`));
    });

    it("include_usage: the last chunk carries the usage, no choices", async () => {
      const chunks = streamChunks(await postStream("/v1/chat/completions", chatBody("chat", { max_tokens: 4, stream_options: { include_usage: true } })));
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
    });

    it("logprobs: the token chunks carry log probabilities", async () => {
      const chunks = streamChunks(await postStream("/v1/chat/completions", chatBody("chat", { max_tokens: 4, logprobs: true }))) as ChatAnswer[];
      expect(chunks.some((c) => (c.choices[0]?.logprobs?.content?.length ?? 0) > 0)).toBe(true);
    });
  });

  describe("legacy completions", () => {
    const schema = () => api.responsePointer("/completions", "post");

    it("an answer is a CreateCompletionResponse", async () => {
      expectConforms(schema(), await post("/v1/completions", { model: "chat", prompt: ["Once upon a time", "The sea"], max_tokens: 8 }));
    });

    it("with logprobs", async () => {
      const body = (await post("/v1/completions", { model: "chat", prompt: "Once upon a time", max_tokens: 6, logprobs: 2 })) as { choices: { logprobs: { tokens?: unknown[] } | null }[] };
      expect(body.choices[0]!.logprobs?.tokens?.length).toBeGreaterThan(0);
      expectConforms(schema(), body);
    });

    // The document declares no event-stream schema for completions: each chunk is the completion object.
    it("every chunk of a stream, with usage", async () => {
      const chunks = streamChunks(await postStream("/v1/completions", { model: "chat", prompt: "Once upon a time", max_tokens: 8, stream_options: { include_usage: true } }));
      expect(chunks.length).toBeGreaterThan(2);
      chunks.forEach((c, i) => expectConforms(schema(), c, `chunk ${i}`));
    });
  });

  describe("embeddings", () => {
    it.each(["float", "base64"])("%s", async (encoding_format) => {
      const body = await post("/v1/embeddings", { model: "vectors", input: ["the sea", "the tide"], encoding_format });
      expectConforms(api.responsePointer("/embeddings", "post"), body);
    });
  });

  describe("the Responses API", () => {
    const schema = () => api.responsePointer("/responses", "post");

    /** Each event against its own member of ResponseStreamEvent, so a problem names the event and its field. */
    function expectEventsConform(events: { event?: string; data: string }[]) {
      expect(events.length).toBeGreaterThan(3);
      for (const [i, e] of events.entries()) {
        const payload = JSON.parse(e.data) as { type: string };
        expect(e.event ?? payload.type).toBe(payload.type);
        const pointer = api.streamEventPointer(payload.type);
        expect({ type: payload.type, declared: pointer !== undefined }).toEqual({ type: payload.type, declared: true });
        expectConforms(pointer!, payload, `event ${i} ${payload.type}`);
      }
    }

    it("POST /v1/responses is a Response, and GET /v1/responses/{id} the same", async () => {
      const created = (await post("/v1/responses", { model: "chat", input: "Say something about the sea.", max_output_tokens: 16 })) as { id: string };
      expectConforms(schema(), created, "POST");
      const res = await h.fetch(`/v1/responses/${created.id}`);
      expect(res.status).toBe(200);
      expectConforms(api.responsePointer("/responses/{response_id}", "get"), await res.json(), "GET");
    });

    it("with function tools: a function_call item", async () => {
      const tools = [{ type: "function", name: weather.function.name, description: weather.function.description, parameters: weather.function.parameters }];
      const body = (await post("/v1/responses", { model: "chat", input: "What is the weather in Oslo?", tools })) as { output: { type: string }[] };
      expect(body.output.map((o) => o.type)).toContain("function_call");
      expectConforms(schema(), body);
    });

    it("every event of a stream", async () => {
      expectEventsConform(await postStream("/v1/responses", { model: "chat", input: "Tell me about tides", max_output_tokens: 8 }));
    });

    it("every event of a stream with function tools", async () => {
      const tools = [{ type: "function", name: weather.function.name, parameters: weather.function.parameters }];
      const events = await postStream("/v1/responses", { model: "chat", input: "What is the weather in Oslo?", tools });
      expect(events.map((e) => e.event)).toContain("response.function_call_arguments.done");
      expectEventsConform(events);
    });
  });
});
