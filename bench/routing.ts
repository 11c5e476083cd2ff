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
import { spawnGateway, spawnSimulator, stopAll } from "../scripts/lib/processes";
import { fmt, percentile } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
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
  next: (i, rand) => ({ prompt: `${DOCS[Math.floor(rand() * DOCS.length)]}\n\nQuestion ${i}: ${words(15, i)}`, maxTokens: 20 }),
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

interface RunResult {
  /** Share of prompt tokens the replicas served from their prefix caches. */
  cacheHitRate: number;
  ttft: number[];
  completed: number;
  failed: number;
  elapsed: number;
  outputTokens: number;
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
    const gw = await spawnGateway({ GATEWAY_CATALOG: catalog, GATEWAY_API_KEY: KEY, LOG_LEVEL: "warn", GATEWAY_HEALTH_INTERVAL_MS: "1000" });
    procs.push(gw.proc);

    const agent = new Agent({ connections: 256 });
    const rand = prng(42);
    const result: RunResult = { cacheHitRate: 0, ttft: [], completed: 0, failed: 0, elapsed: 0, outputTokens: 0 };
    const inflight: Promise<void>[] = [];
    const started = performance.now();
    let t = 0;
    for (let i = 0; ; i++) {
      t += (-Math.log(1 - rand()) / workload.ratePerSecond) * 1000; // Poisson arrivals
      if (t > SECONDS * 1000) break;
      const wait = started + t - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const req = workload.next(i, rand);
      inflight.push(
        streamOne(agent, gw.url, req).then(
          (r) => {
            if (r) {
              result.ttft.push(r.ttft);
              result.completed++;
              result.outputTokens += r.tokens;
            } else result.failed++;
          },
          () => void result.failed++,
        ),
      );
    }
    await Promise.all(inflight);
    result.elapsed = (performance.now() - started) / 1000;
    await agent.close();
    let hits = 0;
    let queries = 0;
    for (const sim of sims) {
      const text = await (await fetch(`${sim.url}/metrics`)).text();
      hits += Number(/^vllm:prefix_cache_hits_total\{[^}]*\} (\S+)/m.exec(text)?.[1] ?? 0);
      queries += Number(/^vllm:prefix_cache_queries_total\{[^}]*\} (\S+)/m.exec(text)?.[1] ?? 0);
    }
    result.cacheHitRate = queries > 0 ? hits / queries : 0;
    return result;
  } finally {
    await stopAll(procs);
  }
}

async function main(): Promise<void> {
  const only = process.env.BENCH_WORKLOADS?.split(",");
  const workloads = [uniform, skewed, sharedPrefix].filter((w) => !only || only.some((o) => w.name.startsWith(o)));
  const lines: string[] = [
    `Routing strategies, ${REPLICAS} simulated replicas, ${SECONDS}s of Poisson arrivals per run; ratios are to round-robin in the same run`,
    "",
    "| workload | strategy | TTFT p50 ms | p90 ms | p99 ms | p50 ratio | p90 ratio | p99 ratio | tokens/s ratio | prefix-cache hits | failed |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const w of workloads) {
    const results: Record<string, RunResult> = {};
    for (const s of STRATEGIES) {
      process.stderr.write(`${w.name} / ${s} ...\n`);
      results[s] = await run(w, s);
    }
    const rr = results["round-robin"]!;
    const q = (r: RunResult, p: number) => percentile([...r.ttft].sort((a, b) => a - b), p);
    for (const s of STRATEGIES) {
      const r = results[s]!;
      lines.push(
        `| ${w.name} | ${s} | ${fmt(q(r, 50), 0)} | ${fmt(q(r, 90), 0)} | ${fmt(q(r, 99), 0)} | ${fmt(q(r, 50) / q(rr, 50))} | ${fmt(q(r, 90) / q(rr, 90))} | ${fmt(q(r, 99) / q(rr, 99))} | ${fmt(r.outputTokens / r.elapsed / (rr.outputTokens / rr.elapsed))} | ${fmt(r.cacheHitRate * 100, 0)}% | ${r.failed} |`,
      );
    }
  }
  process.stdout.write(lines.join("\n") + "\n");
}

runMain(main);
