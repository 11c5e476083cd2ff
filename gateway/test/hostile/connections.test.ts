import { connect, type Socket } from "node:net";
import { exchange, expectStillHealthy, postHead, startHostileTarget } from "../support/hostile";
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

describe("hostile: connection caps", () => {
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
