import { connect } from "node:net";
import { normalClient, type GatewayProcess } from "../../../scripts/lib/gateway-process";
import { HostileClient, idleFlood, type AttackReport } from "../../../scripts/lib/hostile-client";
import { expectCleanLogs, expectStillHealthy, postHead, startHostileTarget } from "../support/hostile";
import { waitFor } from "../support/harness";

/**
 * The acceptance scenarios of issue #12, against the production gateway (the image's bundle and heap cap) with
 * the production defaults: attackers run in processes of their own (their sockets count against their own
 * open-file limits, raised where the machine allows), a normal client uses another address and key
 * throughout. `npm run test:flood`; CI runs it.
 */
const MiB = 1024 * 1024;

/** The normal client's requests while `attack` runs (sequential): every one must be served. */
async function serveDuring<T>(gw: GatewayProcess, attack: Promise<T>): Promise<{ result: T; served: number; failures: string[] }> {
  const client = normalClient(gw.url, gw.keys.client!, "127.0.0.2");
  let done = false;
  const failures: string[] = [];
  let served = 0;
  const loop = (async () => {
    while (!done) {
      const r = await client.chat();
      if (r.ok) served++;
      else failures.push(`${r.status} ${r.text.slice(0, 200)}`);
    }
  })();
  const result = await attack;
  // And a little longer, while the attack holds what it got.
  await new Promise((r) => setTimeout(r, 2000));
  done = true;
  await loop;
  await client.close();
  return { result, served, failures };
}

describe("acceptance: hostile floods with the production defaults", () => {
  let gw: GatewayProcess;
  let bound: number;
  const attackers: HostileClient[] = [];
  beforeAll(async () => {
    ({ gw, boundBytes: bound } = await startHostileTarget({ fileLimit: 65_536 }));
  });
  afterAll(async () => {
    await Promise.all(attackers.map((a) => a.release()));
    await gw.stop();
  });

  it("2,000 unfinished 4 MiB uploads from one client: its key holds 16 MiB, the rest is refused unread, another client is served", async () => {
    const attacker = await HostileClient.start();
    attackers.push(attacker);
    const { result, served, failures } = await serveDuring(
      gw,
      attacker.attack({ kind: "uploads", port: gw.port, localAddress: "127.0.0.10", key: gw.keys.attacker!, count: 2000, size: 4 * MiB, window: 256 }),
    );
    const report = result as AttackReport;
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    expect(report.opened + report.connectErrors).toBe(2000);
    expect(report.stillOpen).toBeLessThanOrEqual(2000 - (report.codes.inflight_bytes_exceeded ?? 0));
    expect(report.codes.inflight_bytes_exceeded).toBeGreaterThanOrEqual(1900);
    expect(await gw.metric("gateway_body_memory_bytes")).toBeLessThanOrEqual(16 * MiB);
    await attacker.release();
    await expectStillHealthy(gw, bound);
  });

  it("30,000 idle connections: the gateway holds at most its cap, another client is served", async () => {
    const addresses = Array.from({ length: 30 }, (_, i) => `127.0.1.${i + 1}`);
    const { result, served, failures } = await serveDuring(gw, idleFlood(gw.port, 30_000, addresses));
    attackers.push(...result.clients);
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    expect(result.report.opened).toBeGreaterThanOrEqual(29_000);
    expect(await gw.metric("gateway_open_connections")).toBeLessThanOrEqual(8192 + 1);
    await expectStillHealthy(gw, bound);
    await Promise.all(result.clients.map((c) => c.release()));
  });

  it("leaves no 500, no unhandled error and no over-long line in the log", async () => {
    await new Promise((r) => setTimeout(r, 400));
    expectCleanLogs(gw);
    expect(gw.logs().filter((l) => l.msg === "request" && (l.status as number) >= 500)).toEqual([]);
  });
});

describe("acceptance: a client that stops reading its answer", () => {
  let gw: GatewayProcess;
  let bound: number;
  beforeAll(async () => {
    // About 50 MB of embeddings as JSON floats (2,048 x 1,152): more than loopback's socket buffers hold (up to
    // 32 MiB receiving, 4 MiB sending), less than the 64 MiB answer limit.
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: { clientStallTimeoutMs: 2000 }, embedDimensions: 1152 }));
  });
  afterAll(() => gw.stop());

  it("is disconnected after the stall timeout, and the answer's memory is freed", async () => {
    const body = JSON.stringify({ model: "embed", input: Array.from({ length: 2048 }, (_, i) => `text ${i}`), encoding_format: "float" });
    const socket = connect({ port: gw.port, host: "127.0.0.1" });
    socket.on("error", () => undefined);
    socket.write(postHead("/v1/embeddings", { authorization: `Bearer ${gw.keys.attacker}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }));
    socket.write(body);
    socket.once("data", () => socket.pause()); // the first bytes, then nothing more
    await waitFor(() => gw.logs().some((l) => l.path === "/v1/embeddings" && l.clientStalled === true && l.clientAborted === true), 60_000, "the gateway giving up on the stalled client");
    socket.destroy();
    await expectStillHealthy(gw, bound);
  });
});
