import { scrapedSum } from "../support/scrape";
import { startHarness, waitFor, type Harness } from "../support/harness";

/**
 * Usage per key that survives streaming (issue 16, item 4): every stream is counted, whether or not the client
 * asked for `stream_options.include_usage` and whether or not it read to the end, and the key's TPM is settled
 * with what the stream used, not with its reservation.
 */

const TPM = 10_000;
const PROMPT = "Say something about the sea.";

/** The gateway's counter for the harness key and model `m`. */
async function tokens(h: Harness, type: "prompt" | "completion"): Promise<number> {
  const text = await (await fetch(h.gateway.metricsUrl)).text();
  const m = text.match(new RegExp(`gateway_tokens_total\\{model="m",key="test-key",type="${type}"\\} (\\d+)`));
  return m ? Number(m[1]) : 0;
}

/** Reads a stream until `events` SSE data events arrived, then cuts the connection; returns what was read. */
async function readThenCut(h: Harness, path: string, body: unknown, events: number): Promise<string> {
  const abort = new AbortController();
  const res = await h.fetch(path, { json: body, signal: abort.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while ((text.match(/^data: /gm) ?? []).length < events) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  await reader.cancel().catch(() => undefined);
  return text;
}

describe("usage of streams", () => {
  let h: Harness;
  let promptTokens: number;

  beforeAll(async () => {
    // A long rate-limit window makes the bucket's refill negligible, so its level shows what was charged.
    h = await startHarness([{ id: "m", sim: { latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 15, prefillTimePerTokenMs: 0 } } }], {
      keyLimits: { tpm: TPM },
      settings: { rateLimitWindowMs: 3_600_000 },
    });
    const answer = (await (await h.fetch("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: PROMPT }], max_tokens: 1 } })).json()) as {
      usage: { prompt_tokens: number };
    };
    promptTokens = answer.usage.prompt_tokens;
  });
  afterAll(() => h.close());

  it("a stream read to the end without include_usage is counted, and its client sees no usage", async () => {
    const [p0, c0] = [await tokens(h, "prompt"), await tokens(h, "completion")];
    const res = await h.fetch("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: PROMPT }], stream: true, max_tokens: 6, ignore_eos: true } });
    const text = await res.text();
    expect(text).not.toContain('"usage"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    await waitFor(async () => (await tokens(h, "completion")) === c0 + 6, 2000, "completion tokens counted");
    expect(await tokens(h, "prompt")).toBe(p0 + promptTokens);
  });

  it("a client that asked for continuous_usage_stats gets the running usage on every chunk", async () => {
    const res = await h.fetch("/v1/chat/completions", {
      json: { model: "m", messages: [{ role: "user", content: PROMPT }], stream: true, max_tokens: 3, ignore_eos: true, stream_options: { include_usage: true, continuous_usage_stats: true } },
    });
    const chunks = (await res.text()).split("\n\n").filter((e) => e.startsWith("data: {"));
    expect(chunks.every((c) => c.includes('"usage":{'))).toBe(true);
  });

  /** Tokens the simulator generated so far (vLLM's counter): it only grows, cancelled requests' too. */
  const generatedBySimulator = () => scrapedSum(`${h.sims["m"]![0]!.url}/metrics`, "vllm:generation_tokens_total");

  it("a chat stream the client cut is counted with what it used, and the key's TPM settled with that", async () => {
    // Two identical small requests around the cut stream: the difference of the bucket's level is what the
    // stream was charged, give or take the probe's reservation against its usage (a few tokens).
    const probe = async () => {
      const res = await h.fetch("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 1 } });
      await res.text();
      return Number(res.headers.get("x-ratelimit-remaining-tokens"));
    };
    const before = await probe();
    const [p0, c0] = [await tokens(h, "prompt"), await tokens(h, "completion")];
    const generated0 = await generatedBySimulator();
    const body = { model: "m", messages: [{ role: "user", content: PROMPT }], stream: true, max_tokens: 400, ignore_eos: true };
    const read = await readThenCut(h, "/v1/chat/completions", body, 6);
    expect(read).not.toContain('"usage"');
    await waitFor(async () => (await tokens(h, "completion")) > c0, 3000, "cut stream counted");
    const completion = (await tokens(h, "completion")) - c0;
    // The role chunk and 5 tokens reached the client; the gateway may have relayed more before it saw the cut (how
    // many depends on the machine's load), never more than the model server generated for it.
    expect(completion).toBeGreaterThanOrEqual(5);
    expect(completion).toBeLessThanOrEqual((await generatedBySimulator()) - generated0);
    expect((await tokens(h, "prompt")) - p0).toBe(promptTokens);
    await waitFor(() => h.logs.some((l) => l.clientAborted === true && l.completionTokens === completion), 2000, "log line");

    const charged = before - (await probe());
    // Not the 400-token reservation: the real figure.
    expect(Math.abs(charged - (promptTokens + completion))).toBeLessThan(25);
  });

  it("a legacy completions stream the client cut is counted too", async () => {
    const c0 = await tokens(h, "completion");
    await readThenCut(h, "/v1/completions", { model: "m", prompt: PROMPT, stream: true, max_tokens: 400, ignore_eos: true }, 4);
    await waitFor(async () => (await tokens(h, "completion")) >= c0 + 4, 3000, "cut stream counted");
    expect((await tokens(h, "completion")) - c0).toBeLessThan(20);
  });

  it("a Responses stream the client cut is counted by its delta events", async () => {
    const c0 = await tokens(h, "completion");
    // response.created, response.in_progress, the item's two opening events, then deltas.
    await readThenCut(h, "/v1/responses", { model: "m", input: PROMPT, stream: true, max_output_tokens: 400 }, 9);
    await waitFor(async () => (await tokens(h, "completion")) >= c0 + 5, 3000, "cut stream counted");
    expect((await tokens(h, "completion")) - c0).toBeLessThan(20);
  });
});
