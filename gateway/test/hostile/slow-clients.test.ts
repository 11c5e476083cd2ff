import { connect } from "node:net";
import { exchange, expectEnvelope, expectStillHealthy, hostileDescribe, postHead, startHostileTarget, type Part } from "../support/hostile";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";
import { waitFor } from "../support/harness";
import { readResponse } from "../support/raw-http";

/**
 * Slow and stalling clients: every phase of a request a client controls (headers, body, reading the answer,
 * idling between requests) is bounded in time, and a refused client is refused before its body is read.
 * Timeouts are shortened here; the production defaults are in docs/gateway-api.md. A client that stops
 * reading its answer is in acceptance.flood.test.ts (it takes an answer larger than the kernel's buffers).
 */
const SETTINGS = {
  headersTimeoutMs: 1000,
  requestTimeoutMs: 6000,
  bodyIdleTimeoutMs: 1000,
  bodyTimeoutMs: 2500,
  keepAliveTimeoutMs: 1500,
  clientStallTimeoutMs: 1500,
};

const trickle = (text: string, every: number): Part[] => [...text].flatMap((c) => [c, { pauseMs: every }]);

hostileDescribe("hostile: slow clients", () => {
  let gw: GatewayProcess;
  let bound: number;
  let key: string;
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: SETTINGS }));
    key = gw.keys.attacker!;
  });
  afterAll(() => gw.stop());
  afterEach(() => expectStillHealthy(gw, bound));

  const chat = JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hi" }], max_tokens: 1 });
  const head = (extra: Record<string, string | number> = {}) =>
    postHead("/v1/chat/completions", { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(chat), ...extra });

  it("a connection that never sends a byte gets 408 and is closed", async () => {
    const res = await exchange(gw.port, []);
    expectEnvelope(res as never, 408, "request_timeout");
    expect(res.closed).toBe(true);
  });

  it("headers trickled byte by byte (slowloris) get 408", async () => {
    const res = await exchange(gw.port, trickle(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`, 150));
    expectEnvelope(res as never, 408, "request_timeout");
    expect(res.closed).toBe(true);
  });

  it("a body that stops arriving gets 408 and its memory back", async () => {
    const res = await exchange(gw.port, [head(), chat.slice(0, 10), { pauseMs: 4000 }, chat.slice(10)]);
    expectEnvelope(res as never, 408, "request_timeout");
    expect(res.closed).toBe(true);
    await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 0, 5000, "body memory returned");
  });

  it("a body trickled just inside the idle timeout is cut at the total body timeout", async () => {
    const res = await exchange(gw.port, [head(), ...trickle(chat, 400)], { timeoutMs: 15_000 });
    expectEnvelope(res as never, 408, "request_timeout");
  });

  it("a declared 1 GB body is refused with 413 before a byte of it is sent", async () => {
    const res = await exchange(gw.port, [postHead("/v1/chat/completions", { authorization: `Bearer ${key}`, "content-length": 1_000_000_000 })]);
    expectEnvelope(res as never, 413, "request_too_large");
    expect(res.closed).toBe(true);
  });

  it("Expect: 100-continue: a refused client is never asked for its body; an admitted one is", async () => {
    const refused = await exchange(gw.port, [postHead("/v1/chat/completions", { authorization: "Bearer sk-wrong", expect: "100-continue", "content-length": 4_000_000 })]);
    expectEnvelope(refused as never, 401, "invalid_api_key");
    expect(refused.closed).toBe(true);

    const socket = connect({ port: gw.port, host: "127.0.0.1" });
    socket.write(head({ expect: "100-continue" }));
    const cont = await new Promise<string>((resolve) => socket.once("data", (d: Buffer) => resolve(d.toString())));
    expect(cont).toMatch(/^HTTP\/1\.1 100 Continue/);
    socket.write(chat);
    expect((await readResponse(socket)).status).toBe(200);
    socket.destroy();
  });

  it("a refused body is read and dropped: the client reads the envelope, then the connection closes; a request after it is never handled", async () => {
    const big = "x".repeat(300_000);
    const socket = connect({ port: gw.port, host: "127.0.0.1" });
    socket.on("error", () => undefined);
    socket.write(postHead("/v1/chat/completions", { authorization: "Bearer sk-wrong", "content-length": big.length }));
    socket.write(big);
    socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: never-handled\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    const refused = await readResponse(socket);
    expectEnvelope(refused, 401, "invalid_api_key");
    expect(refused.headers.connection).toBe("close");
    await expect(readResponse(socket)).rejects.toThrow(/closed before a response/);
    await new Promise((resolve) => setTimeout(resolve, 400)); // the gateway flushes its log every 250 ms
    expect(gw.logs().filter((l) => l.requestId === "never-handled")).toEqual([]);
  });

  it("an idle keep-alive connection is closed after the keep-alive timeout", async () => {
    const socket = connect({ port: gw.port, host: "127.0.0.1" });
    socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    expect((await readResponse(socket)).status).toBe(200);
    await new Promise((resolve) => socket.once("close", resolve));
  });
});
