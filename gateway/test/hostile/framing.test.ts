import { exchange, expectEnvelope, expectStillHealthy, hostileDescribe, postHead, startHostileTarget } from "../support/hostile";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";

/**
 * Raw-socket framing abuse against the production gateway process: whatever Node's parser refuses leaves as
 * the exact envelope with the right status, and the connection is closed (nothing after a framing error can be
 * trusted). Request smuggling shapes (CL+TE, duplicate lengths) never reach a route.
 */
hostileDescribe("hostile: HTTP framing", () => {
  let gw: GatewayProcess;
  let bound: number;
  let key: string;
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget());
    key = gw.keys.attacker!;
  });
  afterAll(() => gw.stop());
  afterEach(() => expectStillHealthy(gw, bound));

  const chat = '{"model":"chat","messages":[{"role":"user","content":"hi"}],"max_tokens":1}';
  it.each([
    ["a garbage request line", 400, "invalid_http", "GARBAGE\r\n\r\n"],
    ["an invalid method token", 400, "invalid_http", "G@T /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"],
    ["a header without a colon", 400, "invalid_http", "GET /v1/models HTTP/1.1\r\nHost x\r\n\r\n"],
    ["a NUL byte in a header", 400, "invalid_http", "GET /v1/models HTTP/1.1\r\nHost: x\u0000y\r\n\r\n"],
    ["obsolete line folding", 400, "invalid_http", "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n"],
    ["Content-Length with Transfer-Encoding (smuggling)", 400, "invalid_http", `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
    ["two different Content-Lengths", 400, "invalid_http", `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde`],
    ["a negative Content-Length", 400, "invalid_http", `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`],
    ["a chunk size that is not hex", 400, "invalid_http", `${postHead("/v1/chat/completions", { authorization: "Bearer KEY", "transfer-encoding": "chunked" })}zz\r\nabc\r\n0\r\n\r\n`],
    ["a chunk extension over 16 KiB", 413, "request_too_large", `${postHead("/v1/chat/completions", { authorization: "Bearer KEY", "transfer-encoding": "chunked" })}1;${"x".repeat(20_000)}\r\na\r\n0\r\n\r\n`],
    ["headers over the 16 KiB limit", 431, "request_header_fields_too_large", `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`],
    ["a request line over the header limit", 431, "request_header_fields_too_large", `GET /v1/models/${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ["an expectation other than 100-continue", 417, "expectation_failed", `${postHead("/v1/chat/completions", { authorization: "Bearer KEY", expect: "magic", "content-length": chat.length })}`],
  ])("%s: %i %s, connection closed", async (_what, status, code, request) => {
    const res = await exchange(gw.port, [request.replaceAll("KEY", key)]);
    expectEnvelope(res as never, status, code);
    expect(res.closed).toBe(true);
  });

  it("a pipelined valid request is answered, then the garbage after it is refused", async () => {
    const valid = `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    const first = await exchange(gw.port, [valid + "NOT HTTP\r\n\r\n"]);
    expect(first.status).toBe(200);
  });

  it("an absolute-form URL does not reach another host: 404 envelope", async () => {
    const res = await exchange(gw.port, [`GET http://169.254.169.254/latest/meta-data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`]);
    expectEnvelope(res as never, 404, "unknown_url");
  });

  it("a body split across many tiny writes is still one valid request", async () => {
    const body = Buffer.from(chat);
    const parts = [postHead("/v1/chat/completions", { authorization: `Bearer ${key}`, "content-length": body.length, "content-type": "application/json" }), ...[...body].map((b) => Buffer.from([b]))];
    const res = await exchange(gw.port, parts);
    expect(res.status).toBe(200);
  });
});
