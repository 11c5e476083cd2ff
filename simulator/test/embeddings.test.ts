import type { RunningSimulator } from "../src";
import { type Json, fastSim, l2norm, openaiClient, postJson } from "./helpers";

function decodeBase64(b64: string): Float32Array {
  const bytes = Buffer.from(b64, "base64");
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

describe("embeddings", () => {
  let sim: RunningSimulator;
  let generator: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["sim-embed"], kind: "embed", embeddingDimensions: 64, maxModelLen: 32 });
    generator = await fastSim({ models: ["sim-chat"] });
  });
  afterAll(async () => {
    await Promise.all([sim.close(), generator.close()]);
  });

  const embed = (body: Record<string, unknown>) => postJson(sim, "/v1/embeddings", { model: "sim-embed", ...body });

  test("a string input: one unit vector, vLLM response shape, token usage", async () => {
    const res = await embed({ input: "The quick brown fox" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "list", model: "sim-embed", usage: { prompt_tokens: 4, total_tokens: 4 } });
    expect(res.body.id).toMatch(/^embd-/);
    expect(Number.isInteger(res.body.created)).toBe(true);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ object: "embedding", index: 0 });
    expect(res.body.data[0].embedding).toHaveLength(64);
    expect(l2norm(res.body.data[0].embedding)).toBeCloseTo(1, 5);
  });

  test("string[]: one vector per input, in order, deterministic and distinct", async () => {
    const inputs = ["first text", "second text", "first text"];
    const a = await embed({ input: inputs });
    const b = await embed({ input: inputs });
    expect(a.body.data.map((d: Json) => d.index)).toEqual([0, 1, 2]);
    expect(a.body.data).toEqual(b.body.data);
    expect(a.body.data[0].embedding).toEqual(a.body.data[2].embedding);
    expect(a.body.data[0].embedding).not.toEqual(a.body.data[1].embedding);
    const single = await embed({ input: "second text" });
    expect(single.body.data[0].embedding).toEqual(a.body.data[1].embedding);
    expect(a.body.usage.prompt_tokens).toBe(6);
  });

  test("token ids: int[] is one input, int[][] is several", async () => {
    const one = await embed({ input: [101, 2023, 2003, 102] });
    expect(one.status).toBe(200);
    expect(one.body.data).toHaveLength(1);
    expect(one.body.usage.prompt_tokens).toBe(4);
    expect(l2norm(one.body.data[0].embedding)).toBeCloseTo(1, 5);
    const many = await embed({ input: [[101, 2023], [7, 8, 9], [101, 2023, 2003, 102]] });
    expect(many.body.data.map((d: Json) => d.index)).toEqual([0, 1, 2]);
    expect(many.body.usage.prompt_tokens).toBe(9);
    expect(many.body.data[2].embedding).toEqual(one.body.data[0].embedding);
    for (const d of many.body.data) expect(l2norm(d.embedding)).toBeCloseTo(1, 5);
  });

  test("texts sharing words are closer than unrelated texts", async () => {
    const res = await embed({ input: ["cats chase mice at night", "cats chase mice at dawn", "quarterly revenue grew strongly"] });
    const [a, b, c] = res.body.data.map((d: Json) => d.embedding as number[]);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * (y[i] ?? 0), 0);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c) + 0.3);
  });

  test("base64 is little-endian float32 of the same vector", async () => {
    const asFloat = await embed({ input: ["hello world", "x"], encoding_format: "float" });
    const asB64 = await embed({ input: ["hello world", "x"], encoding_format: "base64" });
    expect(typeof asB64.body.data[0].embedding).toBe("string");
    for (let i = 0; i < 2; i++) {
      const decoded = decodeBase64(asB64.body.data[i].embedding);
      expect(Array.from(decoded)).toEqual(asFloat.body.data[i].embedding);
    }
  });

  test("the openai SDK's default (base64) path decodes to the same unit vectors", async () => {
    const client = openaiClient(sim);
    const viaSdk = await client.embeddings.create({ model: "sim-embed", input: ["hello world", "x"] });
    const asFloat = await embed({ input: ["hello world", "x"] });
    expect(viaSdk.data).toHaveLength(2);
    expect(viaSdk.data[0]?.embedding).toEqual(asFloat.body.data[0].embedding);
    expect(viaSdk.data[1]?.embedding).toEqual(asFloat.body.data[1].embedding);
    expect(l2norm(viaSdk.data[0]?.embedding ?? [])).toBeCloseTo(1, 5);
  });

  test("vLLM's 400s: dimensions on a non-matryoshka model, over-long input, wrong task, empty input", async () => {
    const dims = await embed({ input: "hi", dimensions: 16 });
    expect(dims.status).toBe(400);
    expect(dims.body.error.message).toBe('Model "sim-embed" does not support matryoshka representation, changing output dimensions will lead to poor results.');
    const long = await embed({ input: Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ") });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ type: "BadRequestError", param: "input_tokens", code: 400 });
    expect(long.body.error.message).toMatch(/maximum context length is 32 tokens\. However, you requested 40 tokens/);
    const onGenerator = await postJson(generator, "/v1/embeddings", { input: "hi" });
    expect(onGenerator.status).toBe(400);
    expect(onGenerator.body.error.message).toBe("The model does not support Embeddings API");
    const chatOnEmbedder = await postJson(sim, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] });
    expect(chatOnEmbedder.status).toBe(400);
    expect(chatOnEmbedder.body.error.message).toBe("The model does not support Chat Completions API");
    const empty = await embed({ input: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.error.param).toBe("input");
  });
});
