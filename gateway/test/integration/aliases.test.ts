import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";

type ModelList = { data: { id: string; owned_by: string }[] };

/** Aliases from the catalog: an alias reaches the first of its models with a ready replica. */
describe("model aliases and fallbacks", () => {
  let h: Harness;
  const chatOnly = generateApiKey();
  beforeAll(async () => {
    h = await startHarness([{ id: "big" }, { id: "small" }, { id: "vectors", category: "embedder" }], {
      extraKeys: [{ name: "chat-only", sha256: hashApiKey(chatOnly), models: ["chat"] }],
      mapCatalog: (c) => ({
        ...c,
        aliases: [
          { id: "chat", models: ["big", "small"] },
          { id: "chat-hidden", models: ["small"], listed: false },
          { id: "embed", models: ["vectors"] },
        ],
      }),
    });
  });
  afterAll(() => h.close());

  const ask = async (model: string, apiKey?: string) => {
    const res = await h.fetch("/v1/chat/completions", { json: chatBody(model, { max_tokens: 3 }), headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
    return { status: res.status, body: (await res.json()) as { model?: string; error?: { code: string; message: string } } };
  };
  const listed = async (apiKey?: string) => ((await (await h.fetch("/v1/models", { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} })).json()) as ModelList).data.map((m) => m.id);

  it("serves an alias with its first model; the answer and the metrics name the model that served", async () => {
    const { status, body } = await ask("chat");
    expect(status).toBe(200);
    expect(body.model).toBe("big");
    expect(h.sims.big![0]!.stats().completedTotal).toBe(1);
    const line = h.logs.find((l) => l.alias === "chat");
    expect(line).toMatchObject({ model: "big", alias: "chat", status: 200 });
    const metrics = await (await fetch(h.gateway.metricsUrl)).text();
    expect(metrics).toMatch(/gateway_requests_total\{model="big",endpoint="\/v1\/chat\/completions",status="200",key="test-key"\} 1/);
    expect(metrics).not.toMatch(/model="chat"/);
  });

  it("lists listed aliases after the models, and answers GET /v1/models/{alias}", async () => {
    expect(await listed()).toEqual(["big", "small", "vectors", "chat", "embed"]);
    const one = await h.fetch("/v1/models/chat-hidden");
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: "chat-hidden", object: "model" });
  });

  it("a key limited to an alias uses it, sees only it, and not the models behind it", async () => {
    expect((await ask("chat", chatOnly)).status).toBe(200);
    expect(await listed(chatOnly)).toEqual(["chat"]);
    const direct = await ask("big", chatOnly);
    expect(direct.status).toBe(404);
    expect(direct.body.error!.code).toBe("model_not_found");
  });

  it("keeps 404 for names that are neither, and refuses an alias on the wrong endpoint as for its model", async () => {
    const unknown = await ask("chat-xl");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error!.code).toBe("model_not_found");
    const wrong = await ask("embed");
    expect(wrong.status).toBe(400);
    const embedded = await h.fetch("/v1/embeddings", { json: { model: "embed", input: "x" } });
    expect(embedded.status).toBe(200);
    expect(((await embedded.json()) as { model: string }).model).toBe("vectors");
  });

  it("falls back to the next model when the first has no ready replica, then answers 503 when none has", async () => {
    const [bigSim] = h.sims.big!;
    bigSim!.kill();
    await bigSim!.close();
    await waitFor(() => !h.gateway.registry.get("big")!.isReady, 10_000, "big to be taken out");
    const fallback = await ask("chat");
    expect(fallback).toMatchObject({ status: 200, body: { model: "small" } });
    expect(await listed()).toEqual(["small", "vectors", "chat", "embed"]);

    const [smallSim] = h.sims.small!;
    smallSim!.kill();
    await smallSim!.close();
    await waitFor(() => !h.gateway.registry.get("small")!.isReady, 10_000, "small to be taken out");
    const none = await h.fetch("/v1/chat/completions", { json: chatBody("chat") });
    expect(none.status).toBe(503);
    expect(none.headers.get("retry-after")).toBeTruthy();
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("model_not_ready");
    expect(await listed()).toEqual(["vectors", "embed"]);
  });
});
