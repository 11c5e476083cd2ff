import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

const MiB = 1024 * 1024;

/** A model server whose answers the test scripts: `script(req, res, body)` per request, by path. */
class ScriptedUpstream {
  server: Server;
  url = "";
  script: (req: IncomingMessage, res: ServerResponse, body: string) => void = (_q, res) => res.end("{}");
  /** Responses the upstream started but could not finish because the gateway closed the connection. */
  cut = 0;

  constructor() {
    this.server = createServer((req, res) => {
      // The gateway's health checks and load scraping: healthy, no metrics; the script answers inference only.
      if (req.method === "GET") {
        res.statusCode = req.url === "/health" ? 200 : 404;
        res.end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
        res.once("close", () => {
          if (!res.writableFinished) this.cut++;
        });
        this.script(req, res, Buffer.concat(chunks).toString("utf8"));
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }
}

/** An embeddings answer of about `bytes` bytes, as vLLM writes it (`model` is the served name). */
function embeddingsAnswer(bytes: number, model = "served-embed"): string {
  const vector = Array.from({ length: 64 }, (_, i) => Math.sin(i) / 3);
  const item = (index: number) => JSON.stringify({ index, object: "embedding", embedding: vector });
  const per = item(0).length + 1;
  const data = Array.from({ length: Math.max(1, Math.floor(bytes / per)) }, (_, i) => item(i));
  return `{"id":"embd-1","object":"list","created":1,"model":${JSON.stringify(model)},"data":[${data.join(",")}],"usage":{"prompt_tokens":7,"total_tokens":7,"completion_tokens":0}}`;
}

describe("non-streaming answers", () => {
  let h: Harness;
  const upstream = new ScriptedUpstream();
  const otherKeys = [generateApiKey(), generateApiKey()];
  beforeAll(async () => {
    const url = await upstream.start();
    h = await startHarness([{ id: "chat-model", sim: { latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 40, prefillTimePerTokenMs: 0 } } }], {
      settings: { answerMemoryBytes: 2 * MiB, answerMemoryPerKeyBytes: MiB, maxInFlightRequests: 4, maxInFlightRequestsPerKey: 3 },
      keyLimits: { tpm: 1_000_000 },
      extraKeys: otherKeys.map((k, i) => ({ name: `other-${i}`, sha256: hashApiKey(k) })),
      mapCatalog: (c) => ({ models: [...c.models, { id: "embed", category: "embedder", upstreamModel: "served-embed", upstream: { mode: "endpoints", endpoints: [{ url }] } }] }),
    });
  });
  afterAll(async () => {
    await h.close();
    upstream.server.close();
  });

  const embed = (key = h.key) =>
    fetch(`${h.gateway.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "embed", input: "x" }) });
  const answerMemory = () => h.gateway.metrics.registry.getSingleMetric("gateway_answer_memory_bytes")!.get().then((m) => m.values[0]?.value ?? -1);

  it("a large answer passes through whole, `model` rewritten in place, usage accounted, nothing held", async () => {
    const answer = embeddingsAnswer(5 * MiB);
    upstream.script = (_req, res) => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) }).end(answer);
    const res = await embed();
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toBe(answer.replace('"model":"served-embed"', '"model":"embed"'));
    expect(res.headers.get("content-length")).toBeNull(); // the length changed with `model`
    await waitFor(() => h.logs.some((l) => l.path === "/v1/embeddings" && l.promptTokens === 7), 2000, "usage in the request line");
    expect(await answerMemory()).toBe(0);
  });

  it("an answer of unknown length that proves larger than 1 MiB switches to passing through", async () => {
    const answer = embeddingsAnswer(3 * MiB);
    upstream.script = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }); // chunked
      for (let i = 0; i < answer.length; i += 256 * 1024) res.write(answer.slice(i, i + 256 * 1024));
      res.end();
    };
    const res = await embed();
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toMatchObject({ model: "embed", usage: { prompt_tokens: 7 } });
    await waitFor(async () => (await answerMemory()) === 0, 2000, "the head's memory back");
  });

  it("a large answer cut short after the status was sent: the client sees a failure, not a short body", async () => {
    const answer = embeddingsAnswer(3 * MiB);
    upstream.script = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
      res.write(answer.slice(0, 2 * MiB), () => res.destroy());
    };
    const res = await embed();
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it("held answers take memory from the key's share and the gateway's: 429, then 503, with Retry-After", async () => {
    // Answers of unknown length that never finish: each reserves the largest held size, 1 MiB.
    const stuck: ServerResponse[] = [];
    upstream.script = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"object":"list","data":[');
      stuck.push(res);
    };
    const first = embed();
    await waitFor(async () => (await answerMemory()) === MiB, 2000, "the first answer held");
    const sameKey = await embed();
    expect(sameKey.status).toBe(429);
    expect(sameKey.headers.get("retry-after")).toBe("1");
    expect(((await sameKey.json()) as { error: { code: string } }).error.code).toBe("inflight_bytes_exceeded");
    const second = embed(otherKeys[0]);
    await waitFor(async () => (await answerMemory()) === 2 * MiB, 2000, "the gateway's answer memory full");
    const third = await embed(otherKeys[1]);
    expect(third.status).toBe(503);
    expect(third.headers.get("retry-after")).toBe("1");
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe("gateway_overloaded");
    for (const res of stuck) res.end('{"index":0,"object":"embedding","embedding":[0.5]}],"model":"served-embed","usage":{"prompt_tokens":1,"total_tokens":1}}');
    for (const r of await Promise.all([first, second])) expect(((await r.json()) as { model: string }).model).toBe("embed");
    await waitFor(async () => (await answerMemory()) === 0, 2000, "answer memory back");
  });

  it("an error body is read only as far as its head: the rest is never taken from the model server", async () => {
    // An error page that never ends: the gateway must answer without reading it all.
    const cutBefore = upstream.cut;
    const piece = "<p>upstream proxy error</p>".repeat(2000);
    upstream.script = (_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      const pump = () => {
        while (!res.destroyed && res.write(piece));
      };
      res.on("drain", pump);
      pump();
    };
    const res = await embed();
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("server_error");
    await waitFor(() => upstream.cut === cutBefore + 1, 2000, "the model server's answer cut off");
  });

  it("a request body's memory is given back once it is sent, not when the (slow) answer comes", async () => {
    const body = chatBody("chat-model", { max_tokens: 40, messages: [{ role: "user", content: "y".repeat(200_000) }] });
    const pending = h.fetch("/v1/chat/completions", { json: body });
    const sim = h.sims["chat-model"]![0]!;
    await waitFor(() => sim.stats().running > 0, 2000, "the generation under way");
    expect(h.gateway.budget.reserved).toBe(0);
    expect((await pending).status).toBe(200);
  });

  it("requests in progress are capped per key (429) and gateway-wide (503), with Retry-After, before the body is read", async () => {
    const stream = (key: string) =>
      fetch(`${h.gateway.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(chatBody("chat-model", { max_tokens: 30, stream: true })) });
    const streams = await Promise.all([stream(h.key), stream(h.key), stream(h.key), stream(otherKeys[0]!)]);
    const keyShare = await stream(h.key);
    expect(keyShare.status).toBe(429);
    expect(keyShare.headers.get("retry-after")).toBe("1");
    expect(((await keyShare.json()) as { error: { code: string } }).error.code).toBe("concurrency_limit_exceeded");
    const gatewayFull = await stream(otherKeys[1]!);
    expect(gatewayFull.status).toBe(503);
    expect(gatewayFull.headers.get("retry-after")).toBe("1");
    expect(((await gatewayFull.json()) as { error: { code: string } }).error.code).toBe("gateway_overloaded");
    await Promise.all(streams.map((s) => s.text()));
    await waitFor(async () => (await h.fetch("/v1/chat/completions", { json: chatBody("chat-model", { max_tokens: 1 }) })).status === 200, 2000, "a slot free again");
  });
});
