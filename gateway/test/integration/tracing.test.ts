import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { request } from "undici";
import { startGatewayProcess } from "../../../scripts/lib/gateway-process";
import { settingsFromEnv } from "../../src/config/settings";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const traceparent = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

/** A model-server address that records each request's headers and passes it on to a simulator. */
async function recordingHop(target: () => string): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    if (req.url !== "/health" && req.url !== "/metrics") seen.push(req.headers);
    if (!target()) return void res.writeHead(503).end();
    void request(target() + req.url, { method: req.method as "GET" | "POST", headers: req.headers, body: req.method === "POST" ? req : undefined }).then(
      (up) => {
        res.writeHead(up.statusCode, up.headers as Record<string, string>);
        up.body.pipe(res);
      },
      () => res.destroy(),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

describe("traces: one GenAI span per inference request", () => {
  let h: Harness;
  let hop: Awaited<ReturnType<typeof recordingHop>>;
  const exporter = new InMemorySpanExporter();
  const spans = async (): Promise<ReadableSpan[]> => {
    await h.gateway.tracing!.flush();
    return exporter.getFinishedSpans();
  };
  beforeAll(async () => {
    let simUrl = "";
    hop = await recordingHop(() => simUrl);
    h = await startHarness([{ id: "chat", sim: { latency: { timeToFirstTokenMs: 30, interTokenLatencyMs: 2, prefillTimePerTokenMs: 0 } } }, { id: "vectors", category: "embedder" }, { id: "gone", replicas: 0, extraEndpoints: ["http://127.0.0.1:9"] }], {
      traceExporter: exporter,
      // The chat model is reached through the recording hop only.
      mapCatalog: (c) => ({
        ...c,
        models: [
          ...c.models.map((m) => (m.id === "chat" ? { ...m, upstream: { mode: "endpoints" as const, endpoints: [{ url: hop.url }] } } : m)),
          { id: "asleep", category: "generative" as const, upstream: { mode: "endpoints" as const, endpoints: [{ url: "http://127.0.0.1:9" }] }, wake: { timeoutMs: 200, maxHeld: 2 } },
        ],
        aliases: [{ id: "default", models: ["chat"] }],
      }),
    });
    simUrl = h.sims.chat![0]!.url;
    await waitFor(() => h.gateway.registry.get("chat")!.isReady, 10_000, "the chat model behind the hop");
  });
  afterAll(async () => {
    await h.close();
    hop.server.close();
  });
  beforeEach(() => exporter.reset());

  it("names the operation and the model, joins the caller's trace and carries it to the model server", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("default", { max_tokens: 4 }), headers: { traceparent } });
    expect(res.status).toBe(200);
    const [span, ...others] = await spans();
    expect(others).toEqual([]);
    expect(span!.name).toBe("chat chat");
    expect(span!.kind).toBe(SpanKind.CLIENT);
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(span!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "vllm",
      "gen_ai.request.model": "default",
      "gen_ai.response.model": "chat",
      "gen_ai.usage.output_tokens": 4,
      "http.response.status_code": 200,
      "server.address": hop.url,
      "ai_platform.api_key.name": "test-key",
      "ai_platform.alias": "default",
      "ai_platform.request_id": res.headers.get("x-request-id"),
    });
    expect(span!.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    // The model server got the gateway's span as its parent, in the same trace.
    expect(hop.seen.at(-1)!.traceparent).toBe(`00-${TRACE_ID}-${span!.spanContext().spanId}-01`);
  });

  it("records a stream's time to first token from the request's arrival", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("chat", { max_tokens: 5, stream: true }) });
    await res.text();
    const [span] = await spans();
    const ttft = span!.attributes["gen_ai.latency.time_to_first_token"] as number;
    expect(ttft).toBeGreaterThanOrEqual(0.03);
    const total = (span!.endTime[0] - span!.startTime[0]) + (span!.endTime[1] - span!.startTime[1]) / 1e9;
    expect(ttft).toBeLessThanOrEqual(total);
    expect(span!.attributes).toMatchObject({ "ai_platform.stream": true, "gen_ai.usage.output_tokens": 5 });
    // A root span of the gateway's own (no traceparent sent).
    expect(span!.parentSpanContext).toBeUndefined();
  });

  it("embeddings get their operation; a model that cannot answer marks the span as an error", async () => {
    await h.fetch("/v1/embeddings", { json: { model: "vectors", input: "x" } });
    const [embed] = await spans();
    expect(embed!.name).toBe("embeddings vectors");
    exporter.reset();
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("gone") });
    expect(res.status).toBe(503);
    const [failed] = await spans();
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed!.attributes).toMatchObject({ "error.type": "model_not_ready", "http.response.status_code": 503 });
    expect(failed!.attributes["ai_platform.held_ms"]).toBeUndefined();
  });

  it("a request held for its model to wake says for how long (here until its wake timeout)", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("asleep") });
    expect(res.status).toBe(503);
    const [span] = await spans();
    expect(typeof span!.attributes["ai_platform.held_ms"]).toBe("number");
    const line = () => h.logs.find((l) => l.msg === "request" && l.model === "asleep");
    await waitFor(() => line() !== undefined, 5000, "the request line");
    expect(line()!.heldMs).toBe(span!.attributes["ai_platform.held_ms"]);
  });
});

describe("traces over OTLP/HTTP", () => {
  it("exports to the configured endpoint (a collector on loopback)", async () => {
    const bodies: unknown[] = [];
    const collector = createServer((req, res) => {
      let text = "";
      req.on("data", (d: Buffer) => (text += d.toString()));
      req.on("end", () => {
        bodies.push({ path: req.url, type: req.headers["content-type"], body: JSON.parse(text) as unknown });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    collector.listen(0, "127.0.0.1");
    await once(collector, "listening");
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
    // The production bundle in a process of its own: the exporter as the image runs it.
    const gw = await startGatewayProcess({ settings: { otlpTracesEndpoint: endpoint } });
    try {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${gw.keys.client!}`, "content-type": "application/json" },
        body: JSON.stringify(chatBody("chat", { max_tokens: 2 })),
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
      // Exported within the batch delay (1 s), or at the latest when the process stops.
      await waitFor(() => bodies.length > 0, 5000, "an export");
      const sent = bodies[0] as { path: string; type: string; body: { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string }[] }[] }[] } };
      expect(sent.path).toBe("/v1/traces");
      expect(sent.type).toMatch(/json/);
      const [resourceSpans] = sent.body.resourceSpans;
      expect(resourceSpans!.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "ai-platform-gateway" } });
      expect(resourceSpans!.scopeSpans[0]!.spans.map((s) => s.name)).toEqual(["chat chat"]);
    } finally {
      await gw.stop();
      collector.close();
    }
  });

  it("refuses an endpoint that carries credentials, naming the variable (they belong in OTEL_EXPORTER_OTLP_HEADERS)", () => {
    expect(() => settingsFromEnv({ GATEWAY_OTLP_TRACES_ENDPOINT: "https://user:token@collector.example/v1/traces" })).toThrow(
      /GATEWAY_OTLP_TRACES_ENDPOINT: must not carry credentials/,
    );
    expect(() => settingsFromEnv({ GATEWAY_OTLP_TRACES_ENDPOINT: "collector:4318" })).toThrow(/GATEWAY_OTLP_TRACES_ENDPOINT/);
  });

  it("is off by default: no tracer, no span on any request", async () => {
    const h = await startHarness([{ id: "chat" }]);
    try {
      expect(h.gateway.tracing).toBeUndefined();
      expect((await h.fetch("/v1/chat/completions", { json: chatBody("chat") })).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});
