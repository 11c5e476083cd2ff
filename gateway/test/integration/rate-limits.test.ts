import OpenAI from "openai";
import { generateApiKey } from "../../src/auth/api-keys";
import { startHarness, waitFor, chatBody, type Harness } from "../support/harness";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";

type ErrorBody = { error: { type: string; code: string } };

describe("per-key limits in process", () => {
  let h: Harness;
  afterEach(() => h?.close());

  it("refuses the request over RPM with 429, Retry-After and x-ratelimit headers", async () => {
    h = await startHarness([{ id: "m" }], { keyLimits: { rpm: 3 } });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await h.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 1 }) });
      statuses.push(last.status);
      if (i === 0) {
        expect(last.headers.get("x-ratelimit-limit-requests")).toBe("3");
        expect(last.headers.get("x-ratelimit-remaining-requests")).toBe("2");
        expect(last.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+(ms|s)$/);
      }
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last!.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(last!.headers.get("x-should-retry")).toBeNull();
    const body = (await last!.json()) as ErrorBody;
    expect(body.error).toMatchObject({ type: "requests", code: "rate_limit_exceeded" });
    const metrics = await (await fetch(h.gateway.metricsUrl)).text();
    expect(metrics).toMatch(/gateway_rate_limit_refusals_total\{key="test-key",limit="requests"\} 1/);
  });

  it("charges TPM with the real usage, also from streams whose client did not ask for usage", async () => {
    h = await startHarness([{ id: "m" }], { keyLimits: { tpm: 40 } });
    const longPrompt = { messages: [{ role: "user", content: "tide ".repeat(60) }] };
    const stream = await h.fetch("/v1/chat/completions", { json: chatBody("m", { ...longPrompt, stream: true, max_tokens: 30 }) });
    const text = await stream.text();
    // The gateway asked the model server for usage but does not show the client a chunk it did not request.
    expect(text).not.toContain('"usage":{');
    expect(text).toContain("data: [DONE]");
    await waitFor(() => h.logs.some((l) => l.stream === true && typeof l.completionTokens === "number"), 5000, "usage logged");
    const line = h.logs.find((l) => l.stream === true)!;
    // What was counted is what the model server reports having generated.
    const simMetrics = await (await fetch(`${h.sims["m"]![0]!.url}/metrics`)).text();
    const generated = Number(/vllm:generation_tokens_total\{[^}]*\} (\d+)/.exec(simMetrics)?.[1]);
    expect(line.completionTokens).toBe(generated);
    expect(line.promptTokens as number).toBeGreaterThan(40);
    // The prompt alone exceeds 40 tokens: the key is in debt and is refused.
    const refused = await h.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 1 }) });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({ type: "tokens", code: "rate_limit_exceeded" });
  });

  it("marks a refusal the SDK should not sit out with x-should-retry: false", async () => {
    h = await startHarness([{ id: "m" }], { keyLimits: { tpm: 5 } });
    expect((await h.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 60 }) })).status).toBe(200);
    const client = h.client({ maxRetries: 2 });
    const started = Date.now();
    const err = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get("x-should-retry")).toBe("false");
    // Not retried: one refusal logged, and no backoff spent.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(h.logs.filter((l) => l.errorCode === "rate_limit_exceeded")).toHaveLength(1);
  });
});

describeWithRedis("per-key limits shared through Redis", () => {
  let redis: RunningRedis;
  let a: Harness;
  let b: Harness;
  const key = generateApiKey();

  beforeAll(async () => {
    redis = await startRedis();
    const opts = { key, keyLimits: { rpm: 4 }, settings: { redisUrl: redis.url } };
    a = await startHarness([{ id: "m" }], opts);
    b = await startHarness([{ id: "m" }], opts);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await redis.stop();
  });

  it("two gateway instances enforce one limit", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const gw = i % 2 === 0 ? a : b;
      statuses.push((await gw.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 1 }) })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(a.gateway.limiter.usingSharedStore).toBe(true);
  });

  it("a Redis outage degrades to per-instance limits with a warning, without failing requests", async () => {
    await redis.stop();
    // Each instance now has its own fresh bucket of 4.
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await a.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 1 }) })).status);
    expect(statuses).toEqual([200, 200]);
    expect(a.logs.some((l) => l.level === 40 && String(l.msg).includes("rate-limit store unreachable"))).toBe(true);
    expect(a.gateway.limiter.usingSharedStore).toBe(false);
  });

  it("returns to the shared store when Redis is back", async () => {
    await redis.restart();
    await waitFor(
      async () => {
        await a.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 1 }) });
        return a.gateway.limiter.usingSharedStore;
      },
      10_000,
      "limiter back on Redis",
    );
    expect(a.logs.some((l) => String(l.msg).includes("reachable again"))).toBe(true);
  });
});
