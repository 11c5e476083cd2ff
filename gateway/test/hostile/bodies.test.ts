import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { EnvelopeSchema, expectStillHealthy, hostileDescribe, startHostileTarget } from "../support/hostile";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";

/**
 * Malformed, compressed, deep and maximal bodies against the production gateway process. Every one gets a
 * 4xx envelope (never a 500), and what is valid reaches the model server as the client's own bytes.
 */

const VALIDATION_CODES = new Set([
  "missing_required_parameter",
  "invalid_type",
  "invalid_value",
  "empty_array",
  "empty_string",
  "array_above_max_length",
  "string_below_min_length",
  "integer_below_min_value",
  "integer_above_max_value",
  "decimal_below_min_value",
  "decimal_above_max_value",
]);
const BODY_CODES = new Set(["invalid_json", "json_too_deep", "json_too_complex", "invalid_content_encoding", "request_too_large", "model_not_found", "model_not_supported", null]);

const CODERS: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

hostileDescribe("hostile: request bodies", () => {
  let gw: GatewayProcess;
  let bound: number;
  let recorder: Server;
  let recorded: Buffer | undefined;
  /** The bombs, compressed before anything starts: compressing 64 MiB takes seconds of this process, which also runs
   * the simulated model servers, and a model server that misses its health checks meanwhile is taken out of routing. */
  let bombs: Record<string, Buffer>;
  beforeAll(async () => {
    bombs = Object.fromEntries(Object.entries(CODERS).map(([coding, encode]) => [coding, encode(Buffer.alloc(64 * 1024 * 1024))]));
    // A model server that records the exact bytes it receives.
    recorder = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
        if (req.method === "POST") recorded = Buffer.concat(chunks);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 1, model: "upstream-name", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop", logprobs: null }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      });
    });
    await new Promise<void>((r) => recorder.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    ({ gw, boundBytes: bound } = await startHostileTarget({ extraModels: [{ id: "exact", url, upstreamModel: "upstream-name" }] }));
  });
  afterAll(async () => {
    await gw.stop();
    recorder.close();
  });
  afterEach(() => expectStillHealthy(gw, bound));

  async function post(body: string | Buffer, headers: Record<string, string> = {}, path = "/v1/chat/completions") {
    const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${gw.keys.attacker}`, "content-type": "application/json", ...headers }, body });
    const text = await res.text();
    return { status: res.status, text, contentType: res.headers.get("content-type") ?? "" };
  }

  function expect4xx(r: { status: number; text: string; contentType: string }, codes: Set<string | null>) {
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.contentType).toMatch(/^application\/json/);
    const code = EnvelopeSchema.parse(JSON.parse(r.text)).error.code;
    if (!codes.has(code)) throw new Error(`unexpected code ${code}: ${r.text.slice(0, 300)}`);
  }

  const chat = (extra: Record<string, unknown> = {}) => ({ model: "chat", messages: [{ role: "user", content: "hi" }], max_tokens: 1, ...extra });

  it("arbitrary bytes, JSON values and broken JSON get a 4xx envelope on both endpoints", async () => {
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(chat({ messages: v }))),
      fc.tuple(fc.string({ maxLength: 80 }), fc.nat(60)).map(([s, cut]) => JSON.stringify(chat({ junk: s })).slice(0, cut)),
    );
    await fc.assert(
      fc.asyncProperty(bodies, fc.constantFrom("/v1/chat/completions", "/v1/embeddings"), async (body, path) => {
        expect4xx(await post(body, {}, path), new Set([...BODY_CODES, ...VALIDATION_CODES]));
      }),
      { numRuns: 200 },
    );
  });

  it("one field of a valid body made wrong: 400 naming the field and the kind of mistake", async () => {
    // Wrong values only: a whole number in range is a valid max_tokens (the model server may still refuse it as
    // longer than its context, which is its answer, not the gateway's validation).
    const wrong = fc.oneof(
      fc.record({ field: fc.constantFrom("temperature", "top_p", "max_tokens", "n", "seed", "presence_penalty"), value: fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.double({ min: 1e3, max: 1e9 }).filter((v) => !Number.isInteger(v)), fc.constant(-5), fc.constant([])) }),
      fc.record({ field: fc.constantFrom("messages", "stop", "tools", "stream", "logit_bias"), value: fc.oneof(fc.integer(), fc.constant("x"), fc.constant({})) }),
    );
    await fc.assert(
      fc.asyncProperty(wrong, async ({ field, value }) => {
        const r = await post(JSON.stringify(chat({ [field]: value })));
        if (r.status === 200) return; // e.g. a null that the field allows
        expect4xx(r, VALIDATION_CODES);
        const e = EnvelopeSchema.parse(JSON.parse(r.text)).error;
        expect(e.param?.startsWith(field)).toBe(true);
        expect(e.message).toContain(field);
      }),
      { numRuns: 150 },
    );
  });

  it("compressed bodies: valid ones are served, corrupted ones get 400, never a 500", async () => {
    const valid = Buffer.from(JSON.stringify(chat()));
    for (const [coding, encode] of Object.entries(CODERS)) expect((await post(encode(valid), { "content-encoding": coding })).status).toBe(200);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(CODERS)), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.boolean(), async (coding, at, flip, truncate) => {
        const good = CODERS[coding]!(valid);
        const bad = Buffer.from(good);
        if (truncate) bad.fill(0, at % bad.length);
        else bad[at % bad.length] = bad[at % bad.length]! ^ flip;
        const r = await post(bad, { "content-encoding": coding });
        if (r.status !== 200) expect4xx(r, new Set([...BODY_CODES, ...VALIDATION_CODES]));
      }),
      { numRuns: 150 },
    );
  });

  it.each(Object.keys(CODERS))("a %s bomb (under 1 MiB, inflating to 64 MiB) stops at the limit: 413", async (coding) => {
    const bomb = bombs[coding]!; // 64 MiB of zeros: the gateway stops at 4 MiB whatever follows
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect4xx(await post(bomb, { "content-encoding": coding }), new Set(["request_too_large"]));
  });

  it("an unknown content coding and a foreign charset get 415 before the body is read", async () => {
    const r = await post("x", { "content-encoding": "zstd" });
    expect(r.status).toBe(415);
    expect4xx(r, new Set(["unsupported_content_encoding"]));
    expect4xx(await post("x", { "content-type": "application/json; charset=latin-9" }), new Set(["unsupported_charset"]));
  });

  it("nesting: the documented depth passes, one more is refused, 100,000 levels never reach the stack", async () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    // The root object is level 1, `junk`'s array level 2.
    expect((await post(JSON.stringify(chat()).replace(/}$/, `,"junk":${nested(127)}}`))).status).toBe(200);
    expect4xx(await post(JSON.stringify(chat()).replace(/}$/, `,"junk":${nested(128)}}`)), new Set(["json_too_deep"]));
    expect4xx(await post(JSON.stringify(chat()).replace(/}$/, `,"junk":${nested(100_000)}}`)), new Set(["json_too_deep"]));
    expect4xx(await post(`{"messages":[${"{".repeat(5000)}`), new Set(["json_too_deep"]));
  });

  it("more objects and arrays than the limit: 400 json_too_complex", async () => {
    expect4xx(await post(JSON.stringify(chat({ junk: Array.from({ length: 100_000 }, () => ({})) }))), new Set(["json_too_complex"]));
  });

  it("invalid UTF-8 is refused; a byte-order mark is accepted", async () => {
    expect4xx(await post(Buffer.concat([Buffer.from('{"model":"chat","messages":[{"role":"user","content":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')])), new Set(["invalid_json"]));
    expect((await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(chat()))]))).status).toBe(200);
  });

  it("forwards the client's own bytes: only `model` is replaced, big integers and escapes untouched", async () => {
    const body = '{"model":"exact","messages":[{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}],"seed":1,"x_big":123456789012345678901234567890,"x_exp":1e20,"model":"exact"}';
    const r = await post(body);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).model).toBe("exact");
    expect(recorded?.toString()).toBe('{"model":"upstream-name","messages":[{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}],"seed":1,"x_big":123456789012345678901234567890,"x_exp":1e20}');
  });

  it("an answer larger than the gateway holds passes through whole", async () => {
    const r = await post(JSON.stringify({ model: "embed", input: Array.from({ length: 400 }, (_, i) => `text ${i}`), encoding_format: "float" }), {}, "/v1/embeddings");
    expect(r.status).toBe(200);
    expect(r.text.length).toBeGreaterThan(2 * 1024 * 1024);
    const answer = JSON.parse(r.text) as { model: string; data: unknown[] };
    expect({ model: answer.model, inputs: answer.data.length }).toEqual({ model: "embed", inputs: 400 });
  });
});
