/**
 * `npm run bench:tail`: where the gateway's slowest requests at a fixed rate lose their time. The production
 * gateway (as `npm run bench` starts it) carries lib/stall-log.ts, which logs every garbage collection and every
 * stall of its event loop with the time the main thread ran during it. The same open loop is sent to the
 * simulator directly, then through the gateway, for non-streaming chat and for a stream's first byte; each request
 * through the gateway slower than the p99 is matched with the collections and stalls it overlapped. A stall the
 * main thread ran through is a long task or a collection; one it did not run through is time the process was not
 * scheduled. `BENCH_NODE_FLAGS` adds Node flags after the image's (e.g. `--max-semi-space-size=64`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { stopAll, ROOT } from "../scripts/lib/processes";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { closedLoop } from "./lib/closed-loop";
import { openLoop } from "./lib/open-loop";
import { pinning } from "./lib/proc-stats";
import { startZeroLatencyModel } from "./lib/zero-latency-model";
import { fmt, percentile } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const FLAGS = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
const KEY = "sk-bench-0123456789abcdefghijklmnop";
const headers = { authorization: `Bearer ${KEY}` };
const chat = (stream: boolean) =>
  JSON.stringify({ model: "m", messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: 16, temperature: 0, stream, ignore_eos: true });

interface Event {
  kind: "gc" | "stall";
  at: number;
  ms: number;
  /** gc: its kind; stall: ms the main thread ran meanwhile. */
  detail: string;
}

function readEvents(file: string): Event[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [kind, at, ms, detail] = line.split(" ");
      return { kind: kind as Event["kind"], at: Number(at), ms: Number(ms), detail: detail ?? "" };
    });
}

const overlaps = (a: { at: number; ms: number }, b: { at: number; ms: number }) => a.at < b.at + b.ms && b.at < a.at + a.ms;

async function main(): Promise<void> {
  const pin = pinning();
  const procs: ChildProcess[] = [];
  try {
    const sim = await startZeroLatencyModel("m", pin.rest, "bench-tail-");
    procs.push(sim.proc);
    const { dir, catalog } = sim;
    const log = join(dir, "stalls.log");
    const gw = await startBundledGateway({ catalog, key: KEY, prefix: pin.proxy, nodeFlags: [...FLAGS, "--disable-warning=ExperimentalWarning", "--import", join(ROOT, "bench", "lib", "stall-log.ts")], env: { STALL_LOG: log } });
    procs.push(gw.proc);
    process.stderr.write(`${pin.description}\nwarming up...\n`);
    await closedLoop({ base: gw.url, path: "/v1/chat/completions", body: chat(false), measure: "full", seconds: 2, concurrency: 16, headers });

    const rows: string[] = [];
    for (const stream of [false, true]) {
      const what = stream ? "stream, first byte" : "chat, whole answer";
      process.stderr.write(`${what}: ${SECONDS}s direct, then ${SECONDS}s through the gateway...\n`);
      const measure = stream ? "first-byte" : "full";
      const direct = await openLoop({ base: sim.url, path: "/v1/chat/completions", body: chat(stream), ratePerSecond: RATE, seconds: SECONDS, measure, headers });
      const sent: { at: number; ms: number }[] = [];
      const through = await openLoop({ base: gw.url, path: "/v1/chat/completions", body: chat(stream), ratePerSecond: RATE, seconds: SECONDS, measure, headers, onSample: (at, ms) => sent.push({ at, ms }) });
      const from = Math.min(...sent.map((s) => s.at));
      const to = Math.max(...sent.map((s) => s.at + s.ms));
      const events = readEvents(log).filter((e) => e.at + e.ms >= from && e.at <= to);
      const gcs = events.filter((e) => e.kind === "gc");
      const stalls = events.filter((e) => e.kind === "stall");
      const late = stalls.reduce((s, e) => s + e.ms, 0);
      // A stall's lateness the main thread spent running (at most the stall and its period).
      const ran = stalls.reduce((s, e) => s + Math.min(e.ms + 2, Number(e.detail)), 0);
      const p99 = percentile([...sent.map((s) => s.ms)].sort((a, b) => a - b), 99);
      const slow = sent.filter((s) => s.ms >= p99);
      const withGc = slow.filter((s) => gcs.some((g) => overlaps(s, g))).length;
      const withStall = slow.filter((s) => stalls.some((g) => overlaps(s, g))).length;
      rows.push(
        `| ${what} | ${fmt(direct.p99)} | ${fmt(through.p99)} | ${gcs.length}, ${fmt(gcs.reduce((s, g) => s + g.ms, 0), 0)} ms, longest ${fmt(Math.max(0, ...gcs.map((g) => g.ms)), 1)} ms | ${fmt(late, 0)} ms: ran ${fmt(ran, 0)}, not scheduled ${fmt(late - ran, 0)} | ${slow.length}: ${withGc} overlap a collection, ${withStall} a stall |`,
      );
    }
    process.stdout.write(
      [
        `Where the slowest requests lose their time at ${RATE} req/s, ${SECONDS}s each; ${gatewayRuntime()}${FLAGS.length ? ` ${FLAGS.join(" ")}` : ""}; ${new Date().toISOString().slice(0, 16)}Z; ${pin.description}`,
        "",
        "| requests | direct p99 ms | gateway p99 ms | collections in the run: count, time, longest | event-loop stalls (≥ 3 ms late): late in all, main thread ran / not scheduled | requests at or over the gateway's p99 |",
        "|---|---|---|---|---|---|",
        ...rows,
      ].join("\n") + "\n",
    );
  } finally {
    await stopAll(procs);
  }
}

runMain(main);
