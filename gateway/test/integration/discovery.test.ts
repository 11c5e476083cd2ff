// Readiness and discovery that tell the truth, against a real DNS server on loopback (dns2) that the gateway's own
// resolver queries: a headless Service's name with no ready pod answers NXDOMAIN, as Kubernetes' DNS does.
// - dns mode: NXDOMAIN empties the replica set (503, unlisted) and an answer refills it;
// - pool mode: the model is listed, and requests go to the InferencePool, only while its readiness name resolves;
// - embeddings never go through an endpoint picker.
import { promises as dnsPromises, setServers, getServers } from "node:dns";
import { parseCatalog } from "../../src/config/load-catalog";
import { startDnsServer } from "../support/dns-server";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

describe("discovery and readiness against a real DNS server", () => {
  const records = new Map<string, string[]>();
  const failing = new Set<string>();
  let dnsServer: { port: number; close(): Promise<void> };
  let previousServers: string[];
  let h: Harness;

  beforeAll(async () => {
    dnsServer = await startDnsServer(records, failing);
    previousServers = getServers();
    // The gateway runs in this process: its resolver now asks the loopback server.
    setServers([`127.0.0.1:${dnsServer.port}`]);
    h = await startHarness([{ id: "by-dns" }, { id: "by-pool" }, { id: "embed", category: "embedder" }], {
      settings: { healthIntervalMs: 200 },
      mapCatalog: (c) => ({
        models: c.models.map((m) => {
          const url = m.upstream.mode === "endpoints" ? new URL(m.upstream.endpoints[0]!.url) : undefined;
          if (m.id === "by-dns" && url) return { ...m, upstream: { mode: "dns", host: "model-by-dns.test.internal", port: Number(url.port), refreshIntervalMs: 150 } };
          if (m.id === "by-pool" && url) {
            return { ...m, upstream: { mode: "pool", url: url.origin, readiness: { host: "model-by-pool.test.internal", port: Number(url.port), refreshIntervalMs: 150 } } };
          }
          return m;
        }),
      }),
    });
  });

  afterAll(async () => {
    await h?.close();
    setServers(previousServers);
    await dnsServer?.close();
  });

  const listed = async (): Promise<string[]> => ((await (await h.fetch("/v1/models")).json()) as { data: { id: string }[] }).data.map((m) => m.id);
  const chat = (model: string) => h.fetch("/v1/chat/completions", { json: chatBody(model, { max_tokens: 3 }) });

  it("the loopback server answers as Kubernetes' DNS does: A records for a name with ready pods, NXDOMAIN otherwise", async () => {
    records.set("probe.test.internal", ["127.0.0.1"]);
    expect(await dnsPromises.resolve4("probe.test.internal")).toEqual(["127.0.0.1"]);
    await expect(dnsPromises.resolve4("nothing.test.internal")).rejects.toMatchObject({ code: "ENOTFOUND" });
  });

  it("pool mode: no ready pod behind the pool → not listed and 503; a ready pod → listed and served; gone again → 503", async () => {
    const pool = h.gateway.registry.get("by-pool")!;
    await waitFor(async () => !pool.isReady, 10_000, "pool unready while its name does not resolve");
    expect(await listed()).not.toContain("by-pool");
    const refused = await chat("by-pool");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("model_not_ready");
    expect(refused.headers.get("retry-after")).toBeTruthy();
    const sent = h.sims["by-pool"]![0]!.stats().requestsTotal;

    records.set("model-by-pool.test.internal", ["127.0.0.1"]);
    await waitFor(() => pool.isReady, 10_000, "pool ready once its name resolves");
    expect(await listed()).toContain("by-pool");
    expect((await chat("by-pool")).status).toBe(200);
    // Nothing reached the pool while it was unready.
    expect(h.sims["by-pool"]![0]!.stats().requestsTotal).toBe(sent + 1);

    records.delete("model-by-pool.test.internal");
    await waitFor(() => !pool.isReady, 10_000, "pool unready again");
    expect((await chat("by-pool")).status).toBe(503);
  });

  it("dns mode: NXDOMAIN empties the replica set (503, unlisted) instead of keeping stale addresses; an answer brings it back", async () => {
    const pool = h.gateway.registry.get("by-dns")!;
    records.set("model-by-dns.test.internal", ["127.0.0.1"]);
    await waitFor(() => pool.isReady, 10_000, "dns replica ready");
    expect((await chat("by-dns")).status).toBe(200);
    expect(await listed()).toContain("by-dns");

    records.delete("model-by-dns.test.internal");
    await waitFor(() => pool.replicas.length === 0, 10_000, "replicas emptied on NXDOMAIN");
    const refused = await chat("by-dns");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("model_not_ready");
    expect(await listed()).not.toContain("by-dns");

    records.set("model-by-dns.test.internal", ["127.0.0.1"]);
    await waitFor(() => pool.isReady, 10_000, "recovered once the name resolves again");
    expect((await chat("by-dns")).status).toBe(200);
  });

  it("DNS itself failing (SERVFAIL) is not an answer: the last replica set stays", async () => {
    const pool = h.gateway.registry.get("by-dns")!;
    await waitFor(() => pool.isReady, 10_000, "dns replica ready");
    const warned = () => h.logs.filter((l) => l.msg === "DNS lookup failed; keeping last replica set" && l.model === "by-dns").length;
    const before = warned();
    failing.add("model-by-dns.test.internal");
    try {
      await waitFor(() => warned() >= before + 2, 10_000, "two failed lookups");
      expect(pool.replicas.length).toBe(1);
      expect((await chat("by-dns")).status).toBe(200);
    } finally {
      failing.delete("model-by-dns.test.internal");
    }
  });

  it("embeddings never go through an endpoint picker: an embedder in pool mode is refused at load, a pool model refuses embeddings", async () => {
    expect(() =>
      parseCatalog({ models: [{ id: "e", category: "embedder", upstream: { mode: "pool", url: "http://igw.gateway-system.svc.cluster.local/e" } }] }, "catalog.yaml"),
    ).toThrow(/models\[0\]\.upstream\.mode: an embedder is reached in dns or endpoints mode/);
    records.set("model-by-pool.test.internal", ["127.0.0.1"]);
    await waitFor(() => h.gateway.registry.get("by-pool")!.isReady, 10_000, "pool ready");
    const before = h.sims["by-pool"]![0]!.stats().requestsTotal;
    const res = await h.fetch("/v1/embeddings", { json: { model: "by-pool", input: "hello" } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(h.sims["by-pool"]![0]!.stats().requestsTotal).toBe(before);
    // The embedder itself answers (endpoints mode here; dns in a cluster).
    expect((await h.fetch("/v1/embeddings", { json: { model: "embed", input: "hello" } })).status).toBe(200);
  });
});
