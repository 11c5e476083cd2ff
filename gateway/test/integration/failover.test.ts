import { startHarness, chatBody, type Harness } from "../support/harness";

/** A replica that dies between health checks: the client never sees it. */
describe("replica failure before the response starts", () => {
  let h: Harness;
  beforeAll(async () => {
    // Health checks far apart, so only the passive path can notice the dead replica.
    h = await startHarness([{ id: "chat-model", replicas: 2 }, { id: "solo", replicas: 1 }], { settings: { healthIntervalMs: 60_000 } });
  });
  afterAll(() => h.close());

  it("retries a refused connection once on another ready replica and ejects the dead one", async () => {
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

  it("answers 503 with Retry-After when the only replica is gone", async () => {
    const [only] = h.sims["solo"]!;
    only!.kill();
    await only!.close();
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("solo") });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_ready");
    const list = (await (await h.fetch("/v1/models")).json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).not.toContain("solo");
  });
});
