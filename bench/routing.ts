/**
 * `npm run bench:routing`: the three balancing strategies side by side on simulated vLLM replicas with the
 * latency model (prefill per uncached prompt token, prefix cache, inter-token latency, slowdown under load,
 * max-num-seqs queueing). Three workloads, open-loop Poisson arrivals, fresh replicas for every run (so no
 * strategy inherits another's warm caches). TTFT is measured by the client, to the first generated token.
 * Figures are ratios to round-robin measured in the same run.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { Agent, request } from "undici";
import { spawnSimulator, stopAll } from "../scripts/lib/processes";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { NGINX_MISSING, nginxBinary, startNginx } from "./lib/nginx";
import { fmt, percentile } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** Seconds of the same traffic before the measured ones (not counted): the caches then hold what it has used. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 0);
/** Gateway processes per run; more than one sit behind nginx, which spreads requests round-robin as a Service would. */
const GATEWAYS = Number(process.env.BENCH_GATEWAYS ?? 1);
const REPLICAS = 4;
const KEY = "sk-bench-routing-0123456789abcdefghijkl";
const STRATEGIES = ["round-robin", "least-loaded", "prefix-affinity"] as const;

/** Per replica: an 8B-class model on one GPU, scaled down so a 2-core machine can drive four of them. */
const simArgs = (maxNumSeqs: number) => [
  "--max-num-seqs", String(maxNumSeqs),
  "--ttft-ms", "20",
  "--prefill-time-per-token-ms", "0.2",
  "--itl-ms", "15",
  "--time-factor-under-load", "2",
  "--kv-cache-size", "320", // blocks of 16 tokens: room for about 4 of the 8 shared documents
  "--block-size", "16",
];

interface Req {
  prompt: string;
  maxTokens: number;
  /** Requests of one group share a long prefix (a document): the first of each has to compute it. */
  group?: number;
}

interface Workload {
  name: string;
  ratePerSecond: number;
  /** vLLM --max-num-seqs of each replica; the gateway's per-replica cap is twice that. */
  maxNumSeqs: number;
  next(i: number, rand: () => number): Req;
}

const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `w${(i * 7919 + seed * 104729) % 5000}`).join(" ");

/** Every prompt of its own, similar sizes. */
const uniform: Workload = {
  name: "uniform",
  ratePerSecond: 18,
  maxNumSeqs: 6,
  next: (i) => ({ prompt: `Question ${i}: ${words(150, i)}`, maxTokens: 40 }),
};

/**
 * Mostly short chats, one in twenty asking for a long answer (a report, a code file): long generations hold
 * a replica's batch slots for many seconds, so where the next request goes matters.
 */
const skewed: Workload = {
  name: "skewed sizes",
  ratePerSecond: 9,
  maxNumSeqs: 4,
  next: (i, rand) => (rand() < 0.05 ? { prompt: `Write a report ${i}: ${words(200, i)}`, maxTokens: 600 } : { prompt: `Chat ${i}: ${words(60, i)}`, maxTokens: 20 }),
};

/** 8 long shared documents (system prompts, RAG contexts), many short questions about each. */
const DOCS = Array.from({ length: 8 }, (_, d) => `Document ${d}. ${words(1200, 1000 + d)}`);
const sharedPrefix: Workload = {
  name: "shared prefix",
  ratePerSecond: 16,
  maxNumSeqs: 6,
  next: (i, rand) => {
    const group = Math.floor(rand() * DOCS.length);
    return { prompt: `${DOCS[group]}\n\nQuestion ${i}: ${words(15, i)}`, maxTokens: 20, group };
  },
};

/** Deterministic PRNG (mulberry32) so every strategy sees the same request sequence. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Sample {
  /** When it was sent and when its first token came, ms from the run's start. */
  sentAt: number;
  ttft: number;
  group?: number;
}

interface RunResult {
  /** Share of prompt tokens the replicas served from their prefix caches. */
  cacheHitRate: number;
  samples: Sample[];
  completed: number;
  failed: number;
  elapsed: number;
  outputTokens: number;
}

interface CacheCounters {
  hits: number;
  queries: number;
}

/** Prompt tokens the replicas served from their prefix caches, and all they were asked for, so far. */
async function cacheCounters(urls: readonly string[]): Promise<CacheCounters> {
  const total: CacheCounters = { hits: 0, queries: 0 };
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    total.hits += Number(/^vllm:prefix_cache_hits_total\{[^}]*\} (\S+)/m.exec(text)?.[1] ?? 0);
    total.queries += Number(/^vllm:prefix_cache_queries_total\{[^}]*\} (\S+)/m.exec(text)?.[1] ?? 0);
  }
  return total;
}

async function streamOne(agent: Agent, base: string, req: Req): Promise<{ ttft: number; tokens: number } | undefined> {
  const t0 = performance.now();
  const res = await request(`${base}/v1/chat/completions`, {
    method: "POST",
    dispatcher: agent,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: req.prompt }], max_tokens: req.maxTokens, ignore_eos: true, stream: true, temperature: 0 }),
  });
  if (res.statusCode !== 200) {
    await res.body.dump();
    return undefined;
  }
  let first: number | undefined;
  let tokens = 0;
  for await (const chunk of res.body) {
    const s = String(chunk);
    const n = s.split('"content":"').length - 1 - (s.split('"content":""').length - 1);
    if (n > 0 && first === undefined) first = performance.now();
    tokens += Math.max(0, n);
  }
  return first === undefined ? undefined : { ttft: first - t0, tokens };
}

/** The production bundle, built when the first gateway starts. */
let bundle: string | undefined;

/** The gateways of one run, and the address clients use: the one gateway, or nginx round-robin in front of several. */
async function startGateways(catalog: string, procs: ChildProcess[]): Promise<string> {
  const urls: string[] = [];
  for (let g = 0; g < GATEWAYS; g++) {
    const gw = await startBundledGateway({ catalog, key: KEY, bundle, env: { GATEWAY_HEALTH_INTERVAL_MS: "1000" } });
    bundle = gw.bundle;
    procs.push(gw.proc);
    urls.push(gw.url);
  }
  if (GATEWAYS === 1) return urls[0]!;
  const front = await startNginx(nginxBinary()!, urls);
  procs.push(front.proc);
  return front.url;
}

async function run(workload: Workload, strategy: string): Promise<RunResult> {
  const procs: ChildProcess[] = [];
  try {
    const sims = await Promise.all(Array.from({ length: REPLICAS }, () => spawnSimulator(["--model", "m", "--port", "0", ...simArgs(workload.maxNumSeqs)])));
    procs.push(...sims.map((s) => s.proc));
    const dir = mkdtempSync(join(tmpdir(), "bench-routing-"));
    const catalog = join(dir, "catalog.json");
    writeFileSync(
      catalog,
      JSON.stringify({
        models: [
          {
            id: "m",
            category: "generative",
            // Twice vLLM's max-num-seqs: a short queue inside each server keeps its batch full; beyond that,
            // requests wait in the gateway's queue (long enough here that none is refused).
            maxConcurrency: 2 * workload.maxNumSeqs,
            routing: { strategy, maxWaitingRequests: 1000, queueTimeoutMs: 60_000, maxQueueLength: 100_000, ...JSON.parse(process.env.BENCH_ROUTING ?? "{}") },
            upstream: { mode: "endpoints", endpoints: sims.map((s) => ({ url: s.url })) },
          },
        ],
      }),
    );
    const base = await startGateways(catalog, procs);

    const agent = new Agent({ connections: 256 });
    const rand = prng(42);
    const result: RunResult = { cacheHitRate: 0, samples: [], completed: 0, failed: 0, elapsed: 0, outputTokens: 0 };
    const inflight: Promise<void>[] = [];
    const started = performance.now();
    let atWarm: CacheCounters | undefined = WARMUP > 0 ? undefined : { hits: 0, queries: 0 };
    let t = 0;
    for (let i = 0; ; i++) {
      t += (-Math.log(1 - rand()) / workload.ratePerSecond) * 1000; // Poisson arrivals
      if (t > (WARMUP + SECONDS) * 1000) break;
      const wait = started + t - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (!atWarm && t >= WARMUP * 1000) atWarm = await cacheCounters(sims.map((x) => x.url));
      const req = workload.next(i, rand);
      const sentAt = performance.now() - started - WARMUP * 1000;
      const measured = sentAt >= 0;
      inflight.push(
        streamOne(agent, base, req).then(
          (r) => {
            if (!measured) return;
            if (r) {
              result.samples.push({ sentAt, ttft: r.ttft, group: req.group });
              result.completed++;
              result.outputTokens += r.tokens;
            } else result.failed++;
          },
          () => void (measured && result.failed++),
        ),
      );
    }
    await Promise.all(inflight);
    result.elapsed = (performance.now() - started) / 1000 - WARMUP;
    await agent.close();
    const end = await cacheCounters(sims.map((x) => x.url));
    const hits = end.hits - atWarm!.hits;
    const queries = end.queries - atWarm!.queries;
    result.cacheHitRate = queries > 0 ? hits / queries : 0;
    return result;
  } finally {
    await stopAll(procs);
  }
}

/**
 * Where the slowest 1% come from, for workloads whose requests share prefixes: how many of the requests at or over
 * p99 were a document's first request (someone has to compute it) or were sent before that first one had its first
 * token (they could not find it cached anywhere yet). The rest met a cold or busy replica later: placement's fault.
 */
function tailOrigin(samples: readonly Sample[], p99: number): string {
  if (!samples.some((s) => s.group !== undefined)) return "–";
  const firstDone = new Map<number, number>();
  for (const s of [...samples].sort((a, b) => a.sentAt - b.sentAt)) {
    if (s.group !== undefined && !firstDone.has(s.group)) firstDone.set(s.group, s.sentAt + s.ttft);
  }
  const tail = samples.filter((s) => s.ttft >= p99);
  const cold = tail.filter((s) => s.group !== undefined && s.sentAt <= firstDone.get(s.group)!).length;
  return `${cold} of ${tail.length}`;
}

async function main(): Promise<void> {
  if (!Number.isInteger(GATEWAYS) || GATEWAYS < 1) throw new Error(`BENCH_GATEWAYS must be a whole number of gateways, 1 or more (got "${process.env.BENCH_GATEWAYS}")`);
  if (GATEWAYS > 1 && !nginxBinary()) throw new Error(`BENCH_GATEWAYS=${GATEWAYS} needs nginx for the round-robin front. ${NGINX_MISSING}`);
  const only = process.env.BENCH_WORKLOADS?.split(",");
  const workloads = [uniform, skewed, sharedPrefix].filter((w) => !only || only.some((o) => w.name.startsWith(o)));
  const front = GATEWAYS === 1 ? "1 gateway" : `${GATEWAYS} gateways behind a round-robin front (nginx)`;
  const lines: string[] = [
    `Routing strategies, ${front} (${gatewayRuntime()}), ${REPLICAS} simulated replicas, ${SECONDS}s of Poisson arrivals per run${WARMUP > 0 ? ` after ${WARMUP}s of the same traffic not counted` : ", from cold"}; ratios are to round-robin in the same run`,
    "",
    "| workload | strategy | TTFT p50 ms | p90 ms | p99 ms | p50 ratio | p90 ratio | p99 ratio | tokens/s ratio | prefix-cache hits | failed | ≥ p99 cold |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const w of workloads) {
    const results: Record<string, RunResult> = {};
    for (const s of STRATEGIES) {
      process.stderr.write(`${w.name} / ${s} (${front}) ...\n`);
      results[s] = await run(w, s);
      if (process.env.BENCH_SAMPLES) writeFileSync(`${process.env.BENCH_SAMPLES}-${w.name.split(" ")[0]}-${s}.json`, JSON.stringify(results[s].samples));
    }
    const rr = results["round-robin"]!;
    const q = (r: RunResult, p: number) => percentile(r.samples.map((x) => x.ttft).sort((a, b) => a - b), p);
    for (const s of STRATEGIES) {
      const r = results[s]!;
      lines.push(
        `| ${w.name} | ${s} | ${fmt(q(r, 50), 0)} | ${fmt(q(r, 90), 0)} | ${fmt(q(r, 99), 0)} | ${fmt(q(r, 50) / q(rr, 50))} | ${fmt(q(r, 90) / q(rr, 90))} | ${fmt(q(r, 99) / q(rr, 99))} | ${fmt(r.outputTokens / r.elapsed / (rr.outputTokens / rr.elapsed))} | ${fmt(r.cacheHitRate * 100, 0)}% | ${r.failed} | ${tailOrigin(r.samples, q(r, 99))} |`,
      );
    }
  }
  process.stdout.write(lines.join("\n") + "\n");
}

runMain(main);
