import fc from "fast-check";
import { z } from "zod";
import { startHarness, chatBody, type Harness } from "../support/harness";

/**
 * Generated bad input: hundreds of broken bodies and headers. Every answer must be a 4xx envelope
 * and the gateway must keep serving valid requests afterwards.
 */

const EnvelopeSchema = z.strictObject({
  error: z.strictObject({ message: z.string().min(1), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});

const validChat = chatBody("chat-model", { max_tokens: 2 });

/** Values that are wrong for each field, per OpenAI's ranges. */
const BAD_VALUES: Record<string, unknown[]> = {
  model: [null, 42, "", ["chat-model"], {}],
  messages: [null, "hi", [], [{}], [{ role: "user" }], [{ role: 5, content: "x" }], [{ role: "user", content: 5 }], [null]],
  temperature: [-0.01, 2.5, "0.5", true, [], {}],
  top_p: [0, -1, 1.01, "1"],
  max_tokens: [0, -5, 1.5, "10"],
  max_completion_tokens: [0, 2.2, "x"],
  n: [0, 129, 1.5],
  stop: ["", ["a", "b", "c", "d", "e"], [1], [""], 5],
  seed: [1.5, "7", 2 ** 60],
  presence_penalty: [-2.01, 2.01, "0"],
  frequency_penalty: [-3, 3, "x"],
  stream: ["true", 1, {}],
  stream_options: [{ include_usage: true }, "x"],
  tools: [[], [{}], [{ type: "function" }], [{ type: "function", function: { name: "has space" } }], "tools"],
  tool_choice: ["auto", "sometimes", { type: "function" }],
  logprobs: ["yes"],
  top_logprobs: [21, -1],
  logit_bias: [{ "1": 101 }, "x"],
};

const mutatedBody = fc
  .constantFrom(...Object.keys(BAD_VALUES))
  .chain((field) => fc.record({ field: fc.constant(field), value: fc.constantFrom(...BAD_VALUES[field]!) }))
  .map(({ field, value }) => JSON.stringify({ ...validChat, [field]: value }));

const rawGarbage = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.constantFrom("{", "[", "{\"model\":", "null", "true", "1e309", "\u0000", "{\"model\":\"chat-model\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]"),
);

const badAuthorization = fc.oneof(
  fc.string({ maxLength: 80 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  fc.constantFrom("Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token sk-x", "bearer\tsk-x"),
  fc.string({ minLength: 1, maxLength: 60 }).filter((s) => /^[\x21-\x7e]+$/.test(s)).map((s) => `Bearer ${s}`),
);

describe("malformed input", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([{ id: "chat-model" }, { id: "embed-model", category: "embedder" }], { settings: { bodyLimitBytes: 16 * 1024 } });
  });
  afterAll(() => h.close());

  async function expect4xxEnvelope(res: Response): Promise<void> {
    const text = await res.text();
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(EnvelopeSchema.safeParse(JSON.parse(text)).success).toBe(true);
  }

  it("rejects bodies with one field out of range, naming the field", async () => {
    await fc.assert(
      fc.asyncProperty(mutatedBody, async (body) => {
        const res = await h.fetch("/v1/chat/completions", { method: "POST", body, headers: { "content-type": "application/json" } });
        await expect4xxEnvelope(res.clone());
        const err = ((await res.json()) as { error: { param: string | null } }).error;
        expect(err.param).not.toBeNull();
      }),
      { numRuns: 200 },
    );
  });

  it("answers arbitrary bytes and JSON on both endpoints with a 4xx envelope", async () => {
    await fc.assert(
      fc.asyncProperty(rawGarbage, fc.constantFrom("/v1/chat/completions", "/v1/embeddings"), async (body, path) => {
        await expect4xxEnvelope(await h.fetch(path, { method: "POST", body, headers: { "content-type": "application/json" } }));
      }),
      { numRuns: 200 },
    );
  });

  it("answers bad Authorization headers with 401 envelopes", async () => {
    await fc.assert(
      fc.asyncProperty(badAuthorization, async (authorization) => {
        const res = await fetch(`${h.baseURL}/chat/completions`, { method: "POST", headers: { authorization }, body: JSON.stringify(validChat) });
        expect(res.status).toBe(401);
        await expect4xxEnvelope(res);
      }),
      { numRuns: 100 },
    );
  });

  it("answers oversized bodies, odd content types and encodings with 4xx envelopes", async () => {
    const cases: RequestInit[] = [
      { method: "POST", body: JSON.stringify(chatBody("chat-model", { messages: [{ role: "user", content: "y".repeat(20_000) }] })) },
      { method: "POST", body: "x", headers: { "content-type": "application/json; charset=latin-9" } },
      { method: "POST", body: "x", headers: { "content-encoding": "br-unknown" } },
      { method: "POST", body: "" },
    ];
    for (const init of cases) await expect4xxEnvelope(await h.fetch("/v1/chat/completions", init));
  });

  it("is still healthy and serving afterwards", async () => {
    expect((await fetch(`${h.gateway.url}/healthz`)).status).toBe(200);
    const res = await h.fetch("/v1/chat/completions", { json: validChat });
    expect(res.status).toBe(200);
  });
});
