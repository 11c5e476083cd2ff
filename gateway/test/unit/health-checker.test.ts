// Active health checks against real servers on loopback: what a server shutting down says (a 503, a refused
// connection) takes a ready replica out at the first check; other failures (a 500, a timeout) only after the
// threshold, so one slow answer does not empty a busy model.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { createLogger } from "../../src/observability/logger";
import { HealthChecker } from "../../src/upstream/health-checker";
import { Replica } from "../../src/upstream/replica";
import { ReservedPort } from "../../../local/reserved-port";

describe("HealthChecker", () => {
  const servers: Server[] = [];
  const dispatcher = new Agent();
  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await dispatcher.close();
  });

  /** A replica's /health answering `status` (or never answering). */
  const serving = async (status: number | "hang"): Promise<string> => {
    const server = createServer((req, res) => {
      if (status !== "hang") res.writeHead(status).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  /** A ready replica at `url`, checked once per call with threshold 2. */
  const checked = (url: string) => {
    const replica = new Replica("m", url, 4);
    replica.markHealthy();
    const checker = new HealthChecker(() => [replica], dispatcher, { intervalMs: 60_000, timeoutMs: 300, unhealthyThreshold: 2 }, createLogger("silent"));
    return { replica, check: () => checker.checkAll() };
  };

  it("a 503 (a server shutting down) takes it out at the first check", async () => {
    const { replica, check } = checked(await serving(503));
    await check();
    expect(replica.ready).toBe(false);
    expect(replica.lastError).toBe("health status 503");
  });

  it("a refused connection (a server that stopped listening) takes it out at the first check", async () => {
    const port = await ReservedPort.reserve("127.0.0.1");
    const url = `http://127.0.0.1:${port.port}`;
    await port.release();
    const { replica, check } = checked(url);
    await check();
    expect(replica.ready).toBe(false);
    expect(replica.lastError).toMatch(/ECONNREFUSED/);
  });

  it.each([
    ["a 500", 500 as const],
    ["a timeout", "hang" as const],
  ])("%s counts toward the threshold: out only at the second check in a row", async (_what, status) => {
    const { replica, check } = checked(await serving(status));
    await check();
    expect(replica.ready).toBe(true);
    await check();
    expect(replica.ready).toBe(false);
  });

  it("a replica still starting stays starting on a 503 (it never was ready)", async () => {
    const replica = new Replica("m", await serving(503), 4);
    const checker = new HealthChecker(() => [replica], dispatcher, { intervalMs: 60_000, timeoutMs: 300, unhealthyThreshold: 2 }, createLogger("silent"));
    await checker.checkAll();
    expect(replica.state).toBe("starting");
  });
});
