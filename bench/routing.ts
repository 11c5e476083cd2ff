/**
 * `npm run bench:routing`: the three balancing strategies side by side on simulated vLLM replicas with the
 * latency model (prefill per uncached prompt token, prefix cache, inter-token latency, slowdown under load,
 * max-num-seqs queueing). Three workloads, open-loop Poisson arrivals, fresh replicas for every run (so no
 * strategy inherits another's warm caches). TTFT is measured by the client, to the first generated token.
 * Figures are ratios to round-robin measured in the same run. Then LoRA adapters: 16 fine-tunes of one base model with
 * Zipf popularity on replicas of 2 slots each, routed with adapter affinity and ignoring adapters
 * (`routing.adapterAffinity: false`: least-loaded, loading wherever the request lands, evicting as needed).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { Agent, request } from "undici";
import { freePort, spawnSimulator, stopAll } from "../scripts/lib/processes";
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
  /** The LoRA adapter it names (its `model`), else the base model. */
  adapter?: string;
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

/** The adapter workload: 16 adapters of one base model, 2 slots per replica, a load stalling the engine 500 ms. */
const ADAPTERS = Array.from({ length: 16 }, (_, k) => `m-ft${k}`);
const MAX_LORAS = 2;
const LORA_LOAD_MS = 500;
/** Zipf popularity: the k-th adapter is asked for in proportion to 1/k^s (BENCH_ZIPF_S, default 1). */
const ZIPF_S = Number(process.env.BENCH_ZIPF_S ?? 1);
const ZIPF = ADAPTERS.map((_, k) => 1 / (k + 1) ** ZIPF_S);
const ZIPF_TOTAL = ZIPF.reduce((a, b) => a + b, 0);
function zipfAdapter(rand: () => number): string {
  let r = rand() * ZIPF_TOTAL;
  for (let k = 0; k < ADAPTERS.length; k++) if ((r -= ZIPF[k]!) < 0) return ADAPTERS[k]!;
  return ADAPTERS[ADAPTERS.length - 1]!;
}
const adapters: Workload = {
  name: "adapters",
  ratePerSecond: Number(process.env.BENCH_ADAPTER_RATE ?? 12),
  maxNumSeqs: 6,
  next: (i, rand) => ({ prompt: `Chat ${i}: ${words(60, i)}`, maxTokens: 20, adapter: zipfAdapter(rand) }),
};
/** The two ways of routing the adapter workload, both least-loaded otherwise. */
const ADAPTER_ROUTINGS = [
  { name: "ignores adapters", routing: { adapterAffinity: false } },
  { name: "adapter affinity", routing: { adapterAffinity: true } },
] as const;

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
  /** Adapter loads and evictions the gateways made (the adapter workload). */
  adapterLoads: number;
  adapterEvictions: number;
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
    body: JSON.stringify({ model: req.adapter ?? "m", messages: [{ role: "user", content: req.prompt }], max_tokens: req.maxTokens, ignore_eos: true, stream: true, temperature: 0 }),
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

/** The production bundle, built when the first gateway starts; BENCH_BUNDLE: another build's (an A/B comparison). */
let bundle: string | undefined = process.env.BENCH_BUNDLE;

/** The gateways of one run, and the address clients use: the one gateway, or nginx round-robin in front of several. */
async function startGateways(catalog: string, procs: ChildProcess[], metricsUrls: string[]): Promise<string> {
  const urls: string[] = [];
  for (let g = 0; g < GATEWAYS; g++) {
    const metricsPort = await freePort();
    metricsUrls.push(`http://127.0.0.1:${metricsPort}/metrics`);
    const gw = await startBundledGateway({ catalog, key: KEY, bundle, env: { GATEWAY_HEALTH_INTERVAL_MS: "1000", GATEWAY_METRICS_PORT: String(metricsPort) } });
    bundle = gw.bundle;
    procs.push(gw.proc);
    urls.push(gw.url);
  }
  if (GATEWAYS === 1) return urls[0]!;
  const front = await startNginx(nginxBinary()!, urls);
  procs.push(front.proc);
  return front.url;
}

/** A gateway counter summed over its label sets and over the gateways. */
async function gatewayCounter(metricsUrls: readonly string[], name: string): Promise<number> {
  let total = 0;
  for (const url of metricsUrls) for (const m of (await (await fetch(url)).text()).matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "gm"))) total += Number(m[1]);
  return total;
}

async function run(workload: Workload, strategy: string, extraRouting: object = {}): Promise<RunResult> {
  const procs: ChildProcess[] = [];
  const lora = workload === adapters;
  // The simulators' runtime load and unload routes (vLLM's VLLM_ALLOW_RUNTIME_LORA_UPDATING).
  if (lora) process.env.VLLM_ALLOW_RUNTIME_LORA_UPDATING = "1";
  const loraArgs = lora ? ["--enable-lora", "--max-loras", String(MAX_LORAS), "--lora-load-time-ms", String(LORA_LOAD_MS)] : [];
  try {
    const sims = await Promise.all(Array.from({ length: REPLICAS }, () => spawnSimulator(["--model", "m", "--port", "0", ...simArgs(workload.maxNumSeqs), ...loraArgs])));
    delete process.env.VLLM_ALLOW_RUNTIME_LORA_UPDATING;
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
            routing: { strategy, maxWaitingRequests: 1000, queueTimeoutMs: 60_000, maxQueueLength: 100_000, ...extraRouting, ...JSON.parse(process.env.BENCH_ROUTING ?? "{}") },
            upstream: { mode: "endpoints", endpoints: sims.map((s) => ({ url: s.url })) },
            ...(lora ? { lora: { maxLoras: MAX_LORAS, adapters: ADAPTERS.map((id) => ({ id, path: `/adapters/${id}`, loading: "on-demand" })) } } : {}),
          },
        ],
      }),
    );
    const metricsUrls: string[] = [];
    const base = await startGateways(catalog, procs, metricsUrls);

    const agent = new Agent({ connections: 256 });
    const rand = prng(42);
    const result: RunResult = { cacheHitRate: 0, samples: [], completed: 0, failed: 0, elapsed: 0, outputTokens: 0, adapterLoads: 0, adapterEvictions: 0 };
    const inflight: Promise<void>[] = [];
    const started = performance.now();
    let atWarm: CacheCounters | undefined = WARMUP > 0 ? undefined : { hits: 0, queries: 0 };
    // The adapter loads and evictions before the measured seconds.
    let warmLoads = { loads: 0, evictions: 0 };
    let t = 0;
    for (let i = 0; ; i++) {
      t += (-Math.log(1 - rand()) / workload.ratePerSecond) * 1000; // Poisson arrivals
      if (t > (WARMUP + SECONDS) * 1000) break;
      const wait = started + t - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (!atWarm && t >= WARMUP * 1000) {
        atWarm = await cacheCounters(sims.map((x) => x.url));
        if (lora) warmLoads = { loads: await gatewayCounter(metricsUrls, "gateway_lora_adapter_loads_total"), evictions: await gatewayCounter(metricsUrls, "gateway_lora_adapter_evictions_total") };
      }
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
    if (lora) {
      result.adapterLoads = (await gatewayCounter(metricsUrls, "gateway_lora_adapter_loads_total")) - warmLoads.loads;
      result.adapterEvictions = (await gatewayCounter(metricsUrls, "gateway_lora_adapter_evictions_total")) - warmLoads.evictions;
    }
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
  const selected = (w: Workload) => !only || only.some((o) => w.name.startsWith(o));
  const workloads = [uniform, skewed, sharedPrefix].filter(selected);
  const front = GATEWAYS === 1 ? "1 gateway" : `${GATEWAYS} gateways behind a round-robin front (nginx)`;
  const lines: string[] = [
    `Routing strategies, ${front} (${gatewayRuntime()}), ${REPLICAS} simulated replicas, ${SECONDS}s of Poisson arrivals per run${WARMUP > 0 ? ` after ${WARMUP}s of the same traffic not counted` : ", from cold"}; ratios are to round-robin in the same run`,
  ];
  if (workloads.length > 0) {
    lines.push(
      "",
      "| workload | strategy | TTFT p50 ms | p90 ms | p99 ms | p50 ratio | p90 ratio | p99 ratio | tokens/s ratio | prefix-cache hits | failed | ≥ p99 cold |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
  }
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
  if (selected(adapters)) lines.push("", ...(await adapterTable(front)));
  process.stdout.write(lines.join("\n") + "\n");
}

/** The adapter workload, routed with and without adapter affinity; ratios are to the run that ignores adapters. */
async function adapterTable(front: string): Promise<string[]> {
  const results = new Map<string, RunResult>();
  for (const { name, routing } of ADAPTER_ROUTINGS) {
    process.stderr.write(`adapters / ${name} (${front}) ...\n`);
    results.set(name, await run(adapters, "least-loaded", routing));
  }
  const q = (r: RunResult, p: number) => percentile(r.samples.map((x) => x.ttft).sort((a, b) => a - b), p);
  const base = results.get(ADAPTER_ROUTINGS[0].name)!;
  return [
    `LoRA adapters: ${ADAPTERS.length} adapters of one base model, Zipf (s = ${ZIPF_S}) popularity, --max-loras ${MAX_LORAS}, a load stalls a replica's engine ${LORA_LOAD_MS} ms, ${adapters.ratePerSecond} requests/s; ratios are to the run ignoring adapters`,
    "",
    "| routing | TTFT p50 ms | p90 ms | p99 ms | p50 ratio | p90 ratio | p99 ratio | tokens/s ratio | adapter loads | evictions | failed |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...ADAPTER_ROUTINGS.map(({ name }) => {
      const r = results.get(name)!;
      return `| ${name} | ${fmt(q(r, 50), 0)} | ${fmt(q(r, 90), 0)} | ${fmt(q(r, 99), 0)} | ${fmt(q(r, 50) / q(base, 50))} | ${fmt(q(r, 90) / q(base, 90))} | ${fmt(q(r, 99) / q(base, 99))} | ${fmt(r.outputTokens / r.elapsed / (base.outputTokens / base.elapsed))} | ${r.adapterLoads} | ${r.adapterEvictions} | ${r.failed} |`;
    }),
  ];
}

runMain(main);
