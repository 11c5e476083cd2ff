/**
 * `npm run bench`: what the gateway costs. The same zero-latency simulator is driven directly and through the
 * gateway, alternating, in one run; figures are reported as ratios to the direct baseline, because these
 * machines are shared and noisy. Everything runs on loopback: load generator, gateway and simulator share the
 * machine's cores, so absolute numbers understate a real deployment; the ratios are what to compare.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway, spawnSimulator, stopAll } from "../scripts/lib/processes";
import { closedLoop as runClosedLoop, type RunResult } from "./lib/closed-loop";
import { fmt, median } from "./lib/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const KEY = "sk-bench-0123456789abcdefghijklmnop";
const MODEL = "bench-model";

const chatBody = (stream: boolean) =>
  JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: 16, temperature: 0, stream });

/** CONCURRENCY workers against one target for SECONDS (or `seconds`), with the bench key. */
function closedLoop(base: string, path: string, body: string, measure: "full" | "first-byte", seconds = SECONDS): Promise<RunResult> {
  return runClosedLoop({ base, path, body, measure, seconds, concurrency: CONCURRENCY, headers: { authorization: `Bearer ${KEY}` } });
}

async function main(): Promise<void> {
  const sim = await spawnSimulator([
    "--model", MODEL, "--port", "0", "--ttft-ms", "0", "--itl-ms", "0", "--prefill-time-per-token-ms", "0",
    "--max-num-seqs", "4096", "--max-waiting-queue-length", "4096", "--no-prefix-cache",
  ]);
  const dir = mkdtempSync(join(tmpdir(), "bench-"));
  const catalog = join(dir, "catalog.json");
  writeFileSync(catalog, JSON.stringify({ models: [{ id: MODEL, category: "generative", maxConcurrency: 4096, upstream: { mode: "endpoints", endpoints: [{ url: sim.url }] } }] }));
  const gw = await spawnGateway({ GATEWAY_CATALOG: catalog, GATEWAY_API_KEY: KEY, LOG_LEVEL: "info" });

  try {
    process.stderr.write(`warming up (${CONCURRENCY} concurrent, ${ROUNDS} rounds of ${SECONDS}s per target and mode)...\n`);
    await closedLoop(sim.url, "/v1/chat/completions", chatBody(false), "full", 2);
    await closedLoop(gw.url, "/v1/chat/completions", chatBody(false), "full", 2);

    const rows: Record<string, { direct: RunResult[]; gateway: RunResult[] }> = {
      "chat, non-streaming": { direct: [], gateway: [] },
      "chat, streaming (first token)": { direct: [], gateway: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate targets so drift in machine load hits both sides alike.
      rows["chat, non-streaming"]!.direct.push(await closedLoop(sim.url, "/v1/chat/completions", chatBody(false), "full"));
      rows["chat, non-streaming"]!.gateway.push(await closedLoop(gw.url, "/v1/chat/completions", chatBody(false), "full"));
      rows["chat, streaming (first token)"]!.direct.push(await closedLoop(sim.url, "/v1/chat/completions", chatBody(true), "first-byte"));
      rows["chat, streaming (first token)"]!.gateway.push(await closedLoop(gw.url, "/v1/chat/completions", chatBody(true), "first-byte"));
    }

    const out: string[] = [];
    out.push(`Gateway overhead, ${CONCURRENCY} concurrent clients, median of ${ROUNDS} alternating rounds of ${SECONDS}s (loopback, zero-latency simulator)`);
    out.push("");
    out.push("| workload | direct rps | gateway rps | rps ratio | direct p50 / p99 ms | gateway p50 / p99 ms | added p50 / p99 ms | p50 ratio | errors |");
    out.push("|---|---|---|---|---|---|---|---|---|");
    for (const [name, r] of Object.entries(rows)) {
      const d = { rps: median(r.direct.map((x) => x.rps)), p50: median(r.direct.map((x) => x.p50)), p99: median(r.direct.map((x) => x.p99)) };
      const g = { rps: median(r.gateway.map((x) => x.rps)), p50: median(r.gateway.map((x) => x.p50)), p99: median(r.gateway.map((x) => x.p99)) };
      const errs = [...r.direct, ...r.gateway].reduce((s, x) => s + x.errors, 0);
      out.push(
        `| ${name} | ${fmt(d.rps, 0)} | ${fmt(g.rps, 0)} | ${fmt(g.rps / d.rps)} | ${fmt(d.p50)} / ${fmt(d.p99)} | ${fmt(g.p50)} / ${fmt(g.p99)} | ${fmt(g.p50 - d.p50)} / ${fmt(g.p99 - d.p99)} | ${fmt(g.p50 / d.p50)} | ${errs} |`,
      );
    }
    process.stdout.write(out.join("\n") + "\n");
  } finally {
    await stopAll([gw.proc, sim.proc]);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
