import { request } from "undici";
import { createParser } from "eventsource-parser";
import { spawnSimulator, stopAll } from "../../../scripts/lib/processes";
import { startHarness, waitFor, chatBody, type Harness } from "../support/harness";
import type { CatalogInput } from "../../src/config/catalog";
import type { ChildProcess } from "node:child_process";

/**
 * Faults a GPU fleet produces, with model servers as real OS processes killed for real (SIGKILL), and the
 * gateway in process so its state can be inspected.
 */

interface StreamResult {
  events: string[];
  comments: number;
  done: boolean;
  error?: { message: string; code: string | null; type: string };
}

async function readStream(res: Response): Promise<StreamResult> {
  const out: StreamResult = { events: [], comments: 0, done: false };
  const parser = createParser({
    onEvent: (e) => {
      if (e.data === "[DONE]") out.done = true;
      else {
        out.events.push(e.data);
        const parsed = JSON.parse(e.data) as { error?: StreamResult["error"] };
        if (parsed.error) out.error = parsed.error;
      }
    },
    onComment: () => void out.comments++,
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return out;
}

/** A catalog whose model points at simulator processes. */
function processCatalog(models: Record<string, string[]>, routing: Record<string, unknown> = {}) {
  return (c: CatalogInput): CatalogInput => ({
    models: c.models.map((m) =>
      models[m.id] ? { ...m, routing: { ...m.routing, ...routing }, upstream: { mode: "endpoints", endpoints: models[m.id]!.map((url) => ({ url })) } } : m,
    ),
  });
}

async function abortedRequests(simUrl: string): Promise<number> {
  const text = await (await fetch(`${simUrl}/metrics`)).text();
  return Number(/vllm:request_success_total\{[^}]*finished_reason="abort"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
}

describe("faults with model servers as real processes", () => {
  const procs: ChildProcess[] = [];
  afterAll(() => stopAll(procs));

  async function sim(args: string[] = [], model = "m"): Promise<{ url: string; proc: ChildProcess }> {
    const s = await spawnSimulator(["--model", model, "--port", "0", "--ttft-ms", "2", "--itl-ms", "20", "--prefill-time-per-token-ms", "0", ...args]);
    procs.push(s.proc);
    return s;
  }

  describe("a replica killed", () => {
    let h: Harness;
    let a: { url: string; proc: ChildProcess };
    let b: { url: string; proc: ChildProcess };
    beforeAll(async () => {
      a = await sim();
      b = await sim();
      // Health checks far apart: only the gateway's own retry and passive ejection can hide the death.
      h = await startHarness([{ id: "m" }], { settings: { healthIntervalMs: 60_000 }, mapCatalog: processCatalog({ m: [a.url, b.url] }) });
    });
    afterAll(() => h.close());

    it("mid-stream: the client gets an SSE error event and [DONE], and the gateway stays healthy", async () => {
      const res = await h.fetch("/v1/chat/completions", { json: chatBody("m", { stream: true, max_tokens: 200 }) });
      expect(res.status).toBe(200);
      const reading = readStream(res);
      // Kill whichever replica is serving the stream once it is under way.
      await waitFor(() => h.gateway.registry.get("m")!.replicas.some((r) => r.inFlight === 1), 5000, "stream in flight");
      const serving = h.gateway.registry.get("m")!.replicas.find((r) => r.inFlight === 1)!;
      const victim = serving.url === a.url ? a : b;
      await new Promise((r) => setTimeout(r, 100));
      victim.proc.kill("SIGKILL");
      const result = await reading;
      expect(result.events.length).toBeGreaterThan(1);
      expect(result.error).toMatchObject({ type: "server_error", code: "upstream_stream_interrupted" });
      expect(result.done).toBe(true);
      expect((await fetch(`${h.gateway.url}/healthz`)).status).toBe(200);
    });

    it("before the response: refused connections are retried on the surviving replica, the client never sees them", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await h.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 2 }) })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      expect(h.gateway.registry.get("m")!.replicas.filter((r) => r.ready)).toHaveLength(1);
    });
  });

  describe("slow model servers", () => {
    let h: Harness;
    beforeAll(async () => {
      const slowFirstByte = await sim(["--ttft-ms", "3000"]);
      const stalls = await sim(["--ttft-ms", "2", "--itl-ms", "2000"], "stalls");
      const busy = await sim(["--ttft-ms", "2", "--itl-ms", "30"], "busy");
      h = await startHarness([{ id: "m" }, { id: "stalls" }, { id: "busy" }], {
        settings: { upstreamHeadersTimeoutMs: 500, upstreamIdleTimeoutMs: 500, sseKeepAliveMs: 100 },
        mapCatalog: (c) => {
          const withSims = processCatalog({ m: [slowFirstByte.url], stalls: [stalls.url], busy: [busy.url] })(c);
          return { models: withSims.models.map((m) => (m.id === "busy" ? { ...m, maxConcurrency: 1, routing: { queueTimeoutMs: 5000 } } : m)) };
        },
      });
    });
    afterAll(() => h.close());

    it("no response headers in time: 504 envelope", async () => {
      const res = await h.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 2 }) });
      expect(res.status).toBe(504);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    });

    it("a stream that goes silent: error event (upstream_timeout) and [DONE]", async () => {
      const res = await h.fetch("/v1/chat/completions", { json: chatBody("stalls", { stream: true, max_tokens: 10 }) });
      const result = await readStream(res);
      expect(result.error?.code).toBe("upstream_timeout");
      expect(result.done).toBe(true);
    });

    it("a streaming request waiting for a slot gets keep-alive comments, then its answer", async () => {
      const blocker = h.fetch("/v1/chat/completions", { json: chatBody("busy", { stream: true, max_tokens: 30 }) });
      await waitFor(() => h.gateway.registry.get("busy")!.replicas[0]!.inFlight === 1, 5000, "slot taken");
      const waiting = await h.fetch("/v1/chat/completions", { json: chatBody("busy", { stream: true, max_tokens: 3 }) });
      const result = await readStream(waiting);
      expect(result.comments).toBeGreaterThan(0);
      expect(result.error).toBeUndefined();
      expect(result.done).toBe(true);
      await (await blocker).text();
    });
  });

  describe("a client that disconnects", () => {
    it("aborts the upstream request at once (the model server records the cancellation)", async () => {
      const s = await sim(["--itl-ms", "50"]);
      const h = await startHarness([{ id: "m" }], { mapCatalog: processCatalog({ m: [s.url] }) });
      try {
        const before = await abortedRequests(s.url);
        const ac = new AbortController();
        const res = await request(`${h.baseURL}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
          body: JSON.stringify(chatBody("m", { stream: true, max_tokens: 500 })),
          signal: ac.signal,
        });
        for await (const _ of res.body) break; // first bytes arrived: the model is generating
        ac.abort();
        await waitFor(async () => (await abortedRequests(s.url)) === before + 1, 5000, "abort recorded by the model server");
        await waitFor(() => h.gateway.registry.get("m")!.replicas[0]!.inFlight === 0, 5000, "slot released");
      } finally {
        await h.close();
      }
    });
  });
});
