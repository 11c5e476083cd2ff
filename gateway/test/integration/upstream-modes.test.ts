import type { CatalogInput } from "../../src/config/catalog";
import { startHarness, waitFor, chatBody, type Harness } from "../support/harness";

/** dns mode (a headless Service's addresses) and pool mode (an InferencePool address), on loopback. */
describe("upstream modes", () => {
  let h: Harness;
  const toMode = (c: CatalogInput): CatalogInput => ({
    models: c.models.map((m) => {
      const url = m.upstream.mode === "endpoints" ? new URL(m.upstream.endpoints[0]!.url) : undefined;
      if (m.id === "by-dns" && url) return { ...m, upstream: { mode: "dns", host: "localhost", port: Number(url.port), refreshIntervalMs: 200 } };
      if (m.id.startsWith("pool") && url) return { ...m, upstream: { mode: "pool", url: url.origin } };
      return m;
    }),
  });
  beforeAll(async () => {
    h = await startHarness(
      // pool-busy's injected 429 stands for the endpoint picker's (InferencePoolResourceExhausted); vLLM sends none.
      [{ id: "by-dns" }, { id: "pool-ok" }, { id: "pool-busy", sim: { failureRate: 1, failureStatus: 429 } }, { id: "pool-gone" }],
      { settings: { healthIntervalMs: 300 }, mapCatalog: toMode },
    );
  });
  afterAll(() => h.close());

  it("dns: resolves the name to replicas, checks them and serves", async () => {
    const pool = h.gateway.registry.get("by-dns")!;
    expect(pool.replicas.length).toBeGreaterThanOrEqual(1);
    await waitFor(() => pool.isReady, 5000, "dns replica ready");
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("by-dns") });
    expect(res.status).toBe(200);
  });

  it("pool: forwards to the one address, ready without /health checks", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("pool-ok", { stream: true, max_tokens: 3 }) });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("data: [DONE]");
  });

  it("pool: the picker's 429 reaches the client as an envelope with Retry-After", async () => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("pool-busy") });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
  });

  it("pool: an unreachable pool is ejected (503) and tried again after an interval", async () => {
    const [sim] = h.sims["pool-gone"]!;
    sim!.kill();
    await sim!.close();
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("pool-gone") });
    expect(res.status).toBe(503);
    const pool = h.gateway.registry.get("pool-gone")!;
    expect(pool.isReady).toBe(false);
    await waitFor(() => pool.isReady, 3000, "ejection to expire");
  });
});
