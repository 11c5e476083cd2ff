// A model scaled down, or a replica restarted, under load: no client sees it. Real processes throughout: three
// simulator processes on 127.0.0.1, .2 and .3 (one port, as pods of a headless Service), a real DNS server on
// loopback that the gateway's resolver asks (as Kubernetes' DNS, it keeps listing a pod that stopped until told
// otherwise), and the gateway with its production discovery and health-check periods (5 s each). SIGTERM makes a
// simulator stop accepting at once and finish what it has, as vLLM's server does.
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { getServers, setServers } from "node:dns";
import { Agent, request } from "undici";
import { spawnSimulator, stopAll } from "../../../scripts/lib/processes";
import { startDnsServer, type LoopbackDns } from "../support/dns-server";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";
import { ReservedPort } from "../../../local/reserved-port";
import { scrapedSum } from "../support/scrape";

const HOST = "model-m.scale-down.internal";
const ADDRESSES = ["127.0.0.1", "127.0.0.2", "127.0.0.3"];
/** How long DNS keeps listing a replica that stopped (endpoint removal, the cluster's DNS cache and a refresh). */
const LISTED_AFTER_STOP_MS = 10_000;
/** Scenarios per test run; SCALE_DOWN_RUNS=5 repeats them (docs/development.md records the runs). */
const RUNS = Number(process.env.SCALE_DOWN_RUNS ?? 1);

interface Tally {
  ok: number;
  failed: string[];
}

describe("scale-down and restart of model servers under load, real processes", () => {
  const records = new Map<string, string[]>();
  let dns: LoopbackDns;
  let previousServers: string[];
  let h: Harness;
  let port: number;
  const sims = new Map<string, ChildProcess>();
  const client = new Agent({ keepAliveTimeout: 10_000 });

  const startReplica = async (address: string): Promise<void> => {
    const sim = await spawnSimulator(["--model", "m", "--host", address, "--port", String(port), "--ttft-ms", "20", "--itl-ms", "10", "--max-num-seqs", "32", "--pod-name", address]);
    sim.proc.on("error", () => undefined);
    sims.set(address, sim.proc);
  };
  /** SIGTERM: the simulator stops accepting, finishes what it has, exits (as vLLM's server does). */
  const stopReplica = async (address: string): Promise<void> => {
    const proc = sims.get(address)!;
    sims.delete(address);
    const exited = once(proc, "exit");
    proc.kill("SIGTERM");
    await exited;
  };

  beforeAll(async () => {
    dns = await startDnsServer(records);
    previousServers = getServers();
    setServers([`127.0.0.1:${dns.port}`]);
    // A port free on 127.0.0.1 (held until the replicas start); .2 and .3 are other addresses of the loopback.
    const reserved = await ReservedPort.reserve("127.0.0.1");
    port = reserved.port;
    await reserved.release();
    h = await startHarness([], {
      // The production periods: discovery every 5 s (the catalog's default) and health checks every 5 s.
      settings: { healthIntervalMs: 5000 },
      mapCatalog: () => ({ models: [{ id: "m", category: "generative", maxConcurrency: 32, upstream: { mode: "dns", host: HOST, port } }] }),
    });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await stopAll([...sims.values()]);
    await client.close();
    setServers(previousServers);
    await dns?.close();
  });

  /** Three replicas listed and ready, as after a scale-up. */
  const scaleTo3 = async (): Promise<void> => {
    for (const a of ADDRESSES) if (!sims.has(a)) await startReplica(a);
    records.set(HOST, [...ADDRESSES]);
    const pool = h.gateway.registry.get("m")!;
    await waitFor(() => pool.replicas.length === 3 && pool.replicas.every((r) => r.ready), 20_000, "three ready replicas");
  };

  /** Four clients, half streaming, until `stop` is set; every answer checked to the end. */
  const load = (stop: { done: boolean }): Promise<Tally> => {
    const tally: Tally = { ok: 0, failed: [] };
    const one = async (stream: boolean): Promise<void> => {
      const res = await request(`${h.baseURL}/chat/completions`, {
        method: "POST",
        dispatcher: client,
        headers: { authorization: `Bearer ${h.key}`, "content-type": "application/json" },
        body: JSON.stringify(chatBody("m", { max_tokens: 12, stream })),
      });
      const text = await res.body.text();
      const complete = stream ? text.includes('"finish_reason":"length"') && text.trimEnd().endsWith("data: [DONE]") && !text.includes('"error"') : text.includes('"finish_reason":"length"');
      if (res.statusCode === 200 && complete) tally.ok += 1;
      else tally.failed.push(`${res.statusCode} ${text.slice(0, 300)}`);
    };
    const loop = async (stream: boolean): Promise<void> => {
      while (!stop.done) {
        try {
          await one(stream);
        } catch (err) {
          tally.failed.push(`client error ${(err as Error).message}`);
        }
      }
    };
    return Promise.all([loop(false), loop(false), loop(true), loop(true)]).then(() => tally);
  };

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  for (let run = 1; run <= RUNS; run++) {
    it(`3 → 1: two replicas stop while DNS lists them for 10 s; 0 failed requests (run ${run})`, async () => {
      await scaleTo3();
      const stop = { done: false };
      const running = load(stop);
      await sleep(1500);
      const served = h.logs.length;
      // A scale-down: both leave together, and the name keeps answering with them for 10 s.
      await Promise.all([stopReplica(ADDRESSES[1]!), stopReplica(ADDRESSES[2]!)]);
      await sleep(LISTED_AFTER_STOP_MS);
      records.set(HOST, [ADDRESSES[0]!]);
      await sleep(6000);
      stop.done = true;
      const tally = await running;
      expect(tally.failed).toEqual([]);
      expect(tally.ok).toBeGreaterThan(100);
      // The leaving replicas were met (refused, then out of everyone's pick) and the survivor served the rest.
      const pool = h.gateway.registry.get("m")!;
      expect(pool.replicas.map((r) => r.url)).toEqual([`http://127.0.0.1:${port}`]);
      expect(h.logs.slice(served).some((l) => typeof l.attempts === "number" && l.attempts > 1)).toBe(true);
    }, 60_000);
  }

  it("a replica that restarts (stops listening for 1 s, then comes back): 0 failed requests, and it serves again", async () => {
    await scaleTo3();
    const stop = { done: false };
    const running = load(stop);
    await sleep(1500);
    await stopReplica(ADDRESSES[1]!);
    await sleep(1000);
    await startReplica(ADDRESSES[1]!);
    const pool = h.gateway.registry.get("m")!;
    const restarted = pool.replicas.find((r) => r.url === `http://${ADDRESSES[1]}:${port}`)!;
    // Back in the pick at the next health check (5 s), without a change in DNS.
    await waitFor(() => restarted.ready, 15_000, "the restarted replica ready again");
    const before = await served(ADDRESSES[1]!);
    await sleep(2000);
    stop.done = true;
    const tally = await running;
    expect(tally.failed).toEqual([]);
    expect(tally.ok).toBeGreaterThan(50);
    expect(await served(ADDRESSES[1]!)).toBeGreaterThan(before);
  }, 60_000);

  /** Requests a replica finished, from its own /metrics. */
  const served = (address: string) => scrapedSum(`http://${address}:${port}/metrics`, "vllm:request_success_total");
});
