import { hashApiKey } from "../../src/auth/api-keys";
import { parseCatalog } from "../../src/config/load-catalog";
import { settingsFromEnv } from "../../src/config/settings";
import { createLogger } from "../../src/observability/logger";
import { startGateway, type RunningGateway } from "../../src/server";
import { startHarness, waitFor, type Harness } from "../support/harness";
import { Writable } from "node:stream";

/**
 * Prefix placement across gateway pods: two independent gateways in front of the same four simulated replicas (real
 * servers on loopback, each with its own prefix cache) send the questions about one document to the same replica, so
 * the second gateway's first question about it finds the document in that replica's cache.
 */
describe("two gateways place a shared prefix on the same replica", () => {
  let h: Harness;
  let second: RunningGateway;

  beforeAll(async () => {
    h = await startHarness([{ id: "chat", replicas: 4, routing: { strategy: "prefix-affinity" } }]);
    const urls = h.sims.chat!.map((s) => s.url).reverse(); // listed in another order: placement must not care
    second = await startGateway({
      settings: settingsFromEnv({}, { host: "127.0.0.1", port: 0, metricsPort: 0, healthIntervalMs: 50, drainDelayMs: 0, shutdownGraceMs: 2000 }),
      catalog: parseCatalog({ models: [{ id: "chat", category: "generative", routing: { strategy: "prefix-affinity" }, upstream: { mode: "endpoints", endpoints: urls.map((url) => ({ url })) } }] }),
      keys: [{ name: "test-key", sha256: hashApiKey(h.key) }],
      log: createLogger("warn", new Writable({ write: (_c, _e, cb) => cb() })),
    });
    await waitFor(() => second.registry.replicas().every((r) => r.ready), 10_000, "the second gateway's replicas");
  });

  afterAll(async () => {
    await second?.close();
    await h?.close();
  });

  async function ask(gateway: string, doc: number, question: string): Promise<{ replica: number; cachedTokens: number }> {
    const before = h.sims.chat!.map((s) => s.stats());
    const res = await fetch(`${gateway}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", max_tokens: 1, messages: [{ role: "user", content: `Document ${doc}: ${`clause ${doc} of the agreement `.repeat(80)}\n\n${question}` }] }),
    });
    expect(res.status).toBe(200);
    await res.json();
    const after = h.sims.chat!.map((s) => s.stats());
    const replica = after.findIndex((s, i) => s.requestsTotal > before[i]!.requestsTotal);
    return { replica, cachedTokens: after[replica]!.prefixCacheHitTokens - before[replica]!.prefixCacheHitTokens };
  }

  it("the same replica for every document, and the second gateway's first question hits the cache", async () => {
    const homes = new Set<number>();
    for (let doc = 0; doc < 6; doc++) {
      const first = await ask(h.gateway.url, doc, "What does it say?");
      expect(first.cachedTokens).toBe(0);
      const other = await ask(second.url, doc, "And what does it exclude?");
      expect(other.replica).toBe(first.replica);
      expect(other.cachedTokens).toBeGreaterThanOrEqual(320); // the document: 400-odd tokens
      homes.add(first.replica);
    }
    expect(homes.size).toBeGreaterThan(1); // the documents are spread, not piled on one replica
  });
});
