import OpenAI, { APIError } from "openai";
import { startHarness, waitFor, type Harness } from "../support/harness";

/** The official openai SDK, unchanged but for base URL and key, against the gateway and simulated vLLM replicas. */
describe("openai SDK against the gateway", () => {
  let h: Harness;
  let client: OpenAI;

  beforeAll(async () => {
    h = await startHarness(
      [
        { id: "chat-model", replicas: 2, sim: { toolCalling: true } },
        { id: "plain-model", sim: { toolCalling: false } },
        { id: "embed-model", category: "embedder", sim: { embeddingDimensions: 64 } },
        { id: "org/slashed-model" },
        { id: "starting-model", sim: { startupDelayMs: 600_000 } },
        { id: "tiny-model", maxConcurrency: 1, routing: { queueTimeoutMs: 0 }, sim: { latency: { timeToFirstTokenMs: 5, interTokenLatencyMs: 40, prefillTimePerTokenMs: 0 } } },
        { id: "flaky-stream", sim: { dropStreamAfterTokens: 3, latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 5, prefillTimePerTokenMs: 0 } } },
      ],
      { settings: { retryAfterNotReadySeconds: 1, retryAfterSaturatedSeconds: 1 } },
    );
    client = h.client();
  });
  afterAll(() => h.close());

  it("lists only models with a ready replica, in the spec's shape", async () => {
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id).sort();
    expect(ids).toEqual(["chat-model", "embed-model", "flaky-stream", "org/slashed-model", "plain-model", "tiny-model"]);
    for (const m of page.data) {
      expect(m).toMatchObject({ object: "model", owned_by: "ai-platform" });
      expect(typeof m.created).toBe("number");
    }
  });

  it("retrieves a model, including ids with a slash", async () => {
    expect((await client.models.retrieve("org/slashed-model")).id).toBe("org/slashed-model");
    await expect(client.models.retrieve("nope")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("answers a chat completion deterministically at temperature 0", async () => {
    const req = { model: "chat-model", messages: [{ role: "user" as const, content: "Tell me about tides." }], temperature: 0 };
    const a = await client.chat.completions.create(req);
    const b = await client.chat.completions.create(req);
    expect(a.object).toBe("chat.completion");
    expect(a.model).toBe("chat-model");
    expect(a.choices[0]?.message.content).toBeTruthy();
    expect(b.choices[0]?.message.content).toBe(a.choices[0]?.message.content);
    expect(a.usage?.total_tokens).toBe((a.usage?.prompt_tokens ?? 0) + (a.usage?.completion_tokens ?? 0));
  });

  it("honours max_tokens with finish_reason length", async () => {
    const r = await client.chat.completions.create({ model: "chat-model", messages: [{ role: "user", content: "Go on." }], max_tokens: 3, seed: 7 });
    expect(r.choices[0]?.finish_reason).toBe("length");
    expect(r.usage?.completion_tokens).toBe(3);
  });

  it("streams chunks and a final usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model: "chat-model",
      messages: [{ role: "user", content: "Stream please." }],
      stream: true,
      stream_options: { include_usage: true },
      seed: 3,
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("returns tool calls from a tool-capable model and plain text from one that is not", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
    ];
    const messages = [{ role: "user" as const, content: "Weather in Paris?" }];
    const withTools = await client.chat.completions.create({ model: "chat-model", messages, tools });
    expect(withTools.choices[0]?.finish_reason).toBe("tool_calls");
    const call = withTools.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("get_weather");
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toHaveProperty("city");

    const ignored = await client.chat.completions.create({ model: "plain-model", messages, tools });
    expect(ignored.choices[0]?.message.tool_calls ?? []).toHaveLength(0);
    expect(ignored.choices[0]?.message.content).toBeTruthy();
  });

  it("embeds through the SDK's default base64 path, identical to the float path", async () => {
    const viaBase64 = await client.embeddings.create({ model: "embed-model", input: ["alpha", "beta"] });
    const viaFloat = await client.embeddings.create({ model: "embed-model", input: ["alpha", "beta"], encoding_format: "float" });
    expect(viaBase64.data).toHaveLength(2);
    viaBase64.data.forEach((d, i) => {
      expect(d.index).toBe(i);
      expect(d.embedding).toHaveLength(64);
      const norm = Math.sqrt(d.embedding.reduce((s, x) => s + x * x, 0));
      expect(norm).toBeCloseTo(1, 4);
      const f = viaFloat.data[i]!.embedding;
      d.embedding.forEach((x, j) => expect(x).toBeCloseTo(f[j]!, 5));
    });
    expect(viaBase64.data[0]!.embedding).not.toEqual(viaBase64.data[1]!.embedding);
  });

  describe("errors map to the SDK's classes", () => {
    it("AuthenticationError for a wrong key", async () => {
      const bad = h.client({ apiKey: "sk-not-a-real-key-at-all-0000" });
      const err = await bad.models.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((err as APIError).code).toBe("invalid_api_key");
    });

    it("NotFoundError with param model for an unknown model", async () => {
      const err = await client.chat.completions.create({ model: "gpt-7", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect((err as APIError).code).toBe("model_not_found");
      expect((err as APIError).param).toBe("model");
    });

    it("BadRequestError naming the parameter", async () => {
      const err = await client.chat.completions.create({ model: "chat-model", messages: [{ role: "user", content: "x" }], temperature: 3 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as APIError).param).toBe("temperature");
    });

    it("RateLimitError with Retry-After when every replica is at its cap", async () => {
      const busy = await client.chat.completions.create({ model: "tiny-model", messages: [{ role: "user", content: "long" }], stream: true, max_tokens: 50 });
      const iterator = busy[Symbol.asyncIterator]();
      await iterator.next(); // the one slot is now taken
      const err = await client.chat.completions.create({ model: "tiny-model", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect((err as APIError).headers?.get("retry-after")).toBe("1");
      busy.controller.abort();
    });

    it("InternalServerError (503) while the model is still starting", async () => {
      const err = await client.chat.completions.create({ model: "starting-model", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect((err as APIError).status).toBe(503);
      expect((err as APIError).code).toBe("model_not_ready");
    });

    it("the SDK's automatic retry waits for Retry-After", async () => {
      const retrying = h.client({ maxRetries: 2 });
      const before = h.logs.filter((l) => l.model === "starting-model").length;
      const started = Date.now();
      const err = await retrying.chat.completions.create({ model: "starting-model", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      await waitFor(() => h.logs.filter((l) => l.model === "starting-model").length - before === 3, 5000, "three attempts logged");
      // Two waits of Retry-After (1 s each); the SDK's own backoff would start at 0.5 s.
      expect(elapsed).toBeGreaterThanOrEqual(1900);
    });

    it("an upstream failure mid-stream raises in the SDK and the gateway stays up", async () => {
      const stream = await client.chat.completions.create({ model: "flaky-stream", messages: [{ role: "user", content: "go" }], stream: true, max_tokens: 30 });
      let chunks = 0;
      const err = await (async () => {
        for await (const _ of stream) chunks++;
      })().catch((e: unknown) => e);
      expect(chunks).toBeGreaterThan(0);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(String((err as Error).message)).toMatch(/mid-stream|without \[DONE\]/);
      expect((await fetch(`${h.gateway.url}/healthz`)).status).toBe(200);
    });
  });

  it("exposes the request id the gateway sent upstream", async () => {
    const { data, request_id } = await client.chat.completions
      .create({ model: "org/slashed-model", messages: [{ role: "user", content: "id?" }] })
      .withResponse();
    expect(request_id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(data.id).toContain(request_id!);
    const seen = h.sims["org/slashed-model"]![0]!.stats().lastRequestHeaders;
    expect(seen?.["x-request-id"]).toBe(request_id);
  });
});
