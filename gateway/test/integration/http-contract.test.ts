import { createParser } from "eventsource-parser";
import { z } from "zod";
import { startHarness, waitFor, chatBody, type Harness } from "../support/harness";

const EnvelopeSchema = z.strictObject({
  error: z.strictObject({ message: z.string().min(1), type: z.string().min(1), param: z.string().nullable(), code: z.string().nullable() }),
});

async function expectEnvelope(res: Response, status: number, code?: string | null) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  const body = EnvelopeSchema.parse(await res.json());
  if (code !== undefined) expect(body.error.code).toBe(code);
  return body.error;
}

/** Reads SSE events from a fetch response as they arrive. */
async function* sseEvents(res: Response): AsyncGenerator<string> {
  const queue: string[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e.data) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length) yield queue.shift()!;
  }
}

describe("HTTP contract of the gateway", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      [
        { id: "chat-model", replicas: 2 },
        { id: "embed-model", category: "embedder" },
        { id: "renamed", upstreamModel: "internal-weights-name" },
        { id: "failing", sim: { failureRate: 1, failureStatus: 500 } },
        // vLLM queues rather than refusing: saturation is the gateway's call, from the waiting gauge it scrapes.
        { id: "queue-full", routing: { maxWaitingRequests: 0, queueTimeoutMs: 0 }, sim: { maxNumSeqs: 1, latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 20, prefillTimePerTokenMs: 0 } } },
        { id: "slow-model", sim: { latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 30, prefillTimePerTokenMs: 0 } } },
        { id: "late-model", sim: { startupDelayMs: 700 } },
      ],
      { settings: { bodyLimitBytes: 64 * 1024 } },
    );
  });
  afterAll(() => h.close());

  it("401 envelope without a key, with a wrong scheme, and with a wrong key", async () => {
    await expectEnvelope(await h.fetch("/v1/models", { headers: { authorization: "" } }), 401, "invalid_api_key");
    await expectEnvelope(await h.fetch("/v1/models", { headers: { authorization: `Basic ${h.key}` } }), 401, "invalid_api_key");
    await expectEnvelope(await h.fetch("/v1/chat/completions", { json: chatBody("chat-model"), headers: { authorization: "Bearer sk-wrong" } }), 401, "invalid_api_key");
  });

  it("404 envelope for an unknown model and for an unknown path", async () => {
    const e = await expectEnvelope(await h.fetch("/v1/chat/completions", { json: chatBody("nope") }), 404, "model_not_found");
    expect(e.param).toBe("model");
    await expectEnvelope(await h.fetch("/v1/assistants"), 404, "unknown_url");
    await expectEnvelope(await fetch(`${h.gateway.url}/`), 404, "unknown_url");
  });

  it("400 envelopes for malformed JSON, wrong types and wrong endpoints", async () => {
    await expectEnvelope(await h.fetch("/v1/chat/completions", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    await expectEnvelope(await h.fetch("/v1/chat/completions", { method: "POST", body: '"a string"' }), 400);
    const e = await expectEnvelope(await h.fetch("/v1/chat/completions", { json: chatBody("chat-model", { max_tokens: 0 }) }), 400);
    expect(e.param).toBe("max_tokens");
    const wrong = await expectEnvelope(await h.fetch("/v1/embeddings", { json: { model: "chat-model", input: "x" } }), 400, "model_not_supported");
    expect(wrong.param).toBe("model");
  });

  it("413 envelope for a body over the limit", async () => {
    const big = chatBody("chat-model", { messages: [{ role: "user", content: "x".repeat(100 * 1024) }] });
    await expectEnvelope(await h.fetch("/v1/chat/completions", { json: big }), 413, "request_too_large");
  });

  it("normalizes model-server errors, whatever their shape, to the envelope", async () => {
    const e500 = await expectEnvelope(await h.fetch("/v1/chat/completions", { json: chatBody("failing") }), 500);
    expect(e500.type).toBe("server_error");
  });

  it("429 model_saturated with Retry-After when the model server's own queue is past the threshold, without sending it more", async () => {
    const [sim] = h.sims["queue-full"]!;
    // Traffic the gateway does not see (another gateway replica's): one request runs, two wait at the model server.
    const others = new AbortController();
    // The long one runs to its max_tokens (ignore_eos: 20 s at 20 ms a token) and holds the only slot until aborted;
    // the two short ones are sent once it runs, so they are the ones that wait.
    const send = (max_tokens: number, extra: Record<string, unknown> = {}) =>
      fetch(`${sim!.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify(chatBody("queue-full", { max_tokens, ...extra })), signal: others.signal }).catch(() => undefined);
    const direct = [send(1000, { ignore_eos: true })];
    try {
      await waitFor(() => sim!.stats().running === 1, 10_000, "the long request running at the model server");
      direct.push(send(1), send(1));
      await waitFor(() => sim!.stats().waiting === 2, 10_000, "two requests waiting at the model server");
      const replica = h.gateway.registry.get("queue-full")!.replicas[0]!;
      await waitFor(() => replica.saturated, 10_000, "the gateway to scrape the waiting gauge");
      const seen = sim!.stats().requestsTotal;
      const res = await h.fetch("/v1/chat/completions", { json: chatBody("queue-full") });
      expect(res.headers.get("retry-after")).toBe("1");
      const e = await expectEnvelope(res, 429, "model_saturated");
      expect(e.type).toBe("overloaded_error");
      expect(sim!.stats().requestsTotal).toBe(seen);
      expect(sim!.stats().rejectedTotal).toBe(0);
    } finally {
      others.abort();
      await Promise.all(direct);
    }
  });

  it("a body parsed without content-type (bare curl -d) still works", async () => {
    const res = await fetch(`${h.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}`, "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify(chatBody("chat-model")),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("echoes a caller's x-request-id, forwards it upstream, and replaces unsafe ones", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("renamed"), headers: { "x-request-id": "trace-abc.123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-abc.123");
    expect(h.sims["renamed"]![0]!.stats().lastRequestHeaders["x-request-id"]).toBe("trace-abc.123");
    const unsafe = await h.fetch("/v1/models", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(unsafe.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("passes unknown fields (vLLM extensions) through to the model server", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("renamed", { top_k: 7, guided_choice: ["a", "b"] }) });
    expect(res.status).toBe(200);
    expect(h.sims["renamed"]![0]!.stats().lastRequestBody).toMatchObject({ model: "internal-weights-name", top_k: 7, guided_choice: ["a", "b"] });
  });

  it("maps the deploy-time model id to the served name and back", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("renamed") });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe("renamed");
    const stream = await h.fetch("/v1/chat/completions", { json: chatBody("renamed", { stream: true, max_tokens: 3 }) });
    const models = new Set<string>();
    for await (const data of sseEvents(stream)) if (data !== "[DONE]") models.add(JSON.parse(data).model);
    expect([...models]).toEqual(["renamed"]);
  });

  it("relays each SSE chunk at once, while the model is still generating", async () => {
    const sim = h.sims["slow-model"]![0]!;
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("slow-model", { stream: true, max_tokens: 40 }) });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    let runningAtFirstToken: number | undefined;
    let last = "";
    for await (const data of sseEvents(res)) {
      last = data;
      if (runningAtFirstToken === undefined && data !== "[DONE]" && JSON.parse(data).choices?.[0]?.delta?.content) {
        runningAtFirstToken = sim.stats().running;
      }
    }
    // 40 tokens at 30 ms each were far from done: the first token was not held back until the end.
    expect(runningAtFirstToken).toBe(1);
    expect(last).toBe("[DONE]");
  });

  it("aborts the upstream request when the client disconnects mid-stream", async () => {
    const sim = h.sims["slow-model"]![0]!;
    const before = sim.stats().cancelledTotal;
    const ac = new AbortController();
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("slow-model", { stream: true, max_tokens: 200 }), signal: ac.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    ac.abort();
    await waitFor(() => sim.stats().cancelledTotal === before + 1, 5000, "upstream cancellation");
    await waitFor(() => sim.stats().running === 0, 5000, "slot freed");
    expect(h.logs.some((l) => l.model === "slow-model" && l.clientAborted === true)).toBe(true);
  });

  it("lists a model only once a replica is ready, answering 503 until then", async () => {
    const list = async () => ((await (await h.fetch("/v1/models")).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    if (!(await list()).includes("late-model")) {
      const r = await h.fetch("/v1/chat/completions", { json: chatBody("late-model") });
      expect(r.headers.get("retry-after")).toBeTruthy();
      await expectEnvelope(r, 503, "model_not_ready");
    }
    await waitFor(async () => (await list()).includes("late-model"), 10_000, "late-model listed");
    expect((await h.fetch("/v1/chat/completions", { json: chatBody("late-model") })).status).toBe(200);
  });

  it("probes answer without a key and are not logged", async () => {
    expect((await fetch(`${h.gateway.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${h.gateway.url}/readyz`)).status).toBe(200);
    expect(h.logs.some((l) => l.path === "/healthz" || l.path === "/readyz")).toBe(false);
  });

  it("probes answer on the metrics listener too, where client connections cannot crowd them out", async () => {
    const live = await fetch(`${h.gateway.opsUrl}/healthz`);
    expect({ status: live.status, body: await live.json() }).toEqual({ status: 200, body: { status: "ok" } });
    const ready = await fetch(`${h.gateway.opsUrl}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { status: "ready" } });
    expect((await fetch(`${h.gateway.opsUrl}/v1/models`)).status).toBe(404);
  });

  it("never writes the API key into a log line", () => {
    expect(h.rawLogs.length).toBeGreaterThan(5);
    expect(h.rawLogs.join("\n")).not.toContain(h.key);
    expect(h.logs.some((l) => l.apiKeyName === "test-key")).toBe(true);
  });
});
