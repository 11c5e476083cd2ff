import { exchange, expectEnvelope, expectStillHealthy, hostileDescribe, postHead, startHostileTarget } from "../support/hostile";
import { waitFor } from "../support/harness";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";

/**
 * Unfinished uploads: each key holds at most its share of body memory, the gateway at most its total, a key
 * under its share is served even when stalled uploads of others fill the total (theirs yield), and a refusal
 * costs no body read. Budgets are small here so a few uploads fill them.
 */
const KiB = 1024;
const SETTINGS = {
  bodyLimitBytes: 256 * KiB,
  bodyMemoryPerKeyBytes: 512 * KiB,
  bodyMemoryBytes: 1024 * KiB,
  bodyIdleTimeoutMs: 3000,
  bodyTimeoutMs: 20_000,
};

hostileDescribe("hostile: unfinished uploads", () => {
  let gw: GatewayProcess;
  let bound: number;
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: SETTINGS, keyNames: ["client", "attacker", "attacker2"] }));
  });
  afterAll(() => gw.stop());
  afterEach(async () => {
    await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 0, 10_000, "body memory returned");
    await expectStillHealthy(gw, bound);
  });

  /** An upload declaring `size` bytes that sends all but the last one and waits. */
  const stalled = (key: string, size = 256 * KiB, localAddress = "127.0.0.30") =>
    exchange(gw.port, [postHead("/v1/chat/completions", { authorization: `Bearer ${key}`, "content-length": size }), Buffer.alloc(size - 1, 0x20), { pauseMs: 60_000 }], { timeoutMs: 30_000, localAddress });

  it("a key's stalled uploads hold its share only; the rest are refused before their body is read; others are served", async () => {
    const uploads = Array.from({ length: 6 }, () => stalled(gw.keys.attacker!));
    await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 512 * KiB, 5000, "the key's share in use");
    const client = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.keys.client}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hi" }], max_tokens: 1 }),
    });
    expect(client.status).toBe(200);
    const results = await Promise.all(uploads);
    const codes = results.map((r) => (r.status === 429 ? expectEnvelope(r as never, 429, "inflight_bytes_exceeded").code : expectEnvelope(r as never, 408, "request_timeout").code));
    expect(codes.filter((c) => c === "inflight_bytes_exceeded")).toHaveLength(4);
    expect(codes.filter((c) => c === "request_timeout")).toHaveLength(2);
    expect((results.find((r) => r.status === 429) as { headers: Record<string, string> }).headers["retry-after"]).toBe("1");
    expect(await gw.metric("gateway_admission_refusals_total")).toBeGreaterThanOrEqual(4);
  });

  it("when stalled uploads of two keys fill the gateway, a third key's request is served: the largest holder's oldest upload yields", async () => {
    const a = [stalled(gw.keys.attacker!), stalled(gw.keys.attacker!)];
    await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 512 * KiB, 5000, "first key in");
    const b = [stalled(gw.keys.attacker2!, 256 * KiB, "127.0.0.31"), stalled(gw.keys.attacker2!, 256 * KiB, "127.0.0.31")];
    await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 1024 * KiB, 5000, "gateway full");
    const body = JSON.stringify({ model: "chat", messages: [{ role: "user", content: "x".repeat(200 * KiB) }], max_tokens: 1 });
    const client = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${gw.keys.client}`, "content-type": "application/json" }, body });
    expect(client.status).toBe(200);
    const results = await Promise.all([...a, ...b]);
    const preempted = results.filter((r) => r.status === 503);
    expect(preempted).toHaveLength(1);
    expectEnvelope(preempted[0] as never, 503, "gateway_overloaded");
    expect(preempted[0]!.closed).toBe(true);
  });

  it("a chunked upload (no declared length) reserves the whole body limit", async () => {
    const chunked = exchange(gw.port, [postHead("/v1/chat/completions", { authorization: `Bearer ${gw.keys.attacker}`, "transfer-encoding": "chunked" }), "5\r\n{\"a\":\r\n", { pauseMs: 60_000 }], { timeoutMs: 30_000 });
    await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 256 * KiB, 5000, "the limit reserved");
    expectEnvelope((await chunked) as never, 408, "request_timeout");
  });
});
