/**
 * `npm run bench:fairness`: how a saturated model serves a light key beside a heavy one, under the gateway's old FIFO
 * queue and under its per-model scheduler (upstream/scheduler/model-scheduler.ts: the key holding the fewest slots
 * for its weight goes first, interactive before batch). One simulated replica of 4 slots, generations of about 2 s.
 *
 * Phases, each BENCH_WARMUP s (default 10: one queue timeout, so a FIFO queue is in its steady state) then
 * BENCH_SECONDS s measured (default 30); only requests sent in the measured seconds count:
 *   1. alone: key B alone, one short streaming chat every 500 ms (open loop): its time to first token unloaded.
 *   2. flood: key A's 40 streaming clients in a closed loop (≈ 2 s generations) + B as in phase 1.
 *   3. batch: the same flood from a `priority: batch` key + an `interactive` key at B's rate.
 * Revisions: the candidate is this tree's bundle; the FIFO baseline is the bundle of BENCH_BASELINE_REF (default
 * e411d49, before the scheduler), built from a `git archive` of it with its own scripts/build-gateway.ts. Each run
 * gets a fresh simulator and gateway; within a phase both revisions run back to back, the first alternating from
 * phase to phase (baseline first, candidate first, baseline first), so neither always runs on a warmer machine.
 * A request refused as load counts as a 429 whether it is one or, for a stream the gateway had already started with
 * keep-alives while it waited, the `model_saturated` error event that ends it.
 * Goals (the issue's): under a flood the light key waits at most for the next slot to free, i.e. its TTFT p99 is
 * within its p99 alone (phase 1's B, for the interactive key too: it sends the same) plus one of the flood's
 * generations (its slot time, p50), and none of its requests is refused. Exits 1 when the candidate misses one.
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Agent, request } from "undici";
import { hashApiKey } from "../gateway/src/auth/api-keys";
import { buildGateway, BUNDLE } from "../scripts/build-gateway";
import { ROOT, spawnSimulator, stopAll } from "../scripts/lib/processes";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { fmt, percentile } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);
const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? "e411d49";

const MODEL = "m";
const SLOTS = 4;
/** The simulator's prefill and decode times: a flood generation of 100 tokens takes 20 + 99 × 20 ms ≈ 2 s. */
const TTFT_MS = 20;
const ITL_MS = 20;
const FLOOD_TOKENS = 100;
/** The light key's requests are short chats (≈ 0.2 s), so alone it never waits for a slot. */
const CHAT_TOKENS = 10;
const FLOOD_CLIENTS = 40;
const CHAT_INTERVAL_MS = 500;
/**
 * The issue's picture under FIFO: 36 of A's requests wait at 2 generations a second (18 s of work), so with a 10 s
 * timeout B's requests wait ~10 s behind them and many time out. 64 places hold A's 36 and B's ≤ 20 waiting.
 */
const ROUTING = { queueTimeoutMs: 10_000, maxQueueLength: 64 };
/** A flood client's pause after a refusal, so an immediate 429 cannot become a loop spinning the shared cores. */
const REFUSAL_PAUSE_MS = 100;
/** startBundledGateway's GATEWAY_API_KEY; the keys measured come from the keys file. */
const ADMIN_KEY = "sk-bench-fairness-admin-0123456789abcdef";

interface BenchKey {
  name: string;
  secret: string;
  priority?: "interactive" | "batch";
}
const benchKey = (name: string, priority?: BenchKey["priority"]): BenchKey => ({ name, secret: `sk-bench-fairness-${name}-0123456789abcdef`, priority });
const KEYS = { a: benchKey("key-a"), b: benchKey("key-b"), batch: benchKey("batch", "batch"), interactive: benchKey("interactive", "interactive") };

interface Phase {
  id: "alone" | "flood" | "batch";
  title: string;
  /** The key of the 40 closed-loop clients, if any. */
  flood?: BenchKey;
  /** The key of the open loop at one request every 500 ms. */
  chat: BenchKey;
}
const PHASES: Phase[] = [
  { id: "alone", title: "1. B alone", chat: KEYS.b },
  { id: "flood", title: "2. A's flood (40 streams in a closed loop) + B (one every 500 ms)", flood: KEYS.a, chat: KEYS.b },
  { id: "batch", title: "3. a batch key's flood + an interactive key (one every 500 ms)", flood: KEYS.batch, chat: KEYS.interactive },
];

interface Revision {
  name: "baseline" | "candidate";
  label: string;
  bundle: string;
  /** Whether its keys-file schema knows `priority` and `weight` (the baseline's is strict and refuses them). */
  priorities: boolean;
}

/** One request's fate; times in ms from the run's start. */
interface Outcome {
  key: string;
  sentAt: number;
  /** HTTP status, 0 when the connection failed. */
  status: number;
  /** Why it failed, for the report: the error code of a non-200 answer or of a stream's error event. */
  reason?: string;
  /**
   * Refused as load (`model_saturated`): a 429, or, for a stream the gateway had started with keep-alives while it
   * waited, the error event that ends it.
   */
  refused: boolean;
  firstTokenAt?: number;
  endAt: number;
  ok: boolean;
}

/** One streaming chat; the first token is the first event carrying generated text. */
async function streamOne(agent: Agent, base: string, key: BenchKey, maxTokens: number, t0: number): Promise<Outcome> {
  const sentAt = performance.now() - t0;
  const out: Outcome = { key: key.name, sentAt, status: 0, endAt: sentAt, ok: false, refused: false };
  try {
    const res = await request(`${base}/v1/chat/completions`, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: `Tell me about tides, ${key.name}.` }], max_tokens: maxTokens, ignore_eos: true, stream: true }),
    });
    out.status = res.statusCode;
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      out.endAt = performance.now() - t0;
      out.reason = `${res.statusCode} ${errorCode(text)}`;
      out.refused = res.statusCode === 429;
      return out;
    }
    let buffered = "";
    let done = false;
    for await (const chunk of res.body) {
      buffered += String(chunk);
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") {
          done = true;
          continue;
        }
        const event = JSON.parse(data) as { error?: { code?: string }; choices?: { delta?: { content?: string } }[] };
        if (event.error) {
          out.reason = `200, then an error event ${event.error.code ?? ""}`;
          out.refused = event.error.code === "model_saturated";
        }
        else if (out.firstTokenAt === undefined && event.choices?.[0]?.delta?.content) out.firstTokenAt = performance.now() - t0;
      }
    }
    out.endAt = performance.now() - t0;
    out.ok = done && !out.reason && out.firstTokenAt !== undefined;
    if (!out.ok) out.reason ??= "200, stream cut";
  } catch (err) {
    out.endAt = performance.now() - t0;
    out.reason = `connection failed (${(err as Error).message})`;
  }
  return out;
}

function errorCode(body: string): string {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? "";
  } catch {
    return "";
  }
}

/** The FIFO baseline's bundle: `ref` extracted with git archive, built with its own build script, source removed. */
function buildBaseline(ref: string): string {
  const src = mkdtempSync(join(tmpdir(), "bench-fairness-src-"));
  const out = mkdtempSync(join(tmpdir(), "bench-fairness-baseline-"));
  try {
    execFileSync("sh", ["-c", 'git -C "$1" archive "$2" | tar -x -C "$3"', "sh", ROOT, ref, src], { stdio: ["ignore", "ignore", "inherit"] });
    symlinkSync(join(ROOT, "node_modules"), join(src, "node_modules"));
    execFileSync(process.execPath, ["--import", "tsx", "scripts/build-gateway.ts", "--out", out], { cwd: src, stdio: ["ignore", "ignore", "inherit"] });
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  return join(out, BUNDLE);
}

/** One phase on one revision: a fresh simulator and gateway, the phase's traffic, every request's outcome. */
async function run(phase: Phase, rev: Revision): Promise<Outcome[]> {
  const procs: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), "bench-fairness-"));
  try {
    const sim = await spawnSimulator(["--model", MODEL, "--port", "0", "--max-num-seqs", String(SLOTS), "--ttft-ms", String(TTFT_MS), "--itl-ms", String(ITL_MS), "--prefill-time-per-token-ms", "0", "--no-prefix-cache"]);
    procs.push(sim.proc);
    const catalog = join(dir, "catalog.json");
    writeFileSync(catalog, JSON.stringify({ models: [{ id: MODEL, category: "generative", maxConcurrency: SLOTS, routing: ROUTING, upstream: { mode: "endpoints", endpoints: [{ url: sim.url }] } }] }));
    const keysFile = join(dir, "keys.json");
    const entries = Object.values(KEYS).map((k) => ({ name: k.name, sha256: hashApiKey(k.secret), ...(rev.priorities && k.priority ? { priority: k.priority } : {}) }));
    writeFileSync(keysFile, JSON.stringify({ keys: entries }));
    const gw = await startBundledGateway({ catalog, key: ADMIN_KEY, bundle: rev.bundle, env: { GATEWAY_KEYS_FILE: keysFile, LOG_LEVEL: "warn" } });
    procs.push(gw.proc);

    const agent = new Agent({ connections: 256 });
    const outcomes: Outcome[] = [];
    const t0 = performance.now();
    const endMs = (WARMUP + SECONDS) * 1000;
    const flooder = async (key: BenchKey) => {
      while (performance.now() - t0 < endMs) {
        const o = await streamOne(agent, gw.url, key, FLOOD_TOKENS, t0);
        outcomes.push(o);
        if (!o.ok) await new Promise((r) => setTimeout(r, REFUSAL_PAUSE_MS));
      }
    };
    // Open loop: each request is sent on schedule whatever happened to the earlier ones.
    const chatter = async (key: BenchKey) => {
      const inflight: Promise<void>[] = [];
      for (let i = 0; i * CHAT_INTERVAL_MS < endMs; i++) {
        const wait = i * CHAT_INTERVAL_MS - (performance.now() - t0);
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        inflight.push(streamOne(agent, gw.url, key, CHAT_TOKENS, t0).then((o) => void outcomes.push(o)));
      }
      await Promise.all(inflight);
    };
    const flood = phase.flood;
    await Promise.all([chatter(phase.chat), ...(flood ? Array.from({ length: FLOOD_CLIENTS }, () => flooder(flood)) : [])]);
    await agent.close();
    return outcomes;
  } finally {
    await stopAll(procs);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One key's figures in one run. */
interface KeyStats {
  key: string;
  sent: number;
  ok: number;
  refused: number;
  /** Other failures: other statuses and error events, streams cut, connections failed. */
  failed: number;
  /** Every failure's reason (429s included) and how many, e.g. `429 model_saturated ×12`. */
  reasons: string;
  /** Answered 200 / answered (any HTTP status). */
  admitted: number;
  /** Its share of the generations completed, and of the slot time they took, in the measured seconds. */
  generationShare: number;
  slotShare: number;
  ttftP50: number;
  ttftP99: number;
  /** p50 time a generation of its held a slot: first token to end, plus the simulator's prefill before it. */
  slotMsP50: number;
}

function keyStats(all: Outcome[], keys: string[]): KeyStats[] {
  const from = WARMUP * 1000;
  const to = (WARMUP + SECONDS) * 1000;
  // Requests sent in the measured seconds, for latencies and refusals; generations ended in them, for shares.
  const sent = all.filter((o) => o.sentAt >= from && o.sentAt < to);
  const ended = all.filter((o) => o.ok && o.endAt >= from && o.endAt < to);
  const slotMs = (o: Outcome) => o.endAt - o.firstTokenAt! + TTFT_MS;
  const totalSlotMs = ended.reduce((s, o) => s + slotMs(o), 0);
  return keys.map((key) => {
    const mine = sent.filter((o) => o.key === key);
    const ok = mine.filter((o) => o.ok);
    const answered = mine.filter((o) => o.status !== 0).length;
    const ttfts = ok.map((o) => o.firstTokenAt! - o.sentAt).sort((a, b) => a - b);
    const myEnded = ended.filter((o) => o.key === key);
    const slots = myEnded.map(slotMs).sort((a, b) => a - b);
    return {
      key,
      sent: mine.length,
      ok: ok.length,
      refused: mine.filter((o) => o.refused).length,
      failed: mine.filter((o) => !o.ok && !o.refused).length,
      reasons: tally(mine.filter((o) => !o.ok).map((o) => o.reason ?? "?")),
      admitted: answered > 0 ? ok.length / answered : NaN,
      generationShare: ended.length > 0 ? myEnded.length / ended.length : NaN,
      slotShare: totalSlotMs > 0 ? slots.reduce((s, x) => s + x, 0) / totalSlotMs : NaN,
      ttftP50: percentile(ttfts, 50),
      ttftP99: percentile(ttfts, 99),
      slotMsP50: percentile(slots, 50),
    };
  });
}

function tally(reasons: string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${r} ×${n}`).join(", ");
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : "n/a");

async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const commit = execFileSync("git", ["-C", ROOT, "rev-parse", "--short", BASELINE_REF], { encoding: "utf8" }).trim();
  process.stderr.write(`building the candidate (this tree) and the baseline (${BASELINE_REF}, ${commit})...\n`);
  const candidateOut = mkdtempSync(join(tmpdir(), "bench-fairness-candidate-"));
  const bundleDirs = [candidateOut];
  const stats = new Map<string, KeyStats[]>();
  let revisions: Record<Revision["name"], Revision>;
  try {
    const baselineBundle = buildBaseline(BASELINE_REF);
    bundleDirs.push(dirname(baselineBundle));
    revisions = {
      baseline: { name: "baseline", label: `baseline (FIFO, ${commit})`, bundle: baselineBundle, priorities: false },
      candidate: { name: "candidate", label: "candidate (scheduler, this tree)", bundle: join((await buildGateway(candidateOut)).outDir, BUNDLE), priorities: true },
    };
    for (const [i, phase] of PHASES.entries()) {
      // Alternate which revision goes first (ABBA across phases).
      const order = i % 2 === 0 ? [revisions.baseline, revisions.candidate] : [revisions.candidate, revisions.baseline];
      for (const rev of order) {
        process.stderr.write(`phase ${phase.title}: ${rev.label}, ${WARMUP} + ${SECONDS} s...\n`);
        const keys = [...(phase.flood ? [phase.flood.name] : []), phase.chat.name];
        stats.set(`${phase.id}/${rev.name}`, keyStats(await run(phase, rev), keys));
      }
    }
  } finally {
    for (const dir of bundleDirs) rmSync(dir, { recursive: true, force: true });
  }

  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(`${gatewayRuntime()}`);
  console.log(`machine: ${cpus().length} cores; load average (1, 5, 15 min) ${la(loadAtStart)} at start, ${la(loadavg())} at the end`);
  console.log(
    `model: 1 replica, ${SLOTS} slots (maxConcurrency ${SLOTS}, simulator max-num-seqs ${SLOTS}), prefill ${TTFT_MS} ms, ${ITL_MS} ms a token; ` +
      `flood requests ${FLOOD_TOKENS} tokens (≈ ${((TTFT_MS + (FLOOD_TOKENS - 1) * ITL_MS) / 1000).toFixed(1)} s), chats ${CHAT_TOKENS}; ` +
      `routing.queueTimeoutMs ${ROUTING.queueTimeoutMs}, maxQueueLength ${ROUTING.maxQueueLength}`,
  );
  console.log(`each phase: ${WARMUP} s warm-up + ${SECONDS} s measured, per revision; order baseline/candidate, candidate/baseline, baseline/candidate`);
  console.log(`baseline: ${BASELINE_REF === commit ? commit : `${BASELINE_REF} (${commit})`}, FIFO queue; candidate: this working tree, the per-model scheduler\n`);
  console.log(
    "429: refused as load (`model_saturated`: a 429, or the error event ending a stream the gateway had started with keep-alives while it waited); " +
      "admitted: answered 200 / answered; generations, slot time: the key's share of the generations completed in the measured seconds, and of the slot time they took; " +
      `TTFT: from sending to the first generated token, of the requests answered 200 (the light key sends ${(SECONDS * 1000) / CHAT_INTERVAL_MS} in a phase: below 100, its p99 is its largest)\n`,
  );
  for (const phase of PHASES) {
    console.log(`### ${phase.title}\n`);
    console.log("| revision | key | sent | 200 | 429 | other failures | admitted | generations | slot time | TTFT p50 ms | TTFT p99 ms |");
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    for (const rev of Object.values(revisions)) {
      for (const s of stats.get(`${phase.id}/${rev.name}`)!) {
        console.log(`| ${rev.label} | ${s.key} | ${s.sent} | ${s.ok} | ${s.refused} | ${s.failed} | ${pct(s.admitted)} | ${pct(s.generationShare)} | ${pct(s.slotShare)} | ${fmt(s.ttftP50, 0)} | ${fmt(s.ttftP99, 0)} |`);
      }
    }
    for (const rev of Object.values(revisions)) {
      for (const s of stats.get(`${phase.id}/${rev.name}`)!) if (s.reasons) console.log(`\n${rev.name} ${s.key}'s failures: ${s.reasons}`);
    }
    if (phase.flood) {
      const slot = (rev: Revision) => stats.get(`${phase.id}/${rev.name}`)!.find((s) => s.key === phase.flood!.name)!.slotMsP50;
      console.log(`\n${phase.flood.name}'s generation (slot time, p50): baseline ${fmt(slot(revisions.baseline), 0)} ms, candidate ${fmt(slot(revisions.candidate), 0)} ms`);
    }
    console.log("");
  }

  // The goals, for each revision: against its own B-alone p99 (the interactive key's too: it sends what B sends) and
  // its own flood's generation time, both measured in this sitting.
  console.log("### Goals: under a flood, the light key's TTFT p99 ≤ its p99 alone + one flood generation, and 0 refused\n");
  console.log("| revision | phase | key | TTFT p99 ms | budget ms (B alone p99 + generation p50) | p99 | refused (429 + other) | refusals |");
  console.log("|---|---|---|---|---|---|---|---|");
  const failures: string[] = [];
  for (const rev of Object.values(revisions)) {
    const alone = stats.get(`alone/${rev.name}`)!.find((s) => s.key === KEYS.b.name)!;
    for (const phase of PHASES.filter((p) => p.flood)) {
      const s = stats.get(`${phase.id}/${rev.name}`)!;
      const light = s.find((k) => k.key === phase.chat.name)!;
      const generation = s.find((k) => k.key === phase.flood!.name)!.slotMsP50;
      const budget = alone.ttftP99 + generation;
      // NaN (nothing answered) fails too.
      const p99Ok = light.ttftP99 <= budget;
      const refusedOk = light.refused + light.failed === 0;
      console.log(
        `| ${rev.label} | ${phase.id} | ${light.key} | ${fmt(light.ttftP99, 0)} | ${fmt(budget, 0)} (${fmt(alone.ttftP99, 0)} + ${fmt(generation, 0)}) | ${p99Ok ? "PASS" : "FAIL"} | ${light.refused} + ${light.failed} | ${refusedOk ? "PASS" : "FAIL"} |`,
      );
      if (rev.name === "candidate" && !p99Ok) failures.push(`${phase.id}: ${light.key}'s TTFT p99 ${fmt(light.ttftP99, 0)} ms is over ${fmt(budget, 0)} ms`);
      if (rev.name === "candidate" && !refusedOk) failures.push(`${phase.id}: ${light.key} had ${light.refused} requests refused (429) and ${light.failed} failed otherwise`);
    }
  }
  console.log("\n(The baseline's rows show the FIFO picture the scheduler replaces; only the candidate's decide the exit code.)");
  if (failures.length > 0) {
    console.log(`\nFAILED (candidate):\n- ${failures.join("\n- ")}`);
    process.exitCode = 1;
  }
}

runMain(main);
