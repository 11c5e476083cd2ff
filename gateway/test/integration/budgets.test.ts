import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import { startSimulator, type RunningSimulator } from "../../../simulator/src";
import { generateApiKey, hashApiKey, type ApiKeyEntry } from "../../src/auth/api-keys";
import { parseCatalog } from "../../src/config/load-catalog";
import { settingsFromEnv, type GatewaySettingsInput } from "../../src/config/settings";
import { readLines } from "../../src/ledger/read";
import { createLogger } from "../../src/observability/logger";
import { startGateway, type RunningGateway } from "../../src/server";
import { waitFor } from "../support/harness";
import { startS3, type RunningS3 } from "../support/s3-server";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";

/**
 * Day and month budgets per key, enforced by three gateway replicas on one real Redis, with the usage ledger in a
 * real S3-compatible server (s3rver): the budget holds across replicas, the refusal says when it resets, the next
 * period admits again (the gateways' wall clock is the test's), and the count survives a restart of the shared
 * store (rebuilt from the ledger) and, for a single replica without one, a restart of the gateway.
 */
const KEYS = { team: generateApiKey(), daily: generateApiKey(), calls: generateApiKey(), solo: generateApiKey() };
const ENTRIES: ApiKeyEntry[] = [
  { name: "team", sha256: hashApiKey(KEYS.team), budget: { tokens: 10_000, period: "month" } },
  { name: "daily", sha256: hashApiKey(KEYS.daily), budget: { tokens: 2_000, period: "day" } },
  { name: "calls", sha256: hashApiKey(KEYS.calls), budget: { requests: 5, period: "day" } },
  { name: "solo", sha256: hashApiKey(KEYS.solo), budget: { tokens: 1_500, period: "month" } },
];
const FLUSH_MS = 300;

/** The sum of a metric's samples whose labels include `labels`, on a /metrics page. */
function sample(page: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const m of page.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm"))) {
    if (Object.entries(labels).every(([k, v]) => m[1]!.includes(`${k}="${v}"`))) sum += Number(m[2]);
  }
  return sum;
}

type Answer = { status: number; json: { usage?: { total_tokens: number }; error?: { code: string; type: string; message: string } }; headers: Headers };

async function chat(gw: RunningGateway, key: string, maxTokens: number): Promise<Answer> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Tell me about the sea." }], max_tokens: maxTokens, ignore_eos: true }),
  });
  return { status: res.status, json: (await res.json()) as Answer["json"], headers: res.headers };
}

describeWithRedis("budgets across three gateway replicas, with the ledger in an S3 server", () => {
  let redis: RunningRedis;
  let s3: RunningS3;
  let sim: RunningSimulator;
  const gws: RunningGateway[] = [];
  /** The gateways' wall clock. */
  let wall = Date.UTC(2026, 5, 20, 12, 0, 0);
  const catalog = () => parseCatalog({ models: [{ id: "chat", category: "generative", maxConcurrency: 64, upstream: { mode: "endpoints", endpoints: [{ url: sim.url }] } }] });
  const start = (settings: GatewaySettingsInput) =>
    startGateway({
      settings: settingsFromEnv({}, { host: "127.0.0.1", port: 0, metricsPort: 0, healthIntervalMs: 50, drainDelayMs: 0, shutdownGraceMs: 2000, ledgerFlushMs: FLUSH_MS, ...settings }),
      catalog: catalog(),
      keys: ENTRIES,
      wallClock: () => wall,
      log: createLogger("silent"),
    });

  beforeAll(async () => {
    redis = await startRedis();
    s3 = await startS3();
    // The gateway's S3 client takes credentials from the SDK's default chain, as in a pod.
    Object.assign(process.env, s3.env);
    sim = await startSimulator({ models: ["chat"], kind: "generate", maxNumSeqs: 64, latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 } });
    for (let i = 0; i < 3; i++) gws.push(await start({ redisUrl: redis.url, redisTimeoutMs: 2000, ledgerBucket: s3.bucket, ledgerEndpoint: s3.endpoint, replicaName: `gw-${i}` }));
    await waitFor(() => gws.every((g) => g.registry.replicas().every((r) => r.ready)), 10_000, "replicas ready");
  }, 60_000);

  afterAll(async () => {
    await Promise.all(gws.map((g) => g.close()));
    await sim?.close();
    await redis?.stop();
    await s3?.stop();
  });

  it("admits a 10,000-token monthly budget at most once plus one request across the replicas, says when it resets, and admits again next month", async () => {
    const admitted: number[] = [];
    const refusals: Answer[] = [];
    let largest = 0;
    // Six clients over the three replicas, each until it is refused; requests of 40 to 400 tokens.
    await Promise.all(
      Array.from({ length: 6 }, async (_, c) => {
        for (let i = 0; ; i++) {
          const maxTokens = 40 + ((c * 97 + i * 61) % 361);
          const a = await chat(gws[(c + i) % 3]!, KEYS.team, maxTokens);
          if (a.status === 429) {
            refusals.push(a);
            return;
          }
          expect(a.status).toBe(200);
          admitted.push(a.json.usage!.total_tokens);
          largest = Math.max(largest, a.json.usage!.total_tokens);
        }
      }),
    );
    const used = admitted.reduce((s, n) => s + n, 0);
    // Every request settled: the shared count is exactly what was used.
    const client = new Redis(redis.url);
    try {
      const counter = await client.hgetall("gateway:budget:team:tokens:2026-06");
      expect({ used: Number(counter.u), deficit: Number(counter.d) }).toEqual({ used, deficit: 0 });
    } finally {
      client.disconnect();
    }
    // Past the budget by at most one request's shortfall: less than its whole reservation.
    expect(used).toBeLessThanOrEqual(10_000 + largest);
    // Close to the budget: what one reservation left unused at most.
    expect(used).toBeGreaterThan(10_000 - 2 * largest);

    const refusal = refusals[0]!;
    expect(refusal.json.error).toMatchObject({ code: "budget_exceeded", type: "insufficient_quota" });
    expect(refusal.json.error!.message).toContain("budget of 10,000 tokens for the month 2026-06");
    expect(refusal.headers.get("x-budget-reset")).toBe("2026-07-01T00:00:00.000Z");
    expect(Number(refusal.headers.get("retry-after"))).toBe(Math.ceil((Date.UTC(2026, 6, 1) - wall) / 1000));
    expect(refusal.headers.get("x-should-retry")).toBe("false");

    // What the replicas export: the limit, and the largest count any of them read.
    const scraped = await Promise.all(gws.map((g) => fetch(g.metricsUrl).then((r) => r.text())));
    expect(Math.max(...scraped.map((t) => sample(t, "gateway_key_budget_limit", { key: "team", resource: "tokens" })))).toBe(10_000);
    expect(Math.max(...scraped.map((t) => sample(t, "gateway_key_budget_used", { key: "team", resource: "tokens" })))).toBeGreaterThanOrEqual(10_000 - largest);
    expect(scraped.reduce((s, t) => s + sample(t, "gateway_rate_limit_refusals_total", { key: "team", limit: "budget_tokens" }), 0)).toBe(refusals.length);

    // A new month: admitted again.
    wall = Date.UTC(2026, 6, 1, 0, 0, 5);
    expect((await chat(gws[1]!, KEYS.team, 50)).status).toBe(200);
    const july = await Promise.all(gws.map((g) => fetch(g.metricsUrl).then((r) => r.text())));
    // A replica that has not read July's counter yet shows 0 used, not June's count.
    expect(Math.max(...july.map((t) => sample(t, "gateway_key_budget_used", { key: "team", resource: "tokens" })))).toBeLessThan(1_000);
  }, 120_000);

  it("counts a request budget exactly: five a day, then budget_exceeded for requests", async () => {
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await chat(gws[i % 3]!, KEYS.calls, 5)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const refused = await chat(gws[0]!, KEYS.calls, 5);
    expect(refused.json.error!.message).toContain("budget of 5 requests for the day");
  });

  it("rebuilds a spent budget from the ledger after the shared store restarts", async () => {
    let spent = 0;
    for (let i = 0; spent < 2_000; i++) {
      const a = await chat(gws[i % 3]!, KEYS.daily, 300);
      if (a.status === 429) break;
      spent += a.json.usage!.total_tokens;
    }
    expect((await chat(gws[0]!, KEYS.daily, 10)).status).toBe(429);
    // Every replica has written its counts.
    await new Promise((r) => setTimeout(r, 3 * FLUSH_MS));
    const day = Date.UTC(2026, 6, 1);
    const inLedger = (await readLines(s3.store(), "ledger/", day, day + 86_400_000)).filter((l) => l.key === "daily").reduce((s, l) => s + l.prompt_tokens + l.completion_tokens, 0);
    expect(inLedger).toBe(spent);

    await redis.restart();
    const client = new Redis(redis.url);
    const counter = "gateway:budget:daily:tokens:2026-07-01";
    try {
      // Each replica meets the restarted store at its next command: it fails over to its own counters (rebuilt from
      // the ledger) until its probe finds the store back; there the first request rebuilds the counter from the
      // ledger. Every answer meanwhile is a refusal.
      await waitFor(
        async () => {
          const answers = await Promise.all(gws.map((g) => chat(g, KEYS.daily, 10)));
          expect(answers.map((a) => a.json.error?.code)).toEqual(["budget_exceeded", "budget_exceeded", "budget_exceeded"]);
          return gws.every((g) => g.limiter.usingSharedStore) && (await client.exists(counter)) === 1;
        },
        15_000,
        "the replicas to rebuild the counter in the restarted store",
      );
      expect(Number(await client.hget(counter, "u"))).toBe(spent);
    } finally {
      client.disconnect();
    }
  }, 60_000);

  it("keeps a single replica's budget, without a shared store, over a restart of the gateway (from a ledger directory)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ledger-"));
    let solo = await start({ ledgerDir: dir, replicaName: "solo" });
    try {
      let spent = 0;
      for (;;) {
        const a = await chat(solo, KEYS.solo, 200);
        if (a.status === 429) break;
        spent += a.json.usage!.total_tokens;
      }
      expect(spent).toBeGreaterThan(1_500 - 400);
      await solo.close(); // a graceful stop writes the last counts
      solo = await start({ ledgerDir: dir, replicaName: "solo" });
      const after = await chat(solo, KEYS.solo, 10);
      expect(after.status).toBe(429);
      expect(after.json.error!.code).toBe("budget_exceeded");
    } finally {
      await solo.close();
    }
  }, 60_000);
});
