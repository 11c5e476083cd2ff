import type { RunningSimulator } from "../src";
import { chunksOf, fastSim, openaiClient, postJson, readEvents } from "./helpers";

/** Legacy text completions (`POST /v1/completions`) as vLLM serves them, raw and through the openai SDK. */

function complete(sim: RunningSimulator, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return postJson(sim, "/v1/completions", { prompt: "Once upon a time", ...body }, headers);
}

function openCompletionStream(sim: RunningSimulator, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${sim.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "Once upon a time", stream: true, ...body }),
  });
}

describe("/v1/completions", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["base-model", "base-alias"] });
  });
  afterAll(async () => {
    await sim.close();
  });

  test("answers vLLM's text_completion with max_tokens defaulting to 16", async () => {
    const res = await complete(sim, { model: "base-alias", temperature: 0, ignore_eos: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ object: "text_completion", model: "base-alias", system_fingerprint: null, kv_transfer_params: null });
    expect(res.body.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    const [choice] = res.body.choices;
    expect(choice).toMatchObject({ index: 0, logprobs: null, finish_reason: "length", stop_reason: null });
    expect(res.body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 16, total_tokens: 20, prompt_tokens_details: null });
    // Deterministic at temperature 0, like chat.
    expect((await complete(sim, { model: "base-alias", temperature: 0, ignore_eos: true })).body.choices[0].text).toBe(choice.text);
  });

  test("an array of prompts gives one choice each, in order, with usage summed; echo prepends the prompt", async () => {
    const res = await complete(sim, { prompt: ["alpha beta", "gamma"], max_tokens: 3, ignore_eos: true, echo: true });
    expect(res.body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1]);
    expect(res.body.choices[0].text.startsWith("alpha beta")).toBe(true);
    expect(res.body.choices[1].text.startsWith("gamma")).toBe(true);
    expect(res.body.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 });
    const echoOnly = await complete(sim, { prompt: "just this", max_tokens: 0, echo: true });
    expect(echoOnly.body.choices[0]).toMatchObject({ text: "just this", finish_reason: "length" });
    expect(echoOnly.body.usage.completion_tokens).toBe(0);
  });

  test("token-id prompts count one token per id", async () => {
    const res = await complete(sim, { prompt: [[1, 2, 3], [4]], max_tokens: 2, ignore_eos: true });
    expect(res.body.choices).toHaveLength(2);
    expect(res.body.usage.prompt_tokens).toBe(4);
  });

  test("stop cuts the text before the stop sequence", async () => {
    const res = await complete(sim, { max_tokens: 60, ignore_eos: true, stop: ["."] });
    expect(res.body.choices[0].finish_reason).toBe("stop");
    expect(res.body.choices[0].text).not.toContain(".");
  });

  test("streams one text chunk per token, the finish reason on the last, the usage chunk, then [DONE]", async () => {
    const events = await readEvents(await openCompletionStream(sim, { max_tokens: 5, ignore_eos: true, stream_options: { include_usage: true } }));
    expect(events[events.length - 1]?.data).toBe("[DONE]");
    const chunks = chunksOf(events);
    const tokens = chunks.slice(0, -1);
    expect(tokens).toHaveLength(5);
    for (const c of tokens) {
      expect(c).toMatchObject({ object: "text_completion", usage: null });
      expect(Object.keys(c.choices[0]).sort()).toEqual(["finish_reason", "index", "logprobs", "prompt_token_ids", "stop_reason", "text", "token_ids"]);
    }
    expect(tokens.map((c) => c.choices[0].finish_reason)).toEqual([null, null, null, null, "length"]);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 } });
  });

  test("vLLM's refusals: suffix, an empty prompt, max_tokens 0 without echo, stream_options without stream", async () => {
    const cases: [Record<string, unknown>, string, string | null][] = [
      [{ suffix: "end" }, "suffix is not currently supported", null],
      [{ prompt: "" }, "Either prompt or prompt_embeds must be provided and non-empty.", null],
      [{ max_tokens: 0 }, "max_tokens must be at least 1, got 0.", "max_tokens"],
      [{ stream_options: { include_usage: true } }, "Stream options can only be defined when `stream=True`.", "stream_options"],
      [{ temperature: 3 }, "temperature must be in [0, 2], got 3.", "temperature"],
    ];
    for (const [body, message, param] of cases) {
      const res = await complete(sim, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: { message, type: "BadRequestError", param, code: 400 } });
    }
    const tooLong = await complete(sim, { max_tokens: 9000 });
    expect(tooLong.body.error).toMatchObject({ param: "max_tokens", code: 400 });
    expect((await complete(sim, { model: "nope" })).status).toBe(404);
  });

  test("the openai SDK's completions.create, with and without streaming", async () => {
    const client = openaiClient(sim);
    const done = await client.completions.create({ model: "base-model", prompt: "Say something", max_tokens: 8 });
    expect(done.choices[0]?.text.length).toBeGreaterThan(0);
    expect(done.usage?.completion_tokens).toBeLessThanOrEqual(8);

    const stream = await client.completions.create({ model: "base-model", prompt: "Say something", max_tokens: 8, ignore_eos: true, stream: true, stream_options: { include_usage: true } } as never);
    let text = "";
    let usage: { completion_tokens: number } | undefined;
    for await (const chunk of stream as unknown as AsyncIterable<{ choices: { text: string }[]; usage?: { completion_tokens: number } | null }>) {
      text += chunk.choices[0]?.text ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage?.completion_tokens).toBe(8);
  });

  test("an embedding model refuses completions as vLLM does", async () => {
    const embed = await fastSim({ kind: "embed" });
    try {
      const res = await complete(embed, {});
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ message: "The model does not support Completions API", type: "BadRequestError", code: 400 });
    } finally {
      await embed.close();
    }
  });
});
