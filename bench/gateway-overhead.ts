/**
 * `npm run bench`: what the gateway costs, beside what a plain reverse proxy costs, in one run. The same
 * zero-latency simulator is reached three ways: directly, through nginx (Debian's, started here on loopback as a
 * plain reverse proxy with one JSON access-log line per request) and through the gateway (the production bundle,
 * with the image's heap cap, one JSON log line per request). The proxy under test gets a core of its own when the
 * machine allows (see lib/proc-stats.ts); the simulators and this load generator share the other. Targets
 * alternate round by round, so drift in the machine's load hits all three alike; read the ratios.
 *
 * Figures: requests per second with 16 clients back to back; latency added at a fixed rate (500 req/s) to the
 * whole answer and to an SSE stream's first byte; CPU per request from the proxy process's own CPU time
 * (/proc/<pid>/stat) over the throughput rounds; resident memory after and during them, and with 2,000 slow
 * streams open at once.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { spawnSimulator, stopAll } from "../scripts/lib/processes";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { closedLoop as runClosedLoop, type RunResult } from "./lib/closed-loop";
import { nginxBinary, NGINX_MISSING, startNginx } from "./lib/nginx";
import { openLoop, type OpenLoopResult } from "./lib/open-loop";
import { cpuSeconds, pinning, residentBytes } from "./lib/proc-stats";
import { fmt, median } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
const KEY = "sk-bench-0123456789abcdefghijklmnop";
const MODEL = "bench-model";
const SLOW = "bench-slow";
const MiB = 1024 * 1024;

const chatBody = (model: string, stream: boolean, maxTokens = 16) =>
  JSON.stringify({ model, messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: maxTokens, temperature: 0, stream, ignore_eos: true });

interface Target {
  name: "direct" | "nginx" | "gateway";
  url: string;
  /** The process whose CPU and memory are the proxy's (none for direct). */
  pid?: number;
}

const headers = { authorization: `Bearer ${KEY}` };

/** Opens `count` slow streams through `url`, waits for each one's first byte, then samples the proxy's RSS. */
async function heldStreams(url: string, pid: number, count: number): Promise<{ rss: number; opened: number }> {
  const pool = new Pool(url, { connections: count + 16, pipelining: 1 });
  let opened = 0;
  const ready: Promise<void>[] = [];
  const body = chatBody(SLOW, true, 10_000);
  for (let i = 0; i < count; i++) {
    ready.push(
      new Promise<void>((resolve) => {
        pool
          .request({ path: "/v1/chat/completions", method: "POST", headers: { ...headers, "content-type": "application/json" }, body })
          .then((res) => {
            res.body.once("data", () => {
              opened++;
              resolve();
            });
            res.body.on("error", () => resolve());
            res.body.resume();
          })
          .catch(() => resolve());
      }),
    );
    // Connect in batches, as clients arrive, rather than 2,000 SYNs at once.
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.race([Promise.all(ready), new Promise((r) => setTimeout(r, 30_000))]);
  // Steady: the median of samples over three seconds with every stream open and ticking.
  const samples: number[] = [];
  for (let i = 0; i < 6; i++) {
    await new Promise((r) => setTimeout(r, 500));
    samples.push(residentBytes(pid).rss);
  }
  await pool.destroy().catch(() => undefined);
  return { rss: median(samples), opened };
}

interface TargetResult {
  closed: RunResult[];
  cpuPerRequestUs?: number;
  fixed: OpenLoopResult[];
  sse: OpenLoopResult[];
  rssSteady?: number;
  rssPeak?: number;
  streams?: { rss: number; opened: number };
}

async function main(): Promise<void> {
  const pin = pinning();
  const procs: ChildProcess[] = [];
  try {
    const fast = await spawnSimulator(
      ["--model", MODEL, "--port", "0", "--ttft-ms", "0", "--itl-ms", "0", "--prefill-time-per-token-ms", "0", "--max-num-seqs", "4096", "--no-prefix-cache"],
      pin.rest,
    );
    procs.push(fast.proc);
    // Slow streams for the memory phase: a token every 500 ms, none ending during the phase.
    const slow = await spawnSimulator(
      ["--model", SLOW, "--port", "0", "--ttft-ms", "0", "--itl-ms", "500", "--prefill-time-per-token-ms", "0", "--max-num-seqs", "8192", "--no-prefix-cache"],
      pin.rest,
    );
    procs.push(slow.proc);
    const dir = mkdtempSync(join(tmpdir(), "bench-"));
    const catalog = join(dir, "catalog.json");
    const model = (id: string, url: string) => ({ id, category: "generative", maxConcurrency: 8192, upstream: { mode: "endpoints", endpoints: [{ url }] } });
    writeFileSync(catalog, JSON.stringify({ models: [model(MODEL, fast.url), model(SLOW, slow.url)] }));
    const gw = await startBundledGateway({
      catalog,
      key: KEY,
      prefix: pin.proxy,
      // Another build's bundle instead of this tree's (an A/B comparison of two revisions, one run each).
      bundle: process.env.BENCH_BUNDLE,
      env: {
        // Room for the 2,000 streams of the memory phase (the defaults cap requests in progress at 1,024, 256 a key).
        GATEWAY_MAX_IN_FLIGHT_REQUESTS: String(Math.max(1024, STREAMS + 64)),
        GATEWAY_MAX_IN_FLIGHT_REQUESTS_PER_KEY: String(Math.max(256, STREAMS + 64)),
      },
    });
    procs.push(gw.proc);

    const targets: Target[] = [{ name: "direct", url: fast.url }];
    const nginx = nginxBinary();
    let slowNginx: { url: string; proc: ChildProcess } | undefined;
    if (nginx) {
      const ng = await startNginx(nginx, [fast.url], pin.proxy);
      procs.push(ng.proc);
      targets.push({ name: "nginx", url: ng.url, pid: ng.proc.pid });
    } else process.stderr.write(`${NGINX_MISSING}\n`);
    targets.push({ name: "gateway", url: gw.url, pid: gw.proc.pid });

    const results = new Map<Target["name"], TargetResult>(targets.map((t) => [t.name, { closed: [], fixed: [], sse: [] }]));
    process.stderr.write(`${pin.description}\nwarming up...\n`);
    for (const t of targets) await runClosedLoop({ base: t.url, path: "/v1/chat/completions", body: chatBody(MODEL, false), measure: "full", seconds: 2, concurrency: CONCURRENCY, headers });

    const loadBefore = loadavg()[0]!;
    const cpu = new Map<Target["name"], { seconds: number; requests: number }>(targets.map((t) => [t.name, { seconds: 0, requests: 0 }]));
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`round ${round + 1} of ${ROUNDS}...\n`);
      // Alternate targets so drift in machine load hits every side alike.
      for (const t of targets) {
        const before = t.pid ? cpuSeconds(t.pid) : 0;
        const r = await runClosedLoop({ base: t.url, path: "/v1/chat/completions", body: chatBody(MODEL, false), measure: "full", seconds: SECONDS, concurrency: CONCURRENCY, headers });
        const c = cpu.get(t.name)!;
        if (t.pid) c.seconds += cpuSeconds(t.pid) - before;
        c.requests += Math.round(r.rps * SECONDS);
        results.get(t.name)!.closed.push(r);
      }
      for (const t of targets) {
        results.get(t.name)!.fixed.push(await openLoop({ base: t.url, path: "/v1/chat/completions", body: chatBody(MODEL, false), ratePerSecond: RATE, seconds: SECONDS, measure: "full", headers }));
      }
      for (const t of targets) {
        results.get(t.name)!.sse.push(await openLoop({ base: t.url, path: "/v1/chat/completions", body: chatBody(MODEL, true), ratePerSecond: RATE, seconds: SECONDS, measure: "first-byte", headers }));
      }
    }
    for (const t of targets) {
      if (!t.pid) continue;
      const r = results.get(t.name)!;
      const c = cpu.get(t.name)!;
      r.cpuPerRequestUs = (c.seconds / c.requests) * 1e6;
      const mem = residentBytes(t.pid);
      r.rssSteady = mem.rss;
      r.rssPeak = mem.peak;
    }
    const loadAfter = loadavg()[0]!;

    // Memory with STREAMS slow streams open at once, each proxy in turn.
    if (nginx) {
      slowNginx = await startNginx(nginx, [slow.url], pin.proxy);
      procs.push(slowNginx.proc);
      process.stderr.write(`${STREAMS} streams through nginx...\n`);
      results.get("nginx")!.streams = await heldStreams(slowNginx.url, slowNginx.proc.pid!, STREAMS);
    }
    process.stderr.write(`${STREAMS} streams through the gateway...\n`);
    results.get("gateway")!.streams = await heldStreams(gw.url, gw.proc.pid!, STREAMS);

    process.stdout.write(report(results, pin.description, loadBefore, loadAfter) + "\n");
  } finally {
    await stopAll(procs);
    await Promise.race([Promise.all(procs.map((p) => (p.exitCode === null && p.signalCode === null ? once(p, "exit") : undefined))), new Promise((r) => setTimeout(r, 5000))]);
  }
}

function report(results: Map<Target["name"], TargetResult>, pinned: string, loadBefore: number, loadAfter: number): string {
  const direct = results.get("direct")!;
  const nginx = results.get("nginx");
  const gateway = results.get("gateway")!;
  const rps = (r: TargetResult) => median(r.closed.map((x) => x.rps));
  const p = (rows: OpenLoopResult[], q: "p50" | "p99") => median(rows.map((x) => x[q]));
  const added = (r: TargetResult, which: "fixed" | "sse", q: "p50" | "p99") => p(r[which], q) - p(direct[which], q);
  // Per round, so the spread shows: each round's p99 minus the direct p99 of the same round.
  const rounds = (r: TargetResult, which: "fixed" | "sse") => r[which].map((x, i) => fmt(x.p99 - direct[which][i]!.p99)).join(", ");
  const mib = (b?: number) => (b === undefined ? "n/a" : fmt(b / MiB, 0));
  const errors = (r: TargetResult) => [...r.closed, ...r.fixed, ...r.sse].reduce((s, x) => s + x.errors, 0);
  const col = (f: (r: TargetResult) => string) => `${f(gateway)} | ${nginx ? f(nginx) : "not run"}`;
  const ratio = (g: number, n: number | undefined) => (n === undefined ? "n/a" : `${fmt(g / n)}×`);

  const out: string[] = [];
  out.push(
    `Gateway beside nginx and direct access: ${CONCURRENCY} clients back to back, then ${RATE} req/s fixed rate; median of ${ROUNDS} alternating rounds of ${SECONDS}s; ${cpus().length} cores (${cpus()[0]?.model.trim() ?? "?"}), ${gatewayRuntime()}, ${new Date().toISOString().slice(0, 16)}Z; load average ${fmt(loadBefore, 1)} → ${fmt(loadAfter, 1)}; ${pinned}`,
  );
  out.push("");
  out.push("| figure | direct | gateway | nginx proxy | gateway / nginx |");
  out.push("|---|---|---|---|---|");
  out.push(`| non-streaming chat, ${CONCURRENCY} concurrent, req/s | ${fmt(rps(direct), 0)} | ${col((r) => fmt(rps(r), 0))} | ${ratio(rps(gateway), nginx && rps(nginx))} |`);
  out.push(`| added latency at ${RATE} req/s, p50 / p99 ms | ${fmt(p(direct.fixed, "p50"))} / ${fmt(p(direct.fixed, "p99"))} (direct's own) | ${col((r) => `+${fmt(added(r, "fixed", "p50"))} / +${fmt(added(r, "fixed", "p99"))}`)} | |`);
  out.push(`| added p99 ms in each round | | ${col((r) => rounds(r, "fixed"))} | |`);
  out.push(`| SSE first byte added at ${RATE} req/s, p50 / p99 ms | ${fmt(p(direct.sse, "p50"))} / ${fmt(p(direct.sse, "p99"))} (direct's own) | ${col((r) => `+${fmt(added(r, "sse", "p50"))} / +${fmt(added(r, "sse", "p99"))}`)} | |`);
  out.push(`| SSE first byte added p99 ms in each round | | ${col((r) => rounds(r, "sse"))} | |`);
  out.push(`| CPU per chat request, µs | | ${col((r) => fmt(r.cpuPerRequestUs ?? NaN, 0))} | ${ratio(gateway.cpuPerRequestUs ?? NaN, nginx?.cpuPerRequestUs)} |`);
  out.push(`| RSS after the rounds / peak, MiB | | ${col((r) => `${mib(r.rssSteady)} / ${mib(r.rssPeak)}`)} | |`);
  out.push(`| RSS with ${STREAMS} streams open, MiB (streams open) | | ${col((r) => (r.streams ? `${mib(r.streams.rss)} (${r.streams.opened})` : "n/a"))} | |`);
  out.push(`| errors | ${errors(direct)} | ${col((r) => String(errors(r)))} | |`);
  return out.join("\n");
}

runMain(main);
