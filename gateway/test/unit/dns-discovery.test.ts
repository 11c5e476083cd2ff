import { parseCatalog } from "../../src/config/load-catalog";
import { createLogger } from "../../src/observability/logger";
import { DnsDiscovery } from "../../src/upstream/dns-discovery";
import { ModelPool } from "../../src/upstream/model-pool";

describe("DNS discovery", () => {
  const model = parseCatalog({
    models: [{ id: "m", category: "generative", upstream: { mode: "dns", host: "ms-m.serving.svc.cluster.local", port: 8000 } }],
  }).models[0]!;

  it("follows the resolved addresses and keeps the state of replicas that stay", async () => {
    let answer = ["10.0.0.2", "10.0.0.1"];
    const pool = new ModelPool(model);
    const d = new DnsDiscovery(pool, createLogger("silent"), async () => answer);
    await d.refresh();
    expect(pool.replicas.map((r) => r.url)).toEqual(["http://10.0.0.1:8000", "http://10.0.0.2:8000"]);
    pool.replicas[0]!.markHealthy();
    pool.replicas[0]!.inFlight = 3;
    answer = ["10.0.0.1", "10.0.0.3", "fd00::7"];
    await d.refresh();
    expect(pool.replicas.map((r) => r.url)).toEqual(["http://10.0.0.1:8000", "http://10.0.0.3:8000", "http://[fd00::7]:8000"]);
    expect(pool.replicas[0]!.ready).toBe(true);
    expect(pool.replicas[0]!.inFlight).toBe(3);
    expect(pool.replicas[1]!.state).toBe("starting");
  });

  it("keeps the last replica set when a lookup fails", async () => {
    const pool = new ModelPool(model);
    let fail = false;
    const d = new DnsDiscovery(pool, createLogger("silent"), async () => {
      if (fail) throw new Error("SERVFAIL");
      return ["10.0.0.9"];
    });
    await d.refresh();
    fail = true;
    await d.refresh();
    expect(pool.replicas.map((r) => r.url)).toEqual(["http://10.0.0.9:8000"]);
  });
});
