import type { RunningSimulator } from "../src";
import { chat, chunksOf, fastSim, type Json, openaiClient, openStream, readEvents } from "./helpers";

describe("chat completions", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["sim-chat", "sim-alias"], maxModelLen: 4096, podName: "pod-7" });
  });
  afterAll(() => sim.close());

  test("GET /v1/models lists every served name as a vLLM model card", async () => {
    const res = await fetch(`${sim.url}/v1/models`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.object).toBe("list");
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(["sim-chat", "sim-alias"]);
    for (const card of body.data) {
      expect(card).toMatchObject({ object: "model", owned_by: "vllm", root: "sim-chat", parent: null, max_model_len: 4096 });
      expect(Number.isInteger(card.created)).toBe(true);
      expect(Array.isArray(card.permission)).toBe(true);
    }
    const listed = await openaiClient(sim).models.list();
    expect(listed.data.map((m) => m.id)).toEqual(["sim-chat", "sim-alias"]);
  });

  test("non-streaming response has vLLM's shape, usage that adds up, and the pod header", async () => {
    const res = await chat(sim, { model: "sim-alias", temperature: 0 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-inference-pod")).toBe("pod-7");
    const body = res.body;
    expect(body).toMatchObject({ object: "chat.completion", model: "sim-alias" });
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    const choice = body.choices[0];
    expect(choice).toMatchObject({ index: 0, logprobs: null, finish_reason: "stop" });
    expect(choice.message.role).toBe("assistant");
    expect(typeof choice.message.content).toBe("string");
    expect(choice.message).not.toHaveProperty("tool_calls");
    const { prompt_tokens, completion_tokens, total_tokens } = body.usage;
    expect(prompt_tokens).toBeGreaterThan(2); // "Hello there" plus chat-template overhead
    expect(completion_tokens).toBeGreaterThanOrEqual(16);
    expect(completion_tokens).toBeLessThanOrEqual(64);
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);
  });

  test("a missing model means the primary model", async () => {
    const res = await chat(sim, {});
    expect(res.status).toBe(200);
    expect(res.body.model).toBe("sim-chat");
  });

  test("temperature 0 is deterministic; different prompts give different text", async () => {
    const a = await chat(sim, { temperature: 0 });
    const b = await chat(sim, { temperature: 0 });
    const other = await chat(sim, { temperature: 0, messages: [{ role: "user", content: "Something else entirely" }] });
    expect(a.body.choices[0].message.content).toBe(b.body.choices[0].message.content);
    expect(other.body.choices[0].message.content).not.toBe(a.body.choices[0].message.content);
  });

  test("a seed makes sampling reproducible; without one answers vary", async () => {
    const s1 = await chat(sim, { seed: 42, temperature: 0.9 });
    const s2 = await chat(sim, { seed: 42, temperature: 0.9 });
    const s3 = await chat(sim, { seed: 43, temperature: 0.9 });
    expect(s1.body.choices[0].message.content).toBe(s2.body.choices[0].message.content);
    expect(s3.body.choices[0].message.content).not.toBe(s1.body.choices[0].message.content);
    const r1 = await chat(sim, { temperature: 1 });
    const r2 = await chat(sim, { temperature: 1 });
    expect(r1.body.choices[0].message.content).not.toBe(r2.body.choices[0].message.content);
  });

  test("max_tokens and max_completion_tokens cap the answer with finish_reason length", async () => {
    const capped = await chat(sim, { temperature: 0, max_tokens: 5 });
    expect(capped.body.choices[0].finish_reason).toBe("length");
    expect(capped.body.usage.completion_tokens).toBe(5);
    // max_completion_tokens wins over max_tokens, as in vLLM.
    const both = await chat(sim, { temperature: 0, max_tokens: 50, max_completion_tokens: 3 });
    expect(both.body.choices[0].finish_reason).toBe("length");
    expect(both.body.usage.completion_tokens).toBe(3);
  });

  test("stop ends the text before the stop sequence", async () => {
    const full = (await chat(sim, { temperature: 0, max_tokens: 40 })).body.choices[0].message.content as string;
    const words = full.split(" ");
    const stop = ` ${words[6]}`;
    const cut = full.indexOf(stop);
    const stopped = await chat(sim, { temperature: 0, max_tokens: 40, stop: [stop, "never-appears"] });
    expect(stopped.body.choices[0].message.content).toBe(full.slice(0, cut));
    expect(stopped.body.choices[0].finish_reason).toBe("stop");
    expect(stopped.body.usage.completion_tokens).toBeLessThan(40);
    const asString = await chat(sim, { temperature: 0, max_tokens: 40, stop });
    expect(asString.body.choices[0].message.content).toBe(full.slice(0, cut));
  });

  test("x-request-id becomes the completion id and is visible in stats", async () => {
    const res = await chat(sim, {}, { "x-request-id": "req-abc-123" });
    expect(res.body.id).toBe("chatcmpl-req-abc-123");
    expect(sim.stats().lastRequestHeaders["x-request-id"]).toBe("req-abc-123");
  });

  test("streaming: role chunk, one token per chunk, finish chunk, usage chunk, [DONE]", async () => {
    const expected = (await chat(sim, { temperature: 0, max_tokens: 12 })).body;
    const res = await openStream(sim, { temperature: 0, max_tokens: 12, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readEvents(res);
    expect(events[events.length - 1]?.data).toBe("[DONE]");
    const chunks = chunksOf(events);
    for (const c of chunks) {
      expect(c.object).toBe("chat.completion.chunk");
      expect(c.id).toBe(chunks[0].id);
      expect(c.created).toBe(chunks[0].created);
      expect(c.model).toBe("sim-chat");
    }
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    const contentChunks = chunks.slice(1, -2);
    expect(contentChunks).toHaveLength(12);
    expect(contentChunks.map((c) => c.choices[0].delta.content).join("")).toBe(expected.choices[0].message.content);
    for (const c of contentChunks) expect(c.choices[0].finish_reason).toBeNull();
    const finish = chunks[chunks.length - 2];
    expect(finish.choices[0]).toMatchObject({ delta: {}, finish_reason: "length" });
    const usageChunk = chunks[chunks.length - 1];
    expect(usageChunk.choices).toEqual([]);
    const promptTokens = expected.usage.prompt_tokens;
    expect(usageChunk.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: 12, total_tokens: promptTokens + 12 });
  });

  test("stream_options present means include_usage defaults to true; absent means no usage chunk", async () => {
    const withOptions = chunksOf(await readEvents(await openStream(sim, { max_tokens: 3, stream_options: {} })));
    expect(withOptions[withOptions.length - 1].usage.completion_tokens).toBe(3);
    const without = chunksOf(await readEvents(await openStream(sim, { max_tokens: 3 })));
    expect(without.some((c) => "usage" in c)).toBe(false);
    expect(without[without.length - 1].choices[0].finish_reason).toBe("length");
    const off = chunksOf(await readEvents(await openStream(sim, { max_tokens: 3, stream_options: { include_usage: false } })));
    expect(off.some((c) => "usage" in c)).toBe(false);
  });

  test("the openai SDK reads both response kinds", async () => {
    const client = openaiClient(sim);
    const completion = await client.chat.completions.create({ model: "sim-chat", messages: [{ role: "user", content: "hi" }], temperature: 0, max_tokens: 8 });
    expect(completion.choices[0]?.finish_reason).toBe("length");
    const stream = await client.chat.completions.create({
      model: "sim-chat",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0,
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usageTokens = 0;
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? "";
      if (part.usage) usageTokens = part.usage.completion_tokens;
    }
    expect(text).toBe(completion.choices[0]?.message.content);
    expect(usageTokens).toBe(8);
  });
});

describe("ignore_eos (vLLM extension)", () => {
  it("generates exactly max_tokens and finishes with length", async () => {
    const { startSimulator } = await import("../src");
    const sim = await startSimulator({ latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 } });
    try {
      const res = await fetch(`${sim.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "sim-model", messages: [{ role: "user", content: "go" }], max_tokens: 150, ignore_eos: true }),
      });
      const body = (await res.json()) as { usage: { completion_tokens: number }; choices: { finish_reason: string }[] };
      expect(body.usage.completion_tokens).toBe(150);
      expect(body.choices[0]?.finish_reason).toBe("length");
    } finally {
      await sim.close();
    }
  });
});
