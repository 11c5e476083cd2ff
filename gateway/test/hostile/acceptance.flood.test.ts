import { connect } from "node:net";
import { normalClient, type GatewayProcess } from "../../../scripts/lib/gateway-process";
import { filesFor, filesPerProcessFor, HostileClient, idleFlood, requireFileLimit, type AttackReport } from "../../../scripts/lib/hostile-client";
import { settingsFromEnv } from "../../src/config/settings";
import { expectCleanLogs, expectStillHealthy, hostileDescribe, postHead, startHostileTarget } from "../support/hostile";
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

const UPLOADS = 2000;
const IDLE = 30_000;

hostileDescribe("acceptance: hostile floods with the production defaults", () => {
  let gw: GatewayProcess;
  let bound: number;
  const attackers: HostileClient[] = [];
  beforeAll(async () => {
    // What the floods need of this machine, checked before anything starts: the gateway must be able to hold its
    // default connection cap (it keeps a quarter of its descriptors for model servers), the uploads come from one
    // process, the idle connections from a bounded number of them.
    const gatewayFiles = Math.ceil(settingsFromEnv({}).maxConnections / 0.75);
    requireFileLimit(Math.max(gatewayFiles, filesFor(UPLOADS), filesPerProcessFor(IDLE)), "running the acceptance floods (npm run test:flood)");
    ({ gw, boundBytes: bound } = await startHostileTarget({ fileLimit: 65_536 }));
  });
  afterAll(async () => {
    await Promise.all(attackers.map((a) => a.release()));
    await gw.stop();
  });

  it("2,000 unfinished 4 MiB uploads from one client: its key holds 16 MiB, the rest is refused (their bodies dropped, never held), another client is served", async () => {
    const attacker = await HostileClient.start();
    attackers.push(attacker);
    const { result, served, failures } = await serveDuring(
      gw,
      attacker.attack({ kind: "uploads", port: gw.port, localAddress: "127.0.0.10", key: gw.keys.attacker!, count: UPLOADS, size: 4 * MiB, window: 256 }),
    );
    const report = result as AttackReport;
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    expect(report.opened + report.connectErrors).toBe(UPLOADS);
    expect(report.stillOpen).toBeLessThanOrEqual(UPLOADS - (report.codes.inflight_bytes_exceeded ?? 0));
    // Refused means answered and closed by the gateway while the upload went on: up to maxLingeringConnections
    // at a time after reading and dropping what was sent, the others at once, when a few answers are lost to the
    // kernel's reset (the client sees ECONNRESET before it reads). So the count of refusals is the count of
    // closes, and every answer that did arrive names the budget; but for the key's 4 admitted uploads, which get
    // 408 once they have stalled for bodyIdleTimeoutMs (20 s), when draining the others took the loaded machine
    // that long.
    expect(report.closedByServer).toBeGreaterThanOrEqual(1900);
    const { request_timeout: stalled = 0, ...refusals } = report.codes;
    expect(Object.keys(refusals)).toEqual(["inflight_bytes_exceeded"]);
    expect(stalled).toBeLessThanOrEqual(4);
    expect(report.codes.inflight_bytes_exceeded).toBeGreaterThanOrEqual(UPLOADS / 2);
    expect(await gw.metric("gateway_body_memory_bytes")).toBeLessThanOrEqual(16 * MiB);
    await attacker.release();
    await expectStillHealthy(gw, bound);
  });

  it("30,000 idle connections: the gateway holds at most its cap, another client is served", async () => {
    const addresses = Array.from({ length: 30 }, (_, i) => `127.0.1.${i + 1}`);
    const { result, served, failures } = await serveDuring(gw, idleFlood(gw.port, IDLE, addresses));
    attackers.push(...result.clients);
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    // Connections the kernel refused (a full accept queue while the gateway closes others) are retried by no one.
    expect(result.report.opened).toBeGreaterThanOrEqual(IDLE * 0.97);
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

hostileDescribe("acceptance: clients that stop reading large answers", () => {
  let gw: GatewayProcess;
  let bound: number;
  const CLIENTS = 8;
  const STALL_MS = 3000;
  beforeAll(async () => {
    // Embeddings of 2,048 inputs as JSON floats, about 16 MB each: several times what the kernel's buffers
    // between the gateway and a client hold (about 4 MiB sending, 128 KiB receiving for a client that never reads).
    ({ gw, boundBytes: bound } = await startHostileTarget({ settings: { answerStallTimeoutMs: STALL_MS } }));
  });
  afterAll(() => gw.stop());

  it(`${CLIENTS} at once from one key: the answers pass through unheld, each client is cut off after the stall timeout`, async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const before = gw.memory().rss;
    const body = JSON.stringify({ model: "embed", input: Array.from({ length: 2048 }, (_, i) => `text ${i}`), encoding_format: "float" });
    const sockets = await Promise.all(
      Array.from({ length: CLIENTS }, () => {
        const socket = connect({ port: gw.port, host: "127.0.0.1" });
        socket.on("error", () => undefined);
        socket.write(postHead("/v1/embeddings", { authorization: `Bearer ${gw.keys.attacker}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }));
        socket.write(body);
        // The first bytes of the answer, then nothing more.
        return new Promise<typeof socket>((resolve) => socket.once("data", () => (socket.pause(), resolve(socket))));
      }),
    );
    // While they stall, the gateway holds no answer: at most a chunk or two per client.
    let grewMost = 0;
    const watch = setInterval(() => (grewMost = Math.max(grewMost, gw.memory().rss - before)), 100);
    const stalled = () => gw.logs().filter((l) => l.path === "/v1/embeddings" && l.clientStalled === true).length;
    await waitFor(() => stalled() === CLIENTS, 60_000, "the gateway giving up on every stalled client");
    clearInterval(watch);
    expect(grewMost).toBeLessThan(CLIENTS * 2 * MiB); // one answer is 16 MB; holding them would be 128 MB
    expect(await gw.metric("gateway_answer_memory_bytes")).toBe(0);
    await waitFor(async () => (await gw.metric("gateway_replica_in_flight")) === 0, 5000, "the model-server connections released");
    for (const s of sockets) s.destroy();
    await expectStillHealthy(gw, bound);
  });
});
