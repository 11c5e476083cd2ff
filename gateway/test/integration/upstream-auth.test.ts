// The model servers require an API key (vLLM's VLLM_API_KEY, given by the serving stack): the gateway sends its own,
// never the client's, and a missing or wrong one is the operator's problem (502, not retried), not the client's.
import { startHarness, chatBody, type Harness } from "../support/harness";

const UPSTREAM_KEY = "model-server-key-0123456789abcdef";

describe("the model servers' API key", () => {
  let withKey: Harness;
  let without: Harness;
  beforeAll(async () => {
    const models = [{ id: "m", sim: { apiKey: UPSTREAM_KEY } }, { id: "e", category: "embedder" as const, sim: { apiKey: UPSTREAM_KEY } }];
    withKey = await startHarness(models, { settings: { upstreamApiKey: UPSTREAM_KEY } });
    without = await startHarness(models);
  });
  afterAll(async () => {
    await withKey?.close();
    await without?.close();
  });

  it("is sent upstream as a bearer token in place of the client's key, for chat, streams and embeddings", async () => {
    for (const init of [
      { path: "/v1/chat/completions", json: chatBody("m", { max_tokens: 3 }) },
      { path: "/v1/chat/completions", json: chatBody("m", { max_tokens: 3, stream: true }) },
      { path: "/v1/embeddings", json: { model: "e", input: "hi" } },
    ]) {
      const res = await withKey.fetch(init.path, { json: init.json });
      expect([init.path, res.status]).toEqual([init.path, 200]);
      await res.text();
    }
    const seen = [withKey.sims.m![0]!.stats().lastRequestHeaders, withKey.sims.e![0]!.stats().lastRequestHeaders];
    for (const headers of seen) {
      expect(headers?.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(JSON.stringify(headers)).not.toContain(withKey.key);
    }
  });

  it("without it the model server refuses: 502 upstream_auth_failed, not retried, the client's key is fine", async () => {
    const res = await without.fetch("/v1/chat/completions", { json: chatBody("m") });
    expect(res.status).toBe(502);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_auth_failed");
    // Health checks and load scraping need no key: the replica stays ready and listed.
    expect(((await (await without.fetch("/v1/models")).json()) as { data: { id: string }[] }).data.map((m) => m.id)).toContain("m");
    expect(JSON.stringify(without.sims.m![0]!.stats().lastRequestHeaders)).not.toContain(without.key);
  });

  it("never appears in the gateway's logs", () => {
    for (const h of [withKey, without]) expect(h.rawLogs.join("\n")).not.toContain(UPSTREAM_KEY);
  });
});
