/**
 * `npm run bench:stream`: what a relayed stream event costs, beside nginx. Sixteen clients stream chat answers of
 * 16 and of 64 tokens back to back from a zero-latency simulator, through the production gateway and through
 * nginx (as `npm run bench` starts them), in alternating rounds; each proxy's CPU time (/proc) per stream at each
 * length gives the cost of one more event: the slope between the two lengths. Non-streaming chats are measured in
 * the same rounds, for the fixed cost of a request.
 */
import type { ChildProcess } from "node:child_process";
import { stopAll } from "../scripts/lib/processes";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { closedLoop } from "./lib/closed-loop";
import { nginxBinary, NGINX_MISSING, startNginx } from "./lib/nginx";
import { startZeroLatencyModel } from "./lib/zero-latency-model";
import { cpuSeconds, pinning } from "./lib/proc-stats";
import { fmt, median } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KEY = "sk-bench-0123456789abcdefghijklmnop";
const headers = { authorization: `Bearer ${KEY}` };
const chat = (stream: boolean, tokens: number) =>
  JSON.stringify({ model: "m", messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: tokens, temperature: 0, stream, ignore_eos: true });
const CASES = [
  { name: "chat, 16 tokens", stream: false, tokens: 16 },
  { name: "stream, 16 tokens", stream: true, tokens: 16 },
  { name: "stream, 64 tokens", stream: true, tokens: 64 },
] as const;

async function main(): Promise<void> {
  const pin = pinning();
  const procs: ChildProcess[] = [];
  try {
    const sim = await startZeroLatencyModel("m", pin.rest, "bench-stream-");
    procs.push(sim.proc);
    const { catalog } = sim;
    const targets: { name: string; url: string; pid: number }[] = [];
    // BENCH_BUNDLE: another build's bundle instead of this tree's (an A/B comparison of two revisions).
    const gw = await startBundledGateway({ catalog, key: KEY, prefix: pin.proxy, bundle: process.env.BENCH_BUNDLE });
    procs.push(gw.proc);
    targets.push({ name: "gateway", url: gw.url, pid: gw.proc.pid! });
    const nginx = nginxBinary();
    if (nginx) {
      const ng = await startNginx(nginx, [sim.url], pin.proxy);
      procs.push(ng.proc);
      targets.push({ name: "nginx", url: ng.url, pid: ng.proc.pid! });
    } else process.stderr.write(`${NGINX_MISSING}\n`);

    process.stderr.write(`${pin.description}\nwarming up...\n`);
    for (const t of targets) await closedLoop({ base: t.url, path: "/v1/chat/completions", body: chat(true, 16), measure: "full", seconds: 2, concurrency: 16, headers });
    const us = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`round ${round + 1} of ${ROUNDS}...\n`);
      for (const c of CASES) {
        for (const t of targets) {
          const before = cpuSeconds(t.pid);
          const r = await closedLoop({ base: t.url, path: "/v1/chat/completions", body: chat(c.stream, c.tokens), measure: "full", seconds: SECONDS, concurrency: 16, headers });
          const key = `${t.name} ${c.name}`;
          us.set(key, [...(us.get(key) ?? []), ((cpuSeconds(t.pid) - before) / (r.rps * SECONDS)) * 1e6]);
        }
      }
    }
    const at = (t: string, c: string) => median(us.get(`${t} ${c}`) ?? []);
    const perEvent = (t: string) => (at(t, "stream, 64 tokens") - at(t, "stream, 16 tokens")) / 48;
    const col = (f: (t: string) => number) => targets.map((t) => fmt(f(t.name), 1)).join(" | ");
    const ratio = (f: (t: string) => number) => (nginx ? `${fmt(f("gateway") / f("nginx"), 1)}×` : "n/a");
    const out = [
      `CPU per request and per relayed stream event, 16 clients back to back, median of ${ROUNDS} alternating rounds of ${SECONDS}s; ${gatewayRuntime()}; ${new Date().toISOString().slice(0, 16)}Z; ${pin.description}`,
      "",
      `| µs of the proxy's CPU | ${targets.map((t) => t.name).join(" | ")} | gateway / nginx |`,
      `|---|${targets.map(() => "---|").join("")}---|`,
      ...CASES.map((c) => `| ${c.name}, per request | ${col((t) => at(t, c.name))} | ${ratio((t) => at(t, c.name))} |`),
      `| one more stream event (slope from 16 to 64 tokens) | ${col(perEvent)} | ${ratio(perEvent)} |`,
    ];
    process.stdout.write(out.join("\n") + "\n");
  } finally {
    await stopAll(procs);
  }
}

runMain(main);
