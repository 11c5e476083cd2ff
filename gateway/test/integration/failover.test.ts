import { startHarness, chatBody, type Harness } from "../support/harness";

/** A replica that dies between health checks: the client never sees it. */
describe("replica failure before the response starts", () => {
  let h: Harness;
  beforeAll(async () => {
    // Health checks far apart, so only the passive path can notice the dead replica.
    h = await startHarness([{ id: "chat-model", replicas: 2 }, { id: "solo", replicas: 1 }, { id: "four", replicas: 4 }], { settings: { healthIntervalMs: 60_000 } });
  });
  afterAll(() => h.close());

  it("retries a refused connection on another ready replica and ejects the dead one", async () => {
    const [dead, alive] = h.sims["chat-model"]!;
    dead!.kill();
    await dead!.close();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await h.fetch("/v1/chat/completions", { json: chatBody("chat-model") })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(alive!.stats().completedTotal).toBe(6);
    const pool = h.gateway.registry.get("chat-model")!;
    expect(pool.replicas.find((r) => r.url === dead!.url)?.state).toBe("unhealthy");
    expect(h.logs.some((l) => l.model === "chat-model" && l.attempts === 2)).toBe(true);
  });

  it("tries each replica not yet tried until one accepts: three of four gone, every request answered", async () => {
    const sims = h.sims["four"]!;
    const alive = sims[3]!;
    for (const dead of sims.slice(0, 3)) {
      dead.kill();
      await dead.close();
    }
    // Concurrent requests, so several meet the dead replicas before any ejection reaches the others.
    const statuses = await Promise.all(Array.from({ length: 8 }, async () => (await h.fetch("/v1/chat/completions", { json: chatBody("four") })).status));
    expect(statuses).toEqual(Array(8).fill(200));
    expect(alive.stats().completedTotal).toBe(8);
    const pool = h.gateway.registry.get("four")!;
    // Out of everyone's pick at the first refusal, until a health check sees them again.
    expect(pool.replicas.filter((r) => r.state === "unhealthy").map((r) => r.url).sort()).toEqual(sims.slice(0, 3).map((s) => s.url).sort());
    const attempts = h.logs.filter((l) => l.model === "four" && typeof l.attempts === "number").map((l) => l.attempts as number);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
    expect(Math.max(...attempts)).toBeLessThanOrEqual(4);
  });

  it("answers 503 with Retry-After when the only replica is gone", async () => {
    const [only] = h.sims["solo"]!;
    only!.kill();
    await only!.close();
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("solo") });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("model_not_ready");
    // It says what happened: the replica refused, not that none is ready yet.
    expect(error.message).toMatch(/^Model `solo`: a replica refused the connection \(shutting down or restarting\), and no other replica is ready\. Retry after \d+s\.$/);
    const again = (await (await h.fetch("/v1/chat/completions", { json: chatBody("solo") })).json()) as { error: { message: string } };
    expect(again.error.message).toMatch(/has no ready replica/);
    const list = (await (await h.fetch("/v1/models")).json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).not.toContain("solo");
  });
});
