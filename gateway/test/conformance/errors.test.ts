import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { chatBody, startHarness, type Harness } from "../support/harness";
import { describeWithOpenApi, loadOpenApi, type OpenApi } from "./openapi";

/**
 * Every error status the gateway answers to a client's input or to conditions made here, against the error schema
 * OpenAI's published document gives the operation for that status (`ErrorResponse` where it declares none), and the
 * headers it declares (429's Retry-After).
 */

const limited = generateApiKey();

describeWithOpenApi("error answers against OpenAI's published OpenAPI document", () => {
  let api: OpenApi;
  let h: Harness;

  beforeAll(async () => {
    api = loadOpenApi();
    h = await startHarness(
      [
        { id: "chat" },
        { id: "vectors", category: "embedder" },
        // A catalog endpoint on the discard port, where nothing listens: never ready.
        { id: "gone", replicas: 0, extraEndpoints: ["http://127.0.0.1:9"] },
      ],
      {
        settings: { bodyLimitBytes: 64 * 1024, responseIdSecret: "a-conformance-secret-of-enough-length" },
        extraKeys: [{ name: "limited-key", sha256: hashApiKey(limited), rpm: 1 }],
      },
    );
  });
  afterAll(() => h?.close());

  /** Status, JSON, the body against the operation's error schema, declared headers against theirs. */
  async function expectError(res: Response, status: number, apiPath: string, method: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const what = `${method.toUpperCase()} ${apiPath} ${status}`;
    expect({ what, problems: api.check(api.errorPointer(apiPath, method, status), await res.json()) }).toEqual({ what, problems: [] });
    for (const [name, pointer] of Object.entries(api.declaredHeaders(apiPath, method, status))) {
      const raw = res.headers.get(name);
      if (raw === null) continue;
      const header = `${what} header ${name}`;
      expect({ header, problems: api.check(pointer, /^-?\d+$/.test(raw) ? Number(raw) : raw) }).toEqual({ header, problems: [] });
    }
  }

  it("400: a field out of range, malformed JSON, a model of the wrong kind, on each endpoint", async () => {
    await expectError(await h.fetch("/v1/chat/completions", { json: chatBody("chat", { max_tokens: 0 }) }), 400, "/chat/completions", "post");
    await expectError(await h.fetch("/v1/chat/completions", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } }), 400, "/chat/completions", "post");
    await expectError(await h.fetch("/v1/completions", { json: { model: "chat", prompt: "x", max_tokens: -1 } }), 400, "/completions", "post");
    await expectError(await h.fetch("/v1/embeddings", { json: { model: "chat", input: "x" } }), 400, "/embeddings", "post");
    await expectError(await h.fetch("/v1/responses", { json: { model: "chat", input: "x", max_output_tokens: "many" } }), 400, "/responses", "post");
  });

  it("401: no key, another scheme, a wrong key", async () => {
    await expectError(await h.fetch("/v1/models", { headers: { authorization: "" } }), 401, "/models", "get");
    await expectError(await h.fetch("/v1/models", { headers: { authorization: `Basic ${h.key}` } }), 401, "/models", "get");
    await expectError(await h.fetch("/v1/chat/completions", { json: chatBody("chat"), headers: { authorization: "Bearer sk-wrong" } }), 401, "/chat/completions", "post");
  });

  it("404: an unknown model, an unknown model card, an unknown stored response, an unknown URL", async () => {
    await expectError(await h.fetch("/v1/chat/completions", { json: chatBody("nope") }), 404, "/chat/completions", "post");
    await expectError(await h.fetch("/v1/models/nope"), 404, "/models/{model}", "get");
    await expectError(await h.fetch(`/v1/responses/resp_${"0".repeat(48)}`), 404, "/responses/{response_id}", "get");
    await expectError(await h.fetch("/v1/no-such-endpoint"), 404, "/no-such-endpoint", "get");
  });

  it("405: DELETE of a stored response", async () => {
    const created = await h.fetch("/v1/responses", { json: { model: "chat", input: "Hi", max_output_tokens: 4 } });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    await expectError(await h.fetch(`/v1/responses/${id}`, { method: "DELETE" }), 405, "/responses/{response_id}", "delete");
  });

  it("413: a body over the limit", async () => {
    const big = chatBody("chat", { messages: [{ role: "user", content: "x".repeat(100 * 1024) }] });
    await expectError(await h.fetch("/v1/chat/completions", { json: big }), 413, "/chat/completions", "post");
  });

  it("415: an unknown Content-Encoding, a charset other than UTF-8", async () => {
    const body = JSON.stringify(chatBody("chat"));
    await expectError(await h.fetch("/v1/chat/completions", { method: "POST", body, headers: { "content-type": "application/json", "content-encoding": "compress" } }), 415, "/chat/completions", "post");
    await expectError(await h.fetch("/v1/chat/completions", { method: "POST", body, headers: { "content-type": "application/json; charset=latin1" } }), 415, "/chat/completions", "post");
  });

  it("429: a key over its requests per minute, with the Retry-After the document declares", async () => {
    const headers = { authorization: `Bearer ${limited}` };
    expect((await h.fetch("/v1/chat/completions", { json: chatBody("chat", { max_tokens: 2 }), headers })).status).toBe(200);
    const res = await h.fetch("/v1/chat/completions", { json: chatBody("chat", { max_tokens: 2 }), headers });
    expect(res.headers.get("retry-after")).toBeTruthy();
    await expectError(res, 429, "/chat/completions", "post");
  });

  it("503: a model with no ready replica", async () => {
    await expectError(await h.fetch("/v1/chat/completions", { json: chatBody("gone") }), 503, "/chat/completions", "post");
  });
});
