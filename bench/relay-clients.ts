/**
 * `npm run bench:relay`: which HTTP client should the gateway relay with? The same chat requests, non-streaming
 * and streaming, go from a load generator through a minimal relay to a zero-latency simulator on loopback. The
 * relay is one process with three listeners that differ only in the client that calls the simulator: undici
 * `request` with a keep-alive Agent (what gateway/src/upstream/send.ts uses), Node's global `fetch`, and
 * `node:http` with a keep-alive Agent. Clients alternate round by round, so drift in machine load hits all three
 * alike; figures are medians of the rounds, reported as ratios to the best client of the same workload.
 *
 * The relay does what the gateway's transport does and nothing else: read the client's JSON body, POST it
 * upstream, and send the answer back, whole for JSON and chunk by chunk as it arrives for SSE.
 */
import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent as UndiciAgent, request as undiciRequest } from "undici";
import { spawnScript, spawnSimulator, stopAll } from "../scripts/lib/processes";
import { closedLoop, type RunResult } from "./lib/closed-loop";
import { fmt, median } from "./lib/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MODEL = "bench-model";
const PATH = "/v1/chat/completions";

const CLIENTS = ["undici request", "global fetch", "node:http"] as const;
type Client = (typeof CLIENTS)[number];

/** What a relay needs from an upstream answer: status, content type, and the body as chunks. */
interface Upstream {
  status: number;
  contentType: string;
  body: AsyncIterable<Uint8Array>;
}

type Send = (url: string, body: Buffer) => Promise<Upstream>;

function senders(): Record<Client, Send> {
  // Keep-alive pools on both sides, no per-origin connection cap: what a gateway in front of replicas uses.
  const undiciAgent = new UndiciAgent({ keepAliveTimeout: 30_000, connect: { timeout: 5_000 } });
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: Infinity });
  const headers = { "content-type": "application/json" };
  return {
    "undici request": async (url, body) => {
      const r = await undiciRequest(url, { method: "POST", dispatcher: undiciAgent, headers, body });
      return { status: r.statusCode, contentType: String(r.headers["content-type"] ?? ""), body: r.body };
    },
    "global fetch": async (url, body) => {
      const r = await fetch(url, { method: "POST", headers, body });
      return { status: r.status, contentType: r.headers.get("content-type") ?? "", body: r.body as unknown as AsyncIterable<Uint8Array> };
    },
    "node:http": (url, body) =>
      new Promise((resolve, reject) => {
        const req = httpRequest(url, { method: "POST", agent: httpAgent, headers: { ...headers, "content-length": body.length } }, (res: IncomingMessage) =>
          resolve({ status: res.statusCode ?? 502, contentType: String(res.headers["content-type"] ?? ""), body: res }),
        );
        req.once("error", reject);
        req.end(body);
      }),
  };
}

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** One relay listener: the client's body upstream, the answer back (SSE chunk by chunk). */
function relayHandler(send: Send, upstreamUrl: string) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const up = await send(upstreamUrl, await readAll(req));
      res.writeHead(up.status, { "content-type": up.contentType });
      if (up.contentType.includes("text/event-stream")) {
        for await (const chunk of up.body) res.write(chunk);
        res.end();
      } else res.end(await readAll(up.body));
    } catch (err) {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    }
  };
}

/** Child-process mode: one listener per client, then one JSON line naming their URLs. */
async function serveRelays(simUrl: string): Promise<void> {
  const send = senders();
  const urls: Record<string, string> = {};
  for (const client of CLIENTS) {
    const server = createServer(relayHandler(send[client], `${simUrl}${PATH}`));
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    urls[client] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  process.once("SIGTERM", () => process.exit(0));
  process.stdout.write(`${JSON.stringify({ event: "listening", urls })}\n`);
}

const chatBody = (stream: boolean) =>
  JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: 16, temperature: 0, stream });

const WORKLOADS = { "chat, non-streaming": chatBody(false), "chat, streaming (16 tokens, whole stream)": chatBody(true) } as const;

interface Summary {
  client: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Medians over rounds, then ratios to the best client: req/s as a share of the highest, latency as a multiple of the lowest. */
function ratioRows(results: Readonly<Record<string, readonly RunResult[]>>): (Summary & { rpsRatio: number; p50Ratio: number; p99Ratio: number })[] {
  const rows: Summary[] = Object.entries(results).map(([client, runs]) => ({
    client,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors: runs.reduce((s, r) => s + r.errors, 0),
  }));
  const bestRps = Math.max(...rows.map((r) => r.rps));
  const bestP50 = Math.min(...rows.map((r) => r.p50));
  const bestP99 = Math.min(...rows.map((r) => r.p99));
  return rows.map((r) => ({ ...r, rpsRatio: r.rps / bestRps, p50Ratio: r.p50 / bestP50, p99Ratio: r.p99 / bestP99 }));
}

async function main(): Promise<void> {
  const sim = await spawnSimulator([
    "--model", MODEL, "--port", "0", "--ttft-ms", "0", "--itl-ms", "0", "--prefill-time-per-token-ms", "0",
    "--max-num-seqs", "4096", "--no-prefix-cache",
  ]);
  const relay = await spawnScript("bench/relay-clients.ts", ["--relay", sim.url]);
  const urls = relay.ready.urls as Record<Client, string>;
  const run = (client: Client, body: string, seconds = SECONDS) =>
    closedLoop({ base: urls[client], path: PATH, body, measure: "full", seconds, concurrency: CONCURRENCY });

  try {
    process.stderr.write(`warming up; then ${ROUNDS} rounds of ${SECONDS}s per client and workload, ${CONCURRENCY} concurrent...\n`);
    for (const client of CLIENTS) for (const body of Object.values(WORKLOADS)) await run(client, body, 2);

    const results = Object.fromEntries(Object.keys(WORKLOADS).map((w) => [w, Object.fromEntries(CLIENTS.map((c) => [c, [] as RunResult[]]))]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round, so no client always runs first (or last) after a workload switch.
      const order = CLIENTS.map((_, i) => CLIENTS[(i + round) % CLIENTS.length]!);
      for (const [workload, body] of Object.entries(WORKLOADS)) {
        for (const client of order) results[workload]![client]!.push(await run(client, body));
      }
    }

    const out = [
      `Relay clients, ${CONCURRENCY} concurrent, median of ${ROUNDS} rotating rounds of ${SECONDS}s (loopback, zero-latency simulator; node ${process.version})`,
      "",
      "| workload | client | req/s | p50 / p99 ms | req/s ratio | p50 ratio | p99 ratio | errors |",
      "|---|---|---|---|---|---|---|---|",
    ];
    for (const [workload, byClient] of Object.entries(results)) {
      for (const r of ratioRows(byClient)) {
        out.push(`| ${workload} | ${r.client} | ${fmt(r.rps, 0)} | ${fmt(r.p50)} / ${fmt(r.p99)} | ${fmt(r.rpsRatio)} | ${fmt(r.p50Ratio)} | ${fmt(r.p99Ratio)} | ${r.errors} |`);
      }
    }
    process.stdout.write(out.join("\n") + "\n");
  } finally {
    await stopAll([relay.proc, sim.proc]);
  }
}

if (process.argv[2] === "--relay") {
  serveRelays(process.argv[3] ?? "").catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
} else {
  main().catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
