import { parseCatalog } from "../../src/config/load-catalog";
import { createLogger } from "../../src/observability/logger";
import { DnsDiscovery } from "../../src/upstream/dns-discovery";
import { ANONYMOUS } from "../../src/upstream/scheduler/tenant";
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

  it("an answer of no address (NXDOMAIN, NODATA) empties the set; the next answer refills it", async () => {
    const pool = new ModelPool(model);
    let answer: string[] | string = ["10.0.0.9"];
    const d = new DnsDiscovery(pool, createLogger("silent"), async () => {
      if (typeof answer === "string") throw Object.assign(new Error(`queryA ${answer}`), { code: answer });
      return answer;
    });
    await d.refresh();
    for (const code of ["ENOTFOUND", "ENODATA"]) {
      answer = code;
      await d.refresh();
      expect([code, pool.replicas.length]).toEqual([code, 0]);
      answer = ["10.0.0.9"];
      await d.refresh();
      expect(pool.replicas.map((r) => r.url)).toEqual(["http://10.0.0.9:8000"]);
    }
    answer = "ETIMEOUT";
    await d.refresh();
    expect(pool.replicas.length).toBe(1);
  });

  it("pool mode with a readiness name: ready while it resolves, not without; no name = always ready", async () => {
    const [withName, without] = parseCatalog({
      models: [
        { id: "p", category: "generative", upstream: { mode: "pool", url: "http://igw/p", readiness: { host: "model-p.serving.svc.cluster.local", port: 8000 } } },
        { id: "q", category: "generative", upstream: { mode: "pool", url: "http://igw/q" } },
      ],
    }).models;
    let answer: string[] | "ENOTFOUND" = "ENOTFOUND";
    const resolve = async () => {
      if (answer === "ENOTFOUND") throw Object.assign(new Error("queryA ENOTFOUND"), { code: answer });
      return answer;
    };
    const p = new ModelPool(withName!);
    const d = new DnsDiscovery(p, createLogger("silent"), resolve);
    await d.refresh();
    expect(p.isReady).toBe(false);
    expect(await p.acquire({ tenant: ANONYMOUS, ctx: {} })).toEqual({ ok: false, reason: "not_ready" });
    answer = ["10.1.0.4", "10.1.0.5"];
    await d.refresh();
    expect(p.isReady).toBe(true);
    expect(p.replicas.map((r) => r.url)).toEqual(["http://igw/p"]);
    const q = new ModelPool(without!);
    await new DnsDiscovery(q, createLogger("silent"), resolve).refresh();
    expect(q.isReady).toBe(true);
  });
});
