// npm run bench:tracing — what traces cost the gateway: the production bundle with traces off (the default), on
// with every request sampled, and on with none sampled (spans still made, not recorded; the context still goes
// upstream), exporting over OTLP/HTTP to a collector on loopback. Closed loop, 16 concurrent non-streaming chats,
// rounds interleaved so machine noise falls on every configuration alike; figures as ratios to "off".
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { stopAll } from "../scripts/lib/processes";
import { startBundledGateway } from "./lib/bundled-gateway";
import { closedLoop, type RunResult } from "./lib/closed-loop";
import { startZeroLatencyModel } from "./lib/zero-latency-model";
import { cpuSeconds, pinning } from "./lib/proc-stats";
import { fmt, median } from "./lib/stats";

const MODEL = "bench-model";
const KEY = "sk-bench-tracing-key-0123456789";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Say something short." }], max_tokens: 16 });

interface Config {
  name: string;
  env: Record<string, string>;
}

async function main(): Promise<void> {
  const pin = pinning();
  const procs: ChildProcess[] = [];
  // The collector: accepts and counts what is exported (its own cost stays out of the gateway's core).
  let exports = 0;
  const collector = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  }).listen(0, "127.0.0.1");
  await new Promise((r) => collector.once("listening", r));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  try {
    const sim = await startZeroLatencyModel(MODEL, pin.rest, "bench-tracing-");
    procs.push(sim.proc);
    const { catalog } = sim;

    const configs: Config[] = [
      { name: "off (default)", env: {} },
      { name: "on, every request sampled", env: { GATEWAY_OTLP_TRACES_ENDPOINT: endpoint, GATEWAY_TRACE_SAMPLE_RATIO: "1" } },
      { name: "on, none sampled", env: { GATEWAY_OTLP_TRACES_ENDPOINT: endpoint, GATEWAY_TRACE_SAMPLE_RATIO: "0" } },
    ];
    const gateways = [];
    for (const c of configs) {
      const gw = await startBundledGateway({ catalog, key: KEY, prefix: pin.proxy, env: c.env });
      procs.push(gw.proc);
      gateways.push(gw);
    }
    const results = configs.map(() => ({ runs: [] as RunResult[], cpuUs: [] as number[] }));
    const load = (url: string, seconds: number) =>
      closedLoop({ base: url, path: "/v1/chat/completions", body: BODY, measure: "full", seconds, concurrency: 16, headers: { authorization: `Bearer ${KEY}` } });
    for (const gw of gateways) await load(gw.url, 2); // warm up
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < configs.length; i++) {
        const gw = gateways[i]!;
        const cpu0 = cpuSeconds(gw.proc.pid!);
        const run = await load(gw.url, SECONDS);
        const cpu = cpuSeconds(gw.proc.pid!) - cpu0;
        results[i]!.runs.push(run);
        results[i]!.cpuUs.push((cpu / (run.rps * SECONDS)) * 1e6);
      }
    }
    const base = results[0]!;
    const baseRps = median(base.runs.map((r) => r.rps));
    const baseCpu = median(base.cpuUs);
    console.log(`# Traces: what they cost the gateway (${new Date().toISOString().slice(0, 10)}, ${ROUNDS} rounds of ${SECONDS} s, medians)`);
    console.log(`# ${pin.description}; OTLP exports received by the collector: ${exports}\n`);
    console.log("| configuration | req/s | ratio | p50 ms | p99 ms | CPU µs/request | ratio | errors |");
    console.log("|---|---|---|---|---|---|---|---|");
    configs.forEach((c, i) => {
      const r = results[i]!;
      const rps = median(r.runs.map((x) => x.rps));
      const cpu = median(r.cpuUs);
      const errors = r.runs.reduce((n, x) => n + x.errors, 0);
      console.log(
        `| ${c.name} | ${fmt(rps, 0)} | ${fmt(rps / baseRps)}× | ${fmt(median(r.runs.map((x) => x.p50)))} | ${fmt(median(r.runs.map((x) => x.p99)))} | ${fmt(cpu, 0)} | ${fmt(cpu / baseCpu)}× | ${errors} |`,
      );
    });
  } finally {
    await stopAll(procs);
    collector.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
