import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { request } from "undici";
import { spawnGateway, spawnSimulator, stopAll } from "../../../scripts/lib/processes";
import { chatBody } from "../support/harness";

/**
 * SIGTERM with streams in flight, as in a rolling restart of two gateway replicas behind a Service:
 * readiness fails, the "load balancer" (here: the test's client, following /readyz like kube-proxy follows
 * endpoints) stops sending new requests, in-flight streams finish, the process exits 0. Zero dropped streams.
 */
const KEY = "sk-rolling-restart-test-key-000000000000";

interface Instance {
  port: number;
  url: string;
  proc: ChildProcess;
  ready: boolean;
}

describe("rolling restart of two gateway processes", () => {
  const procs: ChildProcess[] = [];
  afterAll(() => stopAll(procs));

  it("drops no stream and fails no request", async () => {
    const sim = await spawnSimulator(["--model", "m", "--port", "0", "--ttft-ms", "5", "--itl-ms", "15", "--max-num-seqs", "64"]);
    procs.push(sim.proc);
    const dir = mkdtempSync(join(tmpdir(), "rolling-"));
    const catalog = join(dir, "catalog.json");
    writeFileSync(catalog, JSON.stringify({ models: [{ id: "m", category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: sim.url }] } }] }));
    const env = {
      GATEWAY_CATALOG: catalog,
      GATEWAY_API_KEY: KEY,
      GATEWAY_DRAIN_DELAY_MS: "200",
      GATEWAY_SHUTDOWN_GRACE_MS: "15000",
      GATEWAY_HEALTH_INTERVAL_MS: "200",
      LOG_LEVEL: "warn",
    };
    const start = async (port?: number): Promise<Instance> => {
      const g = await spawnGateway(env, port);
      procs.push(g.proc);
      return { ...g, ready: true };
    };
    const instances: Instance[] = [await start(), await start()];

    // The Service: endpoints follow readiness, polled often.
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await Promise.all(
          instances.map(async (i) => {
            try {
              const r = await request(`${i.url}/readyz`, { headersTimeout: 500 });
              await r.body.dump();
              i.ready = r.statusCode === 200;
            } catch {
              i.ready = false;
            }
          }),
        );
        await new Promise((r) => setTimeout(r, 30));
      }
    })();

    const results = { ok: 0, dropped: 0, failed: [] as string[], inFlightAtSigterm: 0 };
    let inFlight = 0;
    let rr = 0;
    const oneStream = async (): Promise<void> => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const candidates = instances.filter((i) => i.ready);
        const target = candidates[rr++ % Math.max(1, candidates.length)];
        if (!target) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        try {
          const res = await request(`${target.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
            body: JSON.stringify(chatBody("m", { stream: true, max_tokens: 60 })),
          });
          if (res.statusCode !== 200) {
            results.failed.push(`status ${res.statusCode}: ${await res.body.text()}`);
            return;
          }
          inFlight++;
          try {
            const text = await res.body.text();
            if (text.includes('"error"') || !text.trimEnd().endsWith("data: [DONE]")) results.dropped++;
            else results.ok++;
          } catch {
            results.dropped++; // cut off after the response started: a dropped stream
          } finally {
            inFlight--;
          }
          return;
        } catch (err) {
          // Refused before any response (the endpoint was just removed): like the SDKs, try again.
          const code = (err as { code?: string }).code;
          if (code !== "ECONNREFUSED" && code !== "ECONNRESET" && code !== "UND_ERR_SOCKET") {
            results.failed.push(String(err));
            return;
          }
        }
      }
      results.failed.push("no instance accepted the request");
    };

    let loading = true;
    const workers = Array.from({ length: 6 }, async () => {
      while (loading) await oneStream();
    });

    const restart = async (index: number) => {
      await new Promise((r) => setTimeout(r, 400));
      const old = instances[index]!;
      results.inFlightAtSigterm += inFlight;
      const exited = once(old.proc, "exit");
      old.proc.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
      instances[index] = await start(old.port);
    };
    await restart(0);
    await restart(1);
    await new Promise((r) => setTimeout(r, 400));
    loading = false;
    await Promise.all(workers);
    polling = false;
    await poller;

    expect(results.failed).toEqual([]);
    expect(results.dropped).toBe(0);
    expect(results.inFlightAtSigterm).toBeGreaterThan(0);
    expect(results.ok).toBeGreaterThan(20);
  }, 90_000);
});
