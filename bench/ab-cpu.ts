/**
 * `tsx bench/ab-cpu.ts A/serve.js B/serve.js`: the gateway's CPU per non-streaming chat request, two builds side
 * by side (e.g. main's bundle and a branch's, each from `npm run build:gateway -- --out DIR`). Both run on the
 * proxy's core with the image's flags against one zero-latency simulator; 16 clients (or, with BENCH_RATE, an
 * open loop at that rate, so both sides see the same request rate and batch alike) load one build at a time,
 * A and B alternating round by round (ABBA order), so drift in the machine's load hits both alike. Per round:
 * the gateway process's CPU time (/proc) over the requests it answered. Prints each side's median and the
 * per-pair ratio's median. nginx joins as a third side when installed (BENCH_NGINX=0 leaves it out).
 */
import type { ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { stopAll } from "../scripts/lib/processes";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { closedLoop } from "./lib/closed-loop";
import { nginxBinary, startNginx } from "./lib/nginx";
import { openLoop } from "./lib/open-loop";
import { startZeroLatencyModel } from "./lib/zero-latency-model";
import { cpuSeconds, pinning } from "./lib/proc-stats";
import { fmt, median } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
/** With a rate, an open loop at that many requests a second (both sides batch alike); else 16 closed-loop clients. */
const RATE = Number(process.env.BENCH_RATE ?? 0);
const KEY = "sk-bench-0123456789abcdefghijklmnop";
const MODEL = "bench-model";
const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: 16, temperature: 0, stream: false, ignore_eos: true });
const headers = { authorization: `Bearer ${KEY}` };

async function main(): Promise<void> {
  const [a, b] = process.argv.slice(2).map((p) => resolve(p));
  if (!a || !b) throw new Error("usage: tsx bench/ab-cpu.ts A/serve.js B/serve.js");
  const pin = pinning();
  const procs: ChildProcess[] = [];
  try {
    const sim = await startZeroLatencyModel(MODEL, pin.rest, "bench-ab-");
    procs.push(sim.proc);
    const { catalog } = sim;
    const sides: { name: string; url: string; pid: number }[] = [];
    for (const [name, bundle] of [["A", a], ["B", b]] as const) {
      const gw = await startBundledGateway({ catalog, key: KEY, prefix: pin.proxy, bundle });
      procs.push(gw.proc);
      sides.push({ name, url: gw.url, pid: gw.proc.pid! });
    }
    const nginx = process.env.BENCH_NGINX === "0" ? undefined : nginxBinary();
    if (nginx) {
      const ng = await startNginx(nginx, [sim.url], pin.proxy);
      procs.push(ng.proc);
      sides.push({ name: "nginx", url: ng.url, pid: ng.proc.pid! });
    }
    process.stderr.write(`${pin.description}\n${gatewayRuntime()}\nA=${a}\nB=${b}\nwarming up...\n`);
    for (const s of sides) await closedLoop({ base: s.url, path: "/v1/chat/completions", body, measure: "full", seconds: 3, concurrency: 16, headers });
    const us = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // ABBA: neither side always goes first.
      const order = round % 2 === 0 ? sides : [sides[1]!, sides[0]!, ...sides.slice(2)];
      const line: string[] = [];
      for (const s of order) {
        const before = cpuSeconds(s.pid);
        const r = RATE > 0
          ? await openLoop({ base: s.url, path: "/v1/chat/completions", body, measure: "full", seconds: SECONDS, ratePerSecond: RATE, headers }).then((o) => ({ ...o, rps: o.sent / SECONDS }))
          : await closedLoop({ base: s.url, path: "/v1/chat/completions", body, measure: "full", seconds: SECONDS, concurrency: 16, headers });
        const perRequest = ((cpuSeconds(s.pid) - before) / (r.rps * SECONDS)) * 1e6;
        if (r.errors > 0) throw new Error(`${s.name}: ${r.errors} errors`);
        us.get(s.name)!.push(perRequest);
        line.push(`${s.name} ${fmt(perRequest, 0)} µs (${fmt(r.rps, 0)} req/s)`);
      }
      ratios.push(us.get("B")![round]! / us.get("A")![round]!);
      process.stderr.write(`round ${round + 1}: ${line.join(", ")}, B/A ${fmt(ratios[round]!, 3)}\n`);
    }
    const out = [...us].map(([n, v]) => `${n}: median ${fmt(median(v), 0)} µs/request (min ${fmt(Math.min(...v), 0)}, max ${fmt(Math.max(...v), 0)})`);
    out.push(`B/A per round: median ${fmt(median(ratios), 3)} (min ${fmt(Math.min(...ratios), 3)}, max ${fmt(Math.max(...ratios), 3)}) over ${ROUNDS} rounds`);
    process.stdout.write(out.join("\n") + "\n");
  } finally {
    await stopAll(procs);
  }
}

runMain(main);
