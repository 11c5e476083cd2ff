import { connect, type Socket } from "node:net";
import { exchange, expectStillHealthy, hostileDescribe, postHead, startHostileTarget } from "../support/hostile";
import { rawConnect, readResponse, readUntilClosed } from "../support/raw-http";
import { MAX_PIPELINED_REQUESTS } from "../../src/http/connection-guard";
import { waitFor } from "../support/harness";
import type { GatewayProcess } from "../../../scripts/lib/gateway-process";

/**
 * Connection caps with small numbers: one address holds at most its share, idle connections yield to new
 * clients at either cap, and only when every connection is busy is a new one refused.
 */
const SETTINGS = { maxConnections: 48, maxConnectionsPerAddress: 12, headersTimeoutMs: 30_000, requestTimeoutMs: 60_000, bodyIdleTimeoutMs: 30_000 };

interface Held {
  socket: Socket;
  closed: boolean;
}

function open(port: number, localAddress: string, first?: string): Promise<Held> {
  return new Promise((resolve) => {
    const held: Held = { socket: connect({ port, host: "127.0.0.1", localAddress }), closed: false };
    held.socket.on("error", () => undefined);
    held.socket.on("close", () => (held.closed = true));
    held.socket.on("connect", () => {
      if (first) held.socket.write(first);
      resolve(held);
    });
  });
}

const settle = () => new Promise((r) => setTimeout(r, 500));

hostileDescribe("hostile: connection caps", () => {
  let gw: GatewayProcess;
  let bound: number;
  const held: Held[] = [];
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: SETTINGS }));
  });
  afterAll(() => gw.stop());
  afterEach(async () => {
    for (const h of held.splice(0)) h.socket.destroy();
    await waitFor(async () => (await gw.metric("gateway_open_connections")) <= 1, 5000, "connections closed");
    await expectStillHealthy(gw, bound);
  });

  it("one address holds at most its cap of idle connections: its oldest yield to its newest", async () => {
    for (let i = 0; i < 40; i++) held.push(await open(gw.port, "127.0.0.40"));
    await settle();
    expect(held.filter((h) => !h.closed)).toHaveLength(12);
    expect(held.slice(-12).every((h) => !h.closed)).toBe(true);
    expect(await gw.metric("gateway_connections_evicted_total")).toBeGreaterThanOrEqual(28);
  });

  it("an address whose connections are all busy gets new ones refused; other addresses are served", async () => {
    const upload = postHead("/v1/chat/completions", { authorization: `Bearer ${gw.keys.attacker}`, "content-length": 100 }) + "{";
    for (let i = 0; i < 12; i++) held.push(await open(gw.port, "127.0.0.41", upload));
    await settle();
    const refusedBefore = await gw.metric("gateway_connections_refused_total");
    const extra = await open(gw.port, "127.0.0.41", upload);
    held.push(extra);
    await settle();
    expect(extra.closed).toBe(true);
    expect(held.slice(0, 12).every((h) => !h.closed)).toBe(true);
    expect(await gw.metric("gateway_connections_refused_total")).toBe(refusedBefore + 1);
    const other = await exchange(gw.port, [`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys.client}\r\n\r\n`], { localAddress: "127.0.0.42" });
    expect(other.status).toBe(200);
  });

  it("at the total cap, idle connections of a flood from many addresses yield to a new client", async () => {
    for (let a = 0; a < 6; a++) for (let i = 0; i < 10; i++) held.push(await open(gw.port, `127.0.1.${100 + a}`));
    await settle();
    expect(held.filter((h) => !h.closed).length).toBeLessThanOrEqual(48);
    const client = await exchange(gw.port, [`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.keys.client}\r\n\r\n`], { localAddress: "127.0.0.43" });
    expect(client.status).toBe(200);
  });
});

hostileDescribe("hostile: pipelining, and probes while every slot is taken", () => {
  let gw: GatewayProcess;
  let bound: number;
  const held: Held[] = [];
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: { maxConnections: 8, maxConnectionsPerAddress: 4, bodyIdleTimeoutMs: 30_000 } }));
  });
  afterAll(async () => {
    for (const h of held) h.socket.destroy();
    await gw.stop();
  });

  // Answered asynchronously (a synchronous answer would be written before the next request is parsed).
  const chatBody = JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hi" }], max_tokens: 1 });
  const chat = (key: string, id: string) =>
    postHead("/v1/chat/completions", { authorization: `Bearer ${key}`, "x-request-id": id, "content-type": "application/json", "content-length": chatBody.length }) + chatBody;
  const models = (key: string, id: string) => `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nAuthorization: Bearer ${key}\r\n\r\n`;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `p${i + 1}`);
  const echoed = (answers: { headers: Record<string, string> }[]) => answers.map((a) => a.headers["x-request-id"]);

  it(`${MAX_PIPELINED_REQUESTS} pipelined requests are all answered, in order, and the connection stays open`, async () => {
    const within = await rawConnect(gw.port, "127.0.0.60");
    within.write(ids(MAX_PIPELINED_REQUESTS).map((id) => chat(gw.keys.client!, id)).join(""));
    const answers = [];
    for (let i = 0; i < MAX_PIPELINED_REQUESTS; i++) answers.push(await readResponse(within));
    expect(answers.map((a) => a.status)).toEqual(Array(MAX_PIPELINED_REQUESTS).fill(200));
    expect(echoed(answers)).toEqual(ids(MAX_PIPELINED_REQUESTS));
    within.write(models(gw.keys.client!, "after"));
    expect((await readResponse(within)).status).toBe(200);
    within.destroy();
  });

  it(`past ${MAX_PIPELINED_REQUESTS} requests ahead of their answers, those before the cap are answered in order, then the connection closes`, async () => {
    const refusedBefore = await gw.metric("gateway_connections_refused_total");
    const over = await rawConnect(gw.port, "127.0.0.61");
    over.on("error", () => undefined);
    // One packet: every request arrives before the first answer (a chat's answer needs the model server).
    over.write(ids(MAX_PIPELINED_REQUESTS + 1).map((id) => chat(gw.keys.client!, id)).join(""));
    const answers = await readUntilClosed(over);
    expect(echoed(answers)).toEqual(ids(MAX_PIPELINED_REQUESTS));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(await gw.metric("gateway_connections_refused_total")).toBe(refusedBefore + 1);
    await expectStillHealthy(gw, bound);
  });

  it("200 pipelined requests: the answers are those of the first requests, in order, up to the cap; then the connection closes", async () => {
    const refusedBefore = await gw.metric("gateway_connections_refused_total");
    const socket = await rawConnect(gw.port, "127.0.0.65");
    socket.on("error", () => undefined);
    socket.write(ids(200).map((id) => models(gw.keys.client!, id)).join(""));
    const answers = await readUntilClosed(socket);
    // Each listing is answered as it is parsed, so the first has left before the cap counts: 16 or 17 answers.
    expect(answers.length).toBeGreaterThanOrEqual(MAX_PIPELINED_REQUESTS);
    expect(answers.length).toBeLessThan(200);
    expect(echoed(answers)).toEqual(ids(answers.length));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(await gw.metric("gateway_connections_refused_total")).toBe(refusedBefore + 1);
    await expectStillHealthy(gw, bound);
  });

  it("with every connection slot busy, the API refuses new connections but the probes answer on the operations listener", async () => {
    const upload = postHead("/v1/chat/completions", { authorization: `Bearer ${gw.keys.attacker}`, "content-length": 100 }) + "{";
    for (const address of ["127.0.0.62", "127.0.0.63"]) for (let i = 0; i < 4; i++) held.push(await open(gw.port, address, upload));
    await settle();
    const refused = await open(gw.port, "127.0.0.64", `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    await settle();
    expect(refused.closed).toBe(true);
    const probes = await Promise.all(["/healthz", "/readyz"].map(async (p) => (await fetch(`${gw.opsUrl}${p}`)).status));
    expect(probes).toEqual([200, 200]);
  });
});
