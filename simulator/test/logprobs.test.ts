import type { RunningSimulator } from "../src";
import { chat, chunksOf, fastSim, type Json, openaiClient, openStream, postJson, readEvents } from "./helpers";

/** `logprobs`/`top_logprobs` on chat and `logprobs` on legacy completions, in vLLM's shapes, JSON and streamed. */

const utf8 = (s: string) => [...Buffer.from(s, "utf8")];

/** A chat `top_logprobs` list: the chosen token first, distinct tokens, descending, a distribution's share. */
function expectChatPosition(entry: Json, topN: number): void {
  expect(Object.keys(entry)).toEqual(["token", "logprob", "bytes", "top_logprobs"]);
  expect(entry.bytes).toEqual(utf8(entry.token));
  expect(entry.logprob).toBeLessThanOrEqual(0);
  expect(entry.top_logprobs).toHaveLength(topN);
  if (topN === 0) return;
  expect(entry.top_logprobs[0]).toEqual({ token: entry.token, logprob: entry.logprob, bytes: entry.bytes });
  const values = entry.top_logprobs.map((c: Json) => c.logprob);
  expect(values).toEqual([...values].sort((a, b) => b - a));
  expect(new Set(entry.top_logprobs.map((c: Json) => c.token)).size).toBe(topN);
  for (const c of entry.top_logprobs) expect(c.bytes).toEqual(utf8(c.token));
  expect(values.reduce((sum: number, v: number) => sum + Math.exp(v), 0)).toBeLessThanOrEqual(1);
}

describe("log probabilities", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["lp-model"] });
  });
  afterAll(() => sim.close());

  describe("chat", () => {
    test("logprobs with top_logprobs: one entry per generated token, spelling the content, deterministic", async () => {
      const res = await chat(sim, { temperature: 0, logprobs: true, top_logprobs: 5 });
      expect(res.status).toBe(200);
      const [choice] = res.body.choices;
      expect(Object.keys(choice.logprobs)).toEqual(["content"]);
      const content = choice.logprobs.content;
      expect(content).toHaveLength(res.body.usage.completion_tokens);
      expect(content.map((e: Json) => e.token).join("")).toBe(choice.message.content);
      for (const entry of content) expectChatPosition(entry, 5);
      expect((await chat(sim, { temperature: 0, logprobs: true, top_logprobs: 5 })).body.choices[0].logprobs).toEqual(choice.logprobs);
    });

    test("logprobs alone: no alternatives; the 20 vLLM allows by default; without logprobs, null", async () => {
      const alone = await chat(sim, { temperature: 0, logprobs: true });
      for (const entry of alone.body.choices[0].logprobs.content) expectChatPosition(entry, 0);
      const most = await chat(sim, { temperature: 0, logprobs: true, top_logprobs: 20, max_tokens: 4 });
      for (const entry of most.body.choices[0].logprobs.content) expectChatPosition(entry, 20);
      expect((await chat(sim, { temperature: 0, top_logprobs: 0 })).body.choices[0].logprobs).toBeNull();
    });

    test("streamed: each token chunk carries its token's entry; the role and finish chunks null; the same as the JSON answer", async () => {
      const body = { temperature: 0, logprobs: true, top_logprobs: 2 };
      const chunks = chunksOf(await readEvents(await openStream(sim, body)));
      const choices = chunks.map((c) => c.choices[0]);
      expect(choices[0].logprobs).toBeNull();
      expect(choices[choices.length - 1]).toMatchObject({ finish_reason: "stop", logprobs: null });
      const tokenChoices = choices.slice(1, -1);
      for (const c of tokenChoices) {
        expect(c.logprobs.content).toHaveLength(1);
        expect(c.logprobs.content[0].token).toBe(c.delta.content);
        expectChatPosition(c.logprobs.content[0], 2);
      }
      const whole = await chat(sim, body);
      expect(tokenChoices.flatMap((c) => c.logprobs.content)).toEqual(whole.body.choices[0].logprobs.content);
    });

    test("the openai SDK reads them as ChatCompletionTokenLogprob", async () => {
      const completion = await openaiClient(sim).chat.completions.create({ model: "lp-model", messages: [{ role: "user", content: "Hi" }], logprobs: true, top_logprobs: 3, max_tokens: 5 });
      const content = completion.choices[0]?.logprobs?.content ?? [];
      expect(content).toHaveLength(completion.usage?.completion_tokens ?? -1);
      expect(content[0]?.top_logprobs).toHaveLength(3);
    });

    test.each([
      [{ top_logprobs: 2 }, "top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true."],
      [{ logprobs: false, top_logprobs: 1 }, "top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true."],
      [{ logprobs: true, top_logprobs: -2 }, "top_logprobs", "`top_logprobs` must be a positive value or -1."],
      [{ logprobs: true, top_logprobs: 21 }, "logprobs", "Requested sample logprobs of 21, which is greater than max allowed: 20"],
      [{ logprobs: "yes" }, "logprobs", "logprobs: Invalid input: expected boolean, received string"],
    ])("refused as vLLM refuses it: %j", async (fields, param, message) => {
      const res = await chat(sim, fields);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ message, type: "BadRequestError", param, code: 400 });
    });
  });

  describe("legacy completions", () => {
    const complete = (body: Record<string, unknown>) => postJson(sim, "/v1/completions", { prompt: "Once upon a time", temperature: 0, ...body });

    /** text_offset runs over the tokens from `first`, in characters. */
    function expectOffsets(lp: Json, first: number): void {
      let at = first;
      lp.tokens.forEach((token: string, i: number) => {
        expect(lp.text_offset[i]).toBe(at);
        at += token.length;
      });
    }

    test("logprobs: N gives tokens, their logprobs, the N best per position (the chosen among them) and offsets", async () => {
      const res = await complete({ logprobs: 3, max_tokens: 12 });
      const [choice] = res.body.choices;
      const lp = choice.logprobs;
      expect(Object.keys(lp).sort()).toEqual(["text_offset", "token_logprobs", "tokens", "top_logprobs"]);
      expect(lp.tokens.join("")).toBe(choice.text);
      expect(lp.tokens).toHaveLength(res.body.usage.completion_tokens);
      expectOffsets(lp, 0);
      lp.tokens.forEach((token: string, i: number) => {
        const top = lp.top_logprobs[i];
        expect(Object.keys(top)).toHaveLength(3);
        expect(top[token]).toBe(lp.token_logprobs[i]);
        expect(Math.max(...(Object.values(top) as number[]))).toBe(lp.token_logprobs[i]);
        expect(lp.token_logprobs[i]).toBeLessThanOrEqual(0);
      });
    });

    test("logprobs: 0 still names the chosen token, as vLLM does", async () => {
      const lp = (await complete({ logprobs: 0, max_tokens: 4 })).body.choices[0].logprobs;
      lp.tokens.forEach((token: string, i: number) => expect(lp.top_logprobs[i]).toEqual({ [token]: lp.token_logprobs[i] }));
    });

    test("with echo the prompt's tokens come first, the very first without a log probability", async () => {
      const res = await complete({ logprobs: 1, max_tokens: 5, echo: true });
      const [choice] = res.body.choices;
      const lp = choice.logprobs;
      expect(lp.tokens.join("")).toBe(choice.text);
      expect(lp.tokens.slice(0, 4)).toEqual(["Once", " upon", " a", " time"]);
      expect(lp.token_logprobs[0]).toBeNull();
      expect(lp.top_logprobs[0]).toBeNull();
      expect(lp.token_logprobs.slice(1).every((v: number) => v <= 0)).toBe(true);
      expectOffsets(lp, 0);
    });

    test("streamed: each chunk carries its token's, offsets continuing; the same as the JSON answer", async () => {
      const res = await fetch(`${sim.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Once upon a time", temperature: 0, logprobs: 2, max_tokens: 8, stream: true }),
      });
      const choices = chunksOf(await readEvents(res)).map((c) => c.choices[0]);
      let at = 0;
      for (const c of choices) {
        expect(c.logprobs.tokens).toEqual([c.text]);
        expect(c.logprobs.text_offset).toEqual([at]);
        at += c.text.length;
      }
      const whole = (await complete({ logprobs: 2, max_tokens: 8 })).body.choices[0].logprobs;
      expect(choices.flatMap((c) => c.logprobs.token_logprobs)).toEqual(whole.token_logprobs);
      expect(choices.flatMap((c) => c.logprobs.top_logprobs)).toEqual(whole.top_logprobs);
    });

    test("above vLLM's default max_logprobs of 20 is refused", async () => {
      const res = await complete({ logprobs: 21 });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ message: "Requested sample logprobs of 21, which is greater than max allowed: 20", param: "logprobs" });
    });
  });
});
