import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { hashApiKey } from "../../src/auth/api-keys";
import type { CatalogInput } from "../../src/config/catalog";
import { parseCatalog } from "../../src/config/load-catalog";
import { settingsFromEnv, type GatewaySettingsInput } from "../../src/config/settings";
import { createLogger } from "../../src/observability/logger";
import { startGateway, type RunningGateway } from "../../src/server";
import type { RunningSimulator } from "../../../simulator/src";
import { startHarness, waitFor, type Harness } from "../support/harness";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";

/**
 * Stored responses followed up through other gateways than the one that made them: a restarted gateway, a
 * second gateway sharing one real Redis, a gateway whose catalog lost the replica, a replica that stopped; and
 * the OpenAI Agents SDK in its default (Responses) mode through the gateway.
 */

setTracingDisabled(true);

/** Another gateway in front of the same simulators (a restart, or a second replica of the gateway). */
async function gatewayOn(sims: RunningSimulator[], key: string, settings: GatewaySettingsInput): Promise<RunningGateway> {
  const catalog: CatalogInput = { models: [{ id: "m", category: "generative", maxConcurrency: 16, upstream: { mode: "endpoints", endpoints: sims.map((s) => ({ url: s.url })) } }] };
  const gw = await startGateway({
    settings: settingsFromEnv({}, { host: "127.0.0.1", port: 0, metricsPort: 0, healthIntervalMs: 50, drainDelayMs: 0, shutdownGraceMs: 500, logLevel: "silent", ...settings }),
    catalog: parseCatalog(catalog),
    keys: [{ name: "test-key", sha256: hashApiKey(key) }],
    log: createLogger("silent"),
  });
  await waitFor(() => gw.registry.get("m")!.replicas.every((r) => r.ready), 10_000, "replicas ready");
  return gw;
}

const clientOf = (gw: RunningGateway, key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

/** Which simulator holds a response: the one that answers its GET directly. */
async function holder(sims: RunningSimulator[], id: string): Promise<number> {
  const found = await Promise.all(sims.map(async (s) => (await fetch(`${s.url}/v1/responses/${id}`)).status === 200));
  return found.indexOf(true);
}

describe("stored responses across gateways", () => {
  const secret = "a-test-secret-of-enough-length";
  let h: Harness;
  let client: OpenAI;

  beforeAll(async () => {
    h = await startHarness([{ id: "m", replicas: 3, sim: { toolCalling: true } }], { settings: { responseIdSecret: secret } });
    client = h.client();
    await waitFor(() => h.gateway.registry.get("m")!.replicas.every((r) => r.ready), 10_000, "replicas ready");
  });
  afterAll(() => h.close());

  it("the OpenAI Agents SDK (Responses mode) runs a tool through the gateway, plain and streamed, and continues", async () => {
    const calls: string[] = [];
    const tideTable = tool({
      name: "tide_table",
      description: "High and low tide times for a harbour",
      parameters: z.object({ harbour: z.string() }),
      execute: async ({ harbour }) => {
        calls.push(harbour);
        return `${harbour}: high water 06:12, low water 12:25`;
      },
    });
    const agent = new Agent({ name: "Harbour master", instructions: "Answer questions about tides; use the tide table.", model: "m", tools: [tideTable] });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }), tracingDisabled: true });

    const plain = await runner.run(agent, "When is high water in Brest?");
    expect(plain.newItems.map((i) => i.type)).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);
    expect(calls).toHaveLength(1);

    // Against vLLM directly the SDK throws here on the per-turn usage lists (simulator/test/agents.test.ts).
    const streamed = await runner.run(agent, "When is high water in Brest?", { stream: true });
    for await (const event of streamed.toStream()) void event;
    await streamed.completed;
    expect(streamed.newItems.map((i) => i.type)).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);

    const next = await runner.run(agent, "And in Cherbourg?", { previousResponseId: plain.lastResponseId });
    expect(next.newItems.map((i) => i.type)).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);
  });

  it("a restarted gateway (same secret, no shared state) routes a follow-up to the holding replica", async () => {
    const first = await client.responses.create({ model: "m", input: "Remember the sea.", max_output_tokens: 6 });
    const at = await holder(h.sims.m!, first.id);
    expect(at).toBeGreaterThanOrEqual(0);
    const fresh = await gatewayOn(h.sims.m!, h.key, { responseIdSecret: secret });
    try {
      const c = clientOf(fresh, h.key);
      for (let turn = 0; turn < 3; turn++) {
        const next = await c.responses.create({ model: "m", input: "Go on.", previous_response_id: first.id, max_output_tokens: 4 });
        expect(await holder(h.sims.m!, next.id)).toBe(at);
      }
      expect((await c.responses.retrieve(first.id)).id).toBe(first.id);
    } finally {
      await fresh.close();
    }
  });

  it("a gateway with another secret does not honour the id: 404 response_not_found", async () => {
    const first = await client.responses.create({ model: "m", input: "Hello.", max_output_tokens: 4 });
    const stranger = await gatewayOn(h.sims.m!, h.key, { responseIdSecret: "another-secret-entirely-x" });
    try {
      await expect(clientOf(stranger, h.key).responses.retrieve(first.id)).rejects.toMatchObject({ status: 404, code: "response_not_found" });
    } finally {
      await stranger.close();
    }
  });

  it("the replica is gone from the catalog: 404 response_replica_gone, never another replica's 'not found'", async () => {
    const first = await client.responses.create({ model: "m", input: "Hello.", max_output_tokens: 4 });
    const at = await holder(h.sims.m!, first.id);
    const others = h.sims.m!.filter((_, i) => i !== at);
    const shrunk = await gatewayOn(others, h.key, { responseIdSecret: secret });
    try {
      const c = clientOf(shrunk, h.key);
      await expect(c.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404, code: "response_replica_gone", param: "response_id" });
      await expect(c.responses.create({ model: "m", input: "More.", previous_response_id: first.id })).rejects.toMatchObject({
        status: 404,
        code: "response_replica_gone",
        param: "previous_response_id",
      });
      // A new conversation is served as ever.
      expect((await c.responses.create({ model: "m", input: "New.", max_output_tokens: 2 })).id).toMatch(/^resp_/);
    } finally {
      await shrunk.close();
    }
  });
});

describe("a replica that stops", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "m", replicas: 2 }], { settings: { responseIdSecret: "a-test-secret-of-enough-length" } });
    await waitFor(() => h.gateway.registry.get("m")!.replicas.every((r) => r.ready), 10_000, "replicas ready");
  });
  afterAll(() => h.close());

  it("503 response_replica_unavailable while it is listed but not ready", async () => {
    const client = h.client();
    const first = await client.responses.create({ model: "m", input: "Hello.", max_output_tokens: 4 });
    const at = await holder(h.sims.m!, first.id);
    await h.sims.m![at]!.close();
    await waitFor(() => h.gateway.registry.get("m")!.replicas.filter((r) => r.ready).length === 1, 10_000, "replica out");
    await expect(client.responses.create({ model: "m", input: "More.", previous_response_id: first.id })).rejects.toMatchObject({
      status: 503,
      code: "response_replica_unavailable",
    });
    await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 503, code: "response_replica_unavailable" });
  });
});

describeWithRedis("two gateways sharing one Redis", () => {
  let redis: RunningRedis;
  let h: Harness;
  let second: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis();
    // No secret configured: the gateways agree on one through Redis.
    h = await startHarness([{ id: "m", replicas: 3 }], { settings: { redisUrl: redis.url } });
    await waitFor(() => h.gateway.registry.get("m")!.replicas.every((r) => r.ready), 10_000, "replicas ready");
    second = await gatewayOn(h.sims.m!, h.key, { redisUrl: redis.url });
  }, 30_000);
  afterAll(async () => {
    await second?.close();
    await h?.close();
    await redis?.stop();
  });

  it("a conversation alternating between the two gateways stays on one replica", async () => {
    const clients = [h.client(), clientOf(second, h.key)];
    let previous: string | undefined;
    const holders = new Set<number>();
    for (let turn = 0; turn < 6; turn++) {
      const r: OpenAI.Responses.Response = await clients[turn % 2]!.responses.create({ model: "m", input: `Turn ${turn}.`, previous_response_id: previous, max_output_tokens: 4 });
      previous = r.id;
      holders.add(await holder(h.sims.m!, r.id));
    }
    expect(holders.size).toBe(1);
    expect((await clients[1]!.responses.retrieve(previous!)).id).toBe(previous);
  });
});
