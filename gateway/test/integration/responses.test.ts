import OpenAI from "openai";
import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { startHarness, waitFor, type Harness } from "../support/harness";

/**
 * The Responses API and legacy completions through the gateway (issue 16, items 1 and 2), with the OpenAI SDK
 * against simulated vLLM replicas on loopback; stored responses followed up across three replicas.
 */

const other = generateApiKey();

describe("the Responses API through the gateway", () => {
  let h: Harness;
  let client: OpenAI;

  beforeAll(async () => {
    h = await startHarness([{ id: "m", replicas: 3, sim: { toolCalling: true } }], {
      extraKeys: [{ name: "other-key", sha256: hashApiKey(other) }],
      settings: { responseIdSecret: "a-test-secret-of-enough-length" },
    });
    client = h.client();
    await waitFor(() => h.gateway.registry.get("m")!.replicas.every((r) => r.ready), 10_000, "replicas ready");
  });
  afterAll(() => h.close());

  it("responses.create: the gateway's id, usage without vLLM's per-turn lists, one log line", async () => {
    const r = await client.responses.create({ model: "m", input: "Say something about the sea.", max_output_tokens: 20 });
    expect(r.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(r.status).toMatch(/completed|incomplete/);
    expect(r.output_text.length).toBeGreaterThan(0);
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
    // vLLM's per-turn lists dropped; the schema's required cache_write_tokens present (vLLM writes none).
    expect(r.usage!.input_tokens_details).toEqual({ cached_tokens: expect.any(Number), cache_write_tokens: 0 });
    expect(Object.keys(r.usage!.output_tokens_details)).not.toContain("output_tokens_per_turn");
    await waitFor(() => h.logs.some((l) => l.responseId === r.id), 2000, "log line");
    const line = h.logs.find((l) => l.responseId === r.id)!;
    expect(line).toMatchObject({ path: "/v1/responses", status: 200, model: "m", promptTokens: r.usage!.input_tokens, completionTokens: r.usage!.output_tokens });
  });

  it("responses.stream: named events, the final response with usage, and the same id in both", async () => {
    const stream = client.responses.stream({ model: "m", input: "Tell me about tides", max_output_tokens: 12 });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_text.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(final.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(final.usage!.output_tokens).toBeGreaterThan(0);
    expect(Object.keys(final.usage!.input_tokens_details)).toEqual(["cached_tokens", "cache_write_tokens"]);
    // Stored: retrievable through the gateway.
    const got = await client.responses.retrieve(final.id);
    expect(got.id).toBe(final.id);
  });

  it("a raw stream keeps vLLM's framing: event and data lines, no [DONE]", async () => {
    const res = await h.fetch("/v1/responses", { json: { model: "m", input: "Hi", stream: true, max_output_tokens: 3 } });
    const text = await res.text();
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(text.startsWith("event: response.created\ndata: ")).toBe(true);
    expect(text).not.toContain("[DONE]");
    expect(text).not.toContain("_per_turn");
  });

  it("a five-turn conversation with previous_response_id across three replicas stays on one replica", async () => {
    let previous: string | undefined;
    const replicas = new Set<unknown>();
    for (let turn = 0; turn < 5; turn++) {
      const r: OpenAI.Responses.Response = await client.responses.create({ model: "m", input: `Turn ${turn}: go on.`, previous_response_id: previous, max_output_tokens: 8 });
      expect(r.previous_response_id ?? undefined).toBe(previous);
      previous = r.id;
      await waitFor(() => h.logs.some((l) => l.responseId === r.id), 2000, "log line");
      replicas.add(h.logs.find((l) => l.responseId === r.id)!.replica);
    }
    expect(replicas.size).toBe(1);
    // The GET and the cancel go to the same replica (vLLM refuses to cancel a finished response: 400).
    const got = await client.responses.retrieve(previous!);
    expect(got.id).toBe(previous);
    await expect(client.responses.cancel(previous!)).rejects.toMatchObject({ status: 400 });
  });

  it("another key gets 404 for a response it does not own, on every route", async () => {
    const r = await client.responses.create({ model: "m", input: "Mine.", max_output_tokens: 4 });
    const stranger = h.client({ apiKey: other });
    await expect(stranger.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404, code: "response_not_found", param: "response_id" });
    await expect(stranger.responses.create({ model: "m", input: "Yours?", previous_response_id: r.id })).rejects.toMatchObject({
      status: 404,
      code: "response_not_found",
      param: "previous_response_id",
    });
    await expect(stranger.responses.cancel(r.id)).rejects.toMatchObject({ status: 404, code: "response_not_found" });
    // An id the gateway never minted is the same answer.
    await expect(client.responses.retrieve("resp_0123")).rejects.toMatchObject({ status: 404, code: "response_not_found" });
  });

  it("DELETE answers 405 as vLLM does, after the owner check", async () => {
    const r = await client.responses.create({ model: "m", input: "Keep me.", max_output_tokens: 4 });
    const del = await h.fetch(`/v1/responses/${r.id}`, { method: "DELETE" });
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toBe("GET");
    expect(((await del.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    const stranger = await h.fetch(`/v1/responses/${r.id}`, { method: "DELETE", headers: { authorization: `Bearer ${other}` } });
    expect(stranger.status).toBe(404);
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
  });

  it("refuses background responses (they would escape the key's limits and the usage metrics) with 400 naming background", async () => {
    const res = await h.fetch("/v1/responses", { json: { model: "m", input: "Hi", background: true } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string; message: string } }).error).toMatchObject({ param: "background", message: expect.stringContaining("background responses are not served") });
  });

  it("store: false is not stored: the holding replica's own 404", async () => {
    const r = await client.responses.create({ model: "m", input: "Forget me.", store: false, max_output_tokens: 4 });
    await expect(client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
  });

  it("function tools: a call, its output as input, and an answer", async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: "function", name: "tide_table", description: "tides", parameters: { type: "object", properties: { harbour: { type: "string" } }, required: ["harbour"] }, strict: false },
    ];
    const first = await client.responses.create({ model: "m", input: "High water in Brest?", tools });
    const call = first.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.name).toBe("tide_table");
    const second = await client.responses.create({
      model: "m",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "06:12" }],
      tools,
    });
    expect(second.output_text.length).toBeGreaterThan(0);
  });

  it("counts the new endpoints in the metrics, with their tokens", async () => {
    const text = await (await fetch(h.gateway.metricsUrl)).text();
    expect(text).toMatch(/gateway_requests_total\{model="m",endpoint="\/v1\/responses",status="200",key="test-key"\} [1-9]/);
    expect(text).toMatch(/gateway_requests_total\{model="m",endpoint="\/v1\/responses\/\{id\}",status="200",key="test-key"\} [1-9]/);
    expect(text).toMatch(/gateway_requests_total\{model="m",endpoint="\/v1\/responses\/\{id\}\/cancel",status="400",key="test-key"\} 1/);
  });
});

describe("legacy completions through the gateway", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "m" }, { id: "e", category: "embedder" }]);
  });
  afterAll(() => h.close());

  it("completions.create answers text_completion with usage", async () => {
    const c = await h.client().completions.create({ model: "m", prompt: "Once upon a time", max_tokens: 5 });
    expect(c.object).toBe("text_completion");
    expect(c.choices[0]!.text.length).toBeGreaterThan(0);
    expect(c.usage!.completion_tokens).toBeLessThanOrEqual(5);
  });

  it("streamed: text chunks; the usage chunk only when asked for", async () => {
    const plain = await h.client().completions.create({ model: "m", prompt: "Once", max_tokens: 4, stream: true });
    let text = "";
    let usage = 0;
    for await (const chunk of plain) {
      text += chunk.choices[0]?.text ?? "";
      if (chunk.usage) usage++;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage).toBe(0);
    const asked = await h.client().completions.create({ model: "m", prompt: "Once", max_tokens: 4, stream: true, stream_options: { include_usage: true } });
    let last: OpenAI.Completions.Completion | undefined;
    for await (const chunk of asked) last = chunk;
    expect(last!.usage!.completion_tokens).toBe(4);
  });

  it("refuses an embedding model and a bad prompt with 400", async () => {
    await expect(h.client().completions.create({ model: "e", prompt: "x" })).rejects.toMatchObject({ status: 400, code: "model_not_supported" });
    const res = await h.fetch("/v1/completions", { json: { model: "m", prompt: 42 } });
    expect(res.status).toBe(400);
  });

  it("counts /v1/completions in the metrics", async () => {
    const text = await (await fetch(h.gateway.metricsUrl)).text();
    expect(text).toMatch(/gateway_requests_total\{model="m",endpoint="\/v1\/completions",status="200",key="test-key"\} [1-9]/);
    expect(text).toMatch(/gateway_tokens_total\{model="m",key="test-key",type="completion"\} [1-9]/);
  });
});

describe("stored responses reached through an alias", () => {
  let h: Harness;
  const aliasOnly = generateApiKey();
  beforeAll(async () => {
    h = await startHarness([{ id: "big" }, { id: "small" }], {
      extraKeys: [{ name: "alias-only", sha256: hashApiKey(aliasOnly), models: ["chat"] }],
      settings: { responseIdSecret: "a-test-secret-of-enough-length" },
      mapCatalog: (c) => ({ ...c, aliases: [{ id: "chat", models: ["big", "small"] }] }),
    });
    await waitFor(() => ["big", "small"].every((m) => h.gateway.registry.get(m)!.isReady), 10_000, "models ready");
  });
  afterAll(() => h.close());

  it("a key given only the alias reads its own stored response, and a continued turn stays on the model that holds it", async () => {
    const client = h.client({ apiKey: aliasOnly });
    // The alias prefers "big", but "big" is taken out: the first turn goes to "small".
    const big = h.gateway.registry.get("big")!;
    for (const r of big.replicas) r.eject("test");
    const first = await client.responses.create({ model: "chat", input: "Remember the number 7.", max_output_tokens: 4 });
    expect(first.model).toBe("small");
    expect((await client.responses.retrieve(first.id)).id).toBe(first.id);
    // "big" is back and preferred again; the conversation stays where its state is.
    await waitFor(() => big.isReady, 10_000, "big back");
    const next = await client.responses.create({ model: "chat", input: "Which number?", previous_response_id: first.id, max_output_tokens: 4 });
    expect(next.model).toBe("small");
    expect(h.sims.big![0]!.stats().completedTotal).toBe(0);
  });
});

describe("a Responses stream of a model served under another name", () => {
  it("names the catalog id in every response object it carries, and the upstream name nowhere", async () => {
    const h = await startHarness([{ id: "m", upstreamModel: "Org/M-Served-Name" }], { settings: { responseIdSecret: "a-test-secret-of-enough-length" } });
    try {
      const res = await h.fetch("/v1/responses", { json: { model: "m", input: "Hi", stream: true, max_output_tokens: 3 } });
      const text = await res.text();
      expect(text).not.toContain("Org/M-Served-Name");
      const models = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { response?: { model?: string } }).filter((e) => e.response).map((e) => e.response!.model);
      expect(models.length).toBeGreaterThanOrEqual(2); // response.created ... response.completed
      expect(new Set(models)).toEqual(new Set(["m"]));
      const plain = (await (await h.fetch("/v1/responses", { json: { model: "m", input: "Hi", max_output_tokens: 3 } })).json()) as { model: string };
      expect(plain.model).toBe("m");
    } finally {
      await h.close();
    }
  });
});
