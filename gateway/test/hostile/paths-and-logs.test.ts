import { exchange, expectEnvelope, expectStillHealthy, hostileDescribe, startHostileTarget } from "../support/hostile";
import { waitFor } from "../support/harness";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";

/**
 * Path encodings and log injection: whatever a client puts in the path, the model name or headers gets a 4xx
 * envelope, comes back bounded and escaped, and leaves only valid, bounded JSON lines in the log. Anonymous
 * floods are sampled, with a line saying how much was dropped.
 */
hostileDescribe("hostile: paths and logs", () => {
  let gw: GatewayProcess;
  let bound: number;
  let key: string;
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: { logLinesPerSecond: 5 } }));
    key = gw.keys.attacker!;
  });
  afterAll(() => gw.stop());
  afterEach(() => expectStillHealthy(gw, bound));

  const get = (path: string) => exchange(gw.port, [`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`]);

  it.each([
    ["/v1/models/%E0%A4%A", "/v1/models/%E0%A4%A", 400, "invalid_path"],
    ["/v1/models/%", "/v1/models/%", 400, "invalid_path"],
    ["/v1/models/%ZZ", "/v1/models/%ZZ", 400, "invalid_path"],
    ["/v1/models/%C0%AF", "/v1/models/%C0%AF", 400, "invalid_path"],
    ["/v1/models/%ED%A0%80", "/v1/models/%ED%A0%80", 400, "invalid_path"],
    ["/v1/models/%00", "/v1/models/%00", 404, "model_not_found"],
    ["/v1/models/..%2F..%2Fetc%2Fpasswd", "/v1/models/..%2F..%2Fetc%2Fpasswd", 404, "model_not_found"],
    ["/v1/models/chat%2F..", "/v1/models/chat%2F..", 404, "model_not_found"],
    ["/v1/%2e%2e/%2e%2e/etc/passwd", "/v1/%2e%2e/%2e%2e/etc/passwd", 404, "unknown_url"],
    ["/v1/models?x=%ZZ&x=%E0", "/v1/models?x=%ZZ&x=%E0", 200, undefined],
    ["/v1/models/ + 12,000 characters", `/v1/models/${"x".repeat(12_000)}`, 404, "model_not_found"],
    ["//v1//models", "//v1//models", 404, "unknown_url"],
  ])("GET %s: %i", async (_label, path, status, code) => {
    const res = await get(path);
    if (code === undefined) expect(res.status).toBe(status);
    else {
      const e = expectEnvelope(res as never, status, code);
      expect(e.message.length).toBeLessThan(400);
    }
  });

  it("raw non-ASCII bytes in the request line get a 4xx envelope", async () => {
    const res = await exchange(gw.port, [Buffer.concat([Buffer.from("GET /v1/models/"), Buffer.from("модель\u2028", "utf8"), Buffer.from(` HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`)])]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it("model names built to forge log lines come back escaped and bounded, and stay inside one JSON line", async () => {
    const forged = ['x\n{"level":60,"msg":"forged"}', "x\r\n\u001b[2J\u001b[31mred", "x\u2028\u2029\u202e", "m".repeat(1_048_576)];
    for (const model of forged) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "x" }] }),
      });
      expect(res.status).toBe(404);
      const e = ((await res.json()) as { error: { message: string } }).error;
      expect(e.message.length).toBeLessThan(400);
      for (const c of ["\n", "\r", "\u001b", "\u2028", "\u2029", "\u202e"]) expect(e.message).not.toContain(c);
    }
    await new Promise((r) => setTimeout(r, 400));
    expect(gw.logs().some((l) => l.msg === "forged" || l.level === 60)).toBe(false);
    for (const line of gw.rawLogs()) for (const c of ["\u2028", "\u2029", "\u202e", "\u001b"]) expect(line).not.toContain(c);
    expect(gw.logs().filter((l) => typeof l.model === "string").every((l) => (l.model as string).length < 400)).toBe(true);
  });

  it("request ids and paths that could break a log line are replaced or escaped", async () => {
    const res = await exchange(gw.port, [`GET /v1/models/%0A%1B%5B31m HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${"a".repeat(500)}\r\nAuthorization: Bearer ${key}\r\n\r\n`]);
    expect(res.status).toBe(404);
    expect((res as { headers: Record<string, string> }).headers["x-request-id"]).toMatch(/^req_/);
  });

  it("a key holder's requests its rate limit did not charge are sampled per key; charged ones are all logged", async () => {
    const before = gw.logs().length;
    const refused = (i: number) =>
      i % 2 === 0
        ? fetch(`${gw.url}/v1/nothing-${i}`, { headers: { authorization: `Bearer ${key}` } }) // 404, never charged
        : fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-encoding": "zstd" }, body: "x" }); // 415, before the rate limit
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => refused(i).then(async (r) => (await r.text(), r.status))));
    expect(new Set(statuses)).toEqual(new Set([404, 415]));
    const served = [];
    for (let i = 0; i < 10; i++) served.push((await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${gw.keys.client}`, "content-type": "application/json" }, body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "x" }], max_tokens: 1 }) })).status);
    expect(served.every((s) => s === 200)).toBe(true);
    const lines = () => gw.logs().slice(before).filter((l) => l.msg === "request");
    const attacker = (l: Record<string, unknown>) => typeof l.suppressedLines === "object" && ((l.suppressedLines as Record<string, number>)["key 'attacker': requests not charged to its rate limit"] ?? 0) > 0;
    await waitFor(() => gw.logs().slice(before).some(attacker), 5000, "a suppression summary of the attacker's key");
    await waitFor(() => lines().filter((l) => l.apiKeyName === "client" && l.status === 200).length === 10, 5000, "every charged request logged");
    expect(lines().filter((l) => l.apiKeyName === "attacker").length).toBeLessThan(300);
  });

  it("an anonymous flood is sampled: a few lines per second and a summary of the rest", async () => {
    const before = gw.logs().length;
    await Promise.all(Array.from({ length: 300 }, () => fetch(`${gw.url}/v1/models`, { headers: { authorization: "Bearer sk-nope" } }).then((r) => r.text())));
    // Summaries come once a second; the first one after `before` may still be the previous test's (another budget).
    const anonymous = (l: Record<string, unknown>) => typeof l.suppressedLines === "object" && ((l.suppressedLines as Record<string, number>)["unauthenticated requests"] ?? 0) > 0;
    await waitFor(() => gw.logs().slice(before).some(anonymous), 5000, "a suppression summary of unauthenticated requests");
    const requestLines = gw.logs().slice(before).filter((l) => l.msg === "request" && l.status === 401);
    expect(requestLines.length).toBeLessThan(300);
  });
});
