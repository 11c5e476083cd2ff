import type { Socket } from "node:net";
import OpenAI from "openai";
import { expectEnvelope, expectStillHealthy, hostileDescribe, postHead, startHostileTarget, uploadWhole, type UploadResult } from "../support/hostile";
import { waitFor } from "../support/harness";
import { rawConnect, readResponse } from "../support/raw-http";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";

/**
 * Early answers reach clients that are still sending: every answer the gateway gives before reading a body
 * (401, 413, 415, 429, 503) is read by a raw client and by Node's fetch (undici, which the OpenAI SDK uses)
 * while they upload megabytes, because the gateway reads and drops the rest of the body before it closes
 * (lingering close). Without it, the kernel resets the connection under the client and most of them report
 * EPIPE or ECONNRESET instead of the answer.
 */
const MB = 1_000_000;
const SETTINGS = {
  // These clients finish sending within seconds; on a loaded machine the time bound must not be what decides.
  lingerTimeMs: 60_000,
  // Two requests in progress in all, one per key: a stalled upload of each of two keys fills the gateway.
  maxInFlightRequests: 2,
  maxInFlightRequestsPerKey: 1,
  bodyIdleTimeoutMs: 60_000,
};

type Early = { status: number; code: string; key: () => string; size: number; contentType?: string };

hostileDescribe("hostile: early answers reach clients still sending their body", () => {
  let gw: GatewayProcess;
  let bound: number;
  const holders: Socket[] = [];
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: SETTINGS, keyNames: ["client", "holder", "holder2"] }));
  });
  afterAll(() => gw.stop());
  afterEach(async () => {
    for (const h of holders.splice(0)) h.destroy();
    await waitFor(async () => (await gw.metric("gateway_lingering_connections")) === 0, 20_000, "no connection lingering");
    await expectStillHealthy(gw, bound);
  });

  const head = (e: Early, length: number) =>
    postHead("/v1/chat/completions", { authorization: `Bearer ${e.key()}`, "content-type": e.contentType ?? "application/json", "content-length": length });
  const chatOf = (size: number) => {
    const shell = JSON.stringify({ model: "chat", messages: [{ role: "user", content: "" }] });
    return JSON.stringify({ model: "chat", messages: [{ role: "user", content: "x".repeat(size - shell.length) }] });
  };
  const viaFetch = async (e: Early) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${e.key()}`, "content-type": e.contentType ?? "application/json" },
      body: chatOf(e.size),
    });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  };
  /** Uploads of `key` that are admitted and then stall, each holding one of the requests in progress. */
  const hold = async (key: string) => {
    const socket = await rawConnect(gw.port);
    socket.on("error", () => undefined);
    socket.write(postHead("/v1/chat/completions", { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": 100 }) + "{");
    holders.push(socket);
  };

  const EARLY: Record<string, Early> = {
    "401 invalid_api_key": { status: 401, code: "invalid_api_key", key: () => "sk-wrong", size: 5 * MB },
    "413 request_too_large": { status: 413, code: "request_too_large", key: () => gw.keys.client!, size: 5 * MB },
    "415 unsupported_charset": { status: 415, code: "unsupported_charset", key: () => gw.keys.client!, size: 4 * MB, contentType: "application/json; charset=latin1" },
    "429 concurrency_limit_exceeded": { status: 429, code: "concurrency_limit_exceeded", key: () => gw.keys.holder!, size: 4 * MB },
    "503 gateway_overloaded": { status: 503, code: "gateway_overloaded", key: () => gw.keys.client!, size: 4 * MB },
  };
  /** What each early answer needs in place: the key's one request in progress taken, or the gateway's two. */
  const prepare = async (name: string) => {
    if (name.startsWith("429")) await hold(gw.keys.holder!);
    if (name.startsWith("503")) await Promise.all([hold(gw.keys.holder!), hold(gw.keys.holder2!)]);
    // Admitted, each holds the 100 bytes of body memory it declared.
    if (holders.length > 0) await waitFor(async () => (await gw.metric("gateway_body_memory_bytes")) === 100 * holders.length, 5000, "the uploads admitted");
  };

  it.each(Object.keys(EARLY))("%s: 10 raw clients at once sending their whole body all read the answer", async (name) => {
    const e = EARLY[name]!;
    await prepare(name);
    const results = await Promise.all(Array.from({ length: 10 }, () => uploadWhole(gw.port, head(e, e.size), e.size)));
    for (const res of results) {
      expectEnvelope(res, e.status, e.code);
      expect(res.headers.connection).toBe("close");
    }
  });

  it.each(Object.keys(EARLY))("%s: fetch (undici) posting megabytes reads the answer, 3 times out of 3", async (name) => {
    const e = EARLY[name]!;
    await prepare(name);
    for (let i = 0; i < 3; i++) expectEnvelope(await viaFetch(e), e.status, e.code);
  });

  it("20 raw clients at once, each sending 4 MB or 5 MB with a bad key, all read the 401", async () => {
    for (const size of [4 * MB, 5 * MB]) {
      const e = { ...EARLY["401 invalid_api_key"]!, size };
      const results: UploadResult[] = await Promise.all(Array.from({ length: 20 }, () => uploadWhole(gw.port, head(e, size), size)));
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(401));
    }
  });

  it("fetch posting a 5 MB chat body reads the 413, 3 times out of 3; with a bad key, the 401", async () => {
    for (let i = 0; i < 3; i++) expectEnvelope(await viaFetch(EARLY["413 request_too_large"]!), 413, "request_too_large");
    for (let i = 0; i < 3; i++) expectEnvelope(await viaFetch(EARLY["401 invalid_api_key"]!), 401, "invalid_api_key");
  });

  it("the OpenAI SDK gets the 413 on its first upload: no connection error, so no retry re-sending the body", async () => {
    const before = gw.logs().length;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.keys.client!, maxRetries: 2 });
    const err = await client.chat.completions.create({ model: "chat", messages: [{ role: "user", content: "x".repeat(5 * MB) }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    await new Promise((resolve) => setTimeout(resolve, 400)); // the gateway flushes its log every 250 ms
    expect(gw.logs().slice(before).filter((l) => l.msg === "request" && l.status === 413)).toHaveLength(1);
  });
});

/** The count of one outcome of gateway_lingering_closes_total. */
async function lingerOutcome(gw: GatewayProcess, outcome: string): Promise<number> {
  const text = await (await fetch(gw.metricsUrl)).text();
  return Number(new RegExp(`^gateway_lingering_closes_total\\{outcome="${outcome}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
}

hostileDescribe("hostile: the bounds of a lingering close", () => {
  let gw: GatewayProcess;
  let bound: number;
  const KiB = 1024;
  // The time bound long enough that the cap test's stalled clients are still lingering on a loaded machine.
  const SMALL = { bodyLimitBytes: 64 * KiB, lingerBytes: 256 * KiB, lingerTimeMs: 10_000, maxLingeringConnections: 2 };
  const open: Socket[] = [];
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: SMALL }));
  });
  afterAll(() => gw.stop());
  afterEach(async () => {
    for (const s of open.splice(0)) s.destroy();
    await waitFor(async () => (await gw.metric("gateway_lingering_connections")) === 0, 20_000, "no connection lingering");
    await expectStillHealthy(gw, bound);
  });

  const refusedHead = (length: number) => postHead("/v1/chat/completions", { authorization: "Bearer sk-wrong", "content-length": length });
  /** A refused upload that sends `sent` bytes of its body and then nothing, keeping its side open. */
  const stalled = async (sent: number) => {
    const socket = await rawConnect(gw.port, undefined, { allowHalfOpen: true });
    socket.on("error", () => undefined);
    open.push(socket);
    socket.write(refusedHead(1_000_000));
    socket.write(Buffer.alloc(sent, 0x20));
    const answer = await readResponse(socket);
    return { socket, answer };
  };

  it("a client still sending past lingerBytes is cut off", async () => {
    const before = await lingerOutcome(gw, "byte_limit");
    await uploadWhole(gw.port, refusedHead(10_000_000), 10_000_000); // resolves once the gateway has closed it
    expect(await lingerOutcome(gw, "byte_limit")).toBe(before + 1);
  });

  it("a client that stops sending reads its answer, and the connection is closed at lingerTimeMs", async () => {
    const before = await lingerOutcome(gw, "time_limit");
    const { answer } = await stalled(10 * KiB);
    expectEnvelope(answer, 401, "invalid_api_key");
    expect(answer.headers.connection).toBe("close");
    await waitFor(async () => (await lingerOutcome(gw, "time_limit")) === before + 1, 25_000, "cut at the time bound");
  });

  it(`beyond maxLingeringConnections (${SMALL.maxLingeringConnections}), an early answer closes at once`, async () => {
    await Promise.all([stalled(KiB), stalled(KiB)]);
    expect(await gw.metric("gateway_lingering_connections")).toBe(2);
    const before = await lingerOutcome(gw, "over_cap");
    const third = await stalled(KiB);
    expectEnvelope(third.answer, 401, "invalid_api_key");
    await waitFor(async () => (await lingerOutcome(gw, "over_cap")) === before + 1, 5000, "closed at once");
    expect(await gw.metric("gateway_lingering_connections")).toBe(2);
  });

  it("an answer that keeps the connection (a listing sent with a body) drops the body and serves the next request", async () => {
    const before = await lingerOutcome(gw, "body_ended");
    const socket = await rawConnect(gw.port);
    open.push(socket);
    const listing = (body: number) => `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys.client}\r\nContent-Length: ${body}\r\n\r\n`;
    socket.write(listing(200 * KiB));
    socket.write(Buffer.alloc(200 * KiB, 0x20));
    socket.write(listing(0));
    const first = await readResponse(socket);
    expect(first.status).toBe(200);
    expect(first.headers.connection).not.toBe("close");
    expect((await readResponse(socket)).status).toBe(200);
    expect(await lingerOutcome(gw, "body_ended")).toBe(before + 1);
  });
});
