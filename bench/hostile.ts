/**
 * `npm run bench:hostile`: the gateway's memory under hostile clients, against the bound docs/gateway-api.md
 * states. The production gateway process (production defaults) in front of simulated model servers; attackers
 * in processes of their own; a normal client on another address all along. Phases:
 *
 *   baseline   warm-up traffic, then the gateway's RSS: the reference for everything below
 *   streams    960 slow streams from four keys (240 each), whose clients read nothing: near the gateway's cap of
 *              requests in progress; the RSS they add, per stream
 *   uploads    2,000 unfinished 4 MiB uploads from one client with one key
 *   idle       30,000 idle connections from 30 addresses
 *   answers    8 clients of one key asking for 2,048 embeddings of 1,152 dimensions as JSON floats (about 50 MB
 *              each) and reading none of it: the review's case that once took the gateway to 509 MiB
 *   worst      every bound at once: body memory filled by four keys' stalled uploads, the connection cap
 *              filled with idle sockets, the stalled answers and the streams again, and the normal client
 *              sending bodies built for the worst JSON amplification, back to back
 *
 * The model servers are simulators, the slow chat model and the large embedder in processes of their own (making
 * 50 MB answers would stall any process they share). Reports RSS now and at its peak (VmHWM) per phase, the normal client's outcomes, and exits non-zero if the
 * peak crosses the documented bound or the normal client was not served.
 */
import { cpus, totalmem } from "node:os";
import { rssBoundBytes } from "../gateway/src/config/memory-bound";
import { settingsFromEnv } from "../gateway/src/config/settings";
import { normalClient, startGatewayProcess, type GatewayProcess } from "../scripts/lib/gateway-process";
import { spawnSimulator, stopAll } from "../scripts/lib/processes";
import { HostileClient, idleFlood, mergeReports, type AttackCommand, type AttackReport } from "../scripts/lib/hostile-client";
import { fmt, percentile } from "./lib/stats";
import { gatewayRuntime } from "./lib/bundled-gateway";

const MiB = 1024 * 1024;
const UPLOADS = Number(process.env.HOSTILE_UPLOADS ?? 2000);
const IDLE = Number(process.env.HOSTILE_IDLE ?? 30_000);
const HOLD_MS = Number(process.env.HOSTILE_HOLD_MS ?? 5000);
const ATTACK_KEYS = ["attacker", "a2", "a3", "a4"];
const ANSWERS = Number(process.env.HOSTILE_ANSWERS ?? 8);
const STREAMS_PER_KEY = Number(process.env.HOSTILE_STREAMS_PER_KEY ?? 240);
/** The bound for the production defaults, as docs/gateway-api.md states it. */
const DOCUMENTED_RSS_BOUND_BYTES = rssBoundBytes(settingsFromEnv({}));

interface PhaseResult {
  phase: string;
  rss: number;
  peak: number;
  served: number;
  tried: number;
  p50: number;
  p99: number;
  /** Client connections the gateway itself held at the end of the phase, and body memory reserved. */
  connections: number;
  bodyMemory: number;
  answerMemory: number;
  /** V8 heap in use and external (Buffer) memory at the end of the phase. */
  heapUsed: number;
  external: number;
  attack?: AttackReport;
}

/** The normal client's requests while an attack holds: sequential, for `ms`. */
async function serveWhile(gw: GatewayProcess, ms: number, extra: () => Record<string, unknown> = () => ({})): Promise<{ served: number; tried: number; latencies: number[]; failures: string[] }> {
  const client = normalClient(gw.url, gw.keys.client!);
  const deadline = Date.now() + ms;
  const latencies: number[] = [];
  const failures: string[] = [];
  let served = 0;
  let tried = 0;
  while (Date.now() < deadline) {
    const r = await client.chat(extra());
    tried++;
    if (r.ok) {
      served++;
      latencies.push(r.ms);
    } else failures.push(`${r.status} ${r.text.slice(0, 160)}`);
  }
  await client.close();
  return { served, tried, latencies: latencies.sort((a, b) => a - b), failures };
}

function combine(a: Awaited<ReturnType<typeof serveWhile>>, b: Awaited<ReturnType<typeof serveWhile>>) {
  return { served: a.served + b.served, tried: a.tried + b.tried, latencies: [...a.latencies, ...b.latencies].sort((x, y) => x - y), failures: [...a.failures, ...b.failures] };
}

async function phase(name: string, gw: GatewayProcess, s: Awaited<ReturnType<typeof serveWhile>>, attack?: AttackReport): Promise<PhaseResult> {
  const m = gw.memory();
  const [connections, bodyMemory, answerMemory, heapUsed, external] = await Promise.all(
    ["gateway_open_connections", "gateway_body_memory_bytes", "gateway_answer_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_external_memory_bytes"].map((n) => gw.metric(n)),
  );
  if (s.failures.length) console.error(`${name}: normal client failures (first 3): ${s.failures.slice(0, 3).join(" | ")}`);
  return { phase: name, ...m, served: s.served, tried: s.tried, p50: percentile(s.latencies, 50), p99: percentile(s.latencies, 99), connections: connections!, bodyMemory: bodyMemory!, answerMemory: answerMemory!, heapUsed: heapUsed!, external: external!, attack };
}

/**
 * A valid chat request just under 4 MiB whose parsed form is as large as the limits allow: as many empty
 * objects as GATEWAY_MAX_JSON_CONTAINERS lets through, then decimals (each boxed in a mixed array: 4 bytes of
 * text, 24 of heap).
 */
function amplifyingBody(): Record<string, unknown> {
  const objects = 99_000;
  const decimals = Math.floor((4 * MiB - 300 - objects * 3) / 4);
  return { junk: [...Array.from({ length: objects }, () => ({})), ...Array<number>(decimals).fill(0.5)] };
}

/** `count` requests of one key from one address, each answered at length to a client that reads none of it. */
function unread(port: number, key: string, localAddress: string, count: number, path: string, body: unknown): Extract<AttackCommand, { kind: "requests" }> {
  return { kind: "requests", port, localAddress, key, count, path, body: JSON.stringify(body), window: 64, stopReading: true };
}

const LARGE_EMBEDDINGS = { model: "embed-large", input: Array.from({ length: 2048 }, (_, i) => `text ${i}`), encoding_format: "float" };
// ignore_eos: the simulated model would otherwise end after a sentence.
const SLOW_STREAM = { model: "slow", messages: [{ role: "user", content: "Tell me a long story." }], max_tokens: 4000, stream: true, ignore_eos: true };

async function main(): Promise<void> {
  // A slow model for the streams (5 tokens a second), so that they last the whole run; the normal client's
  // model stays fast.
  const fast = ["--ttft-ms", "1", "--prefill-time-per-token-ms", "0"];
  const slow = await spawnSimulator(["--model", "slow", "--kind", "generate", "--max-num-seqs", "4096", "--itl-ms", "200", ...fast]);
  const large = await spawnSimulator(["--model", "embed-large", "--kind", "embed", "--embedding-dimensions", "1152", "--max-num-seqs", "64", "--itl-ms", "0", ...fast]);
  const gw = await startGatewayProcess({
    keyNames: ["client", ...ATTACK_KEYS],
    fileLimit: 65_536,
    settings: { logLevel: "warn" },
    extraModels: [
      { id: "slow", url: slow.url },
      { id: "embed-large", url: large.url, category: "embedder" },
    ],
  });
  const results: PhaseResult[] = [];
  const clients: HostileClient[] = [];
  let streamCost = NaN;
  const attackers = async (n: number) => {
    const started = await Promise.all(Array.from({ length: n }, () => HostileClient.start()));
    clients.push(...started);
    return started;
  };
  const streams = (all: HostileClient[], perKey: number) =>
    Promise.all(all.map((c, i) => c.attack(unread(gw.port, gw.keys[ATTACK_KEYS[i]!]!, `127.0.4.${i + 1}`, perKey, "/v1/chat/completions", SLOW_STREAM))));
  try {
    // Warm-up: code paths compiled, pools and buffers at their working size.
    const warm = normalClient(gw.url, gw.keys.client!);
    for (let i = 0; i < 300; i++) await warm.chat(i % 3 === 0 ? { stream: true } : {});
    await warm.close();
    await new Promise((r) => setTimeout(r, 2000));
    results.push(await phase("baseline", gw, { served: 300, tried: 300, latencies: [], failures: [] }));

    // Slow streams near the cap of requests in progress, right after the baseline: what they add is theirs.
    const streamers = await attackers(ATTACK_KEYS.length);
    const opened = streams(streamers, STREAMS_PER_KEY);
    const duringStreams = await serveWhile(gw, HOLD_MS * 2);
    results.push(await phase("streams", gw, duringStreams, mergeReports(await opened)));
    streamCost = (results[1]!.rss - results[0]!.rss) / (STREAMS_PER_KEY * ATTACK_KEYS.length);
    await Promise.all(streamers.map((c) => c.release()));
    await new Promise((r) => setTimeout(r, 2000));

    // 2,000 unfinished uploads from one client and key.
    const [uploader] = await attackers(1);
    const uploads = uploader!.attack({ kind: "uploads", port: gw.port, localAddress: "127.0.0.10", key: gw.keys.attacker!, count: UPLOADS, size: 4 * MiB, window: 256 });
    const duringUploads = await serveWhile(gw, HOLD_MS);
    results.push(await phase("uploads", gw, duringUploads, await uploads));
    await uploader!.release();

    // 30,000 idle connections.
    const addresses = Array.from({ length: 30 }, (_, i) => `127.0.1.${i + 1}`);
    const flood = idleFlood(gw.port, IDLE, addresses);
    const whileOpening = await serveWhile(gw, HOLD_MS);
    const idle = await flood;
    clients.push(...idle.clients);
    // And once every connection the flood could open is open (or was closed by the caps).
    results.push(await phase("idle", gw, combine(whileOpening, await serveWhile(gw, HOLD_MS)), idle.report));
    await Promise.all(idle.clients.map((c) => c.release()));

    // Large answers nobody reads, all from one key.
    const [reader] = await attackers(1);
    const answers = reader!.attack(unread(gw.port, gw.keys.attacker!, "127.0.0.11", ANSWERS, "/v1/embeddings", LARGE_EMBEDDINGS));
    const duringAnswers = await serveWhile(gw, HOLD_MS * 2);
    results.push(await phase("answers", gw, duringAnswers, await answers));
    await reader!.release();


    // Everything at once: body memory full (four keys x 16 MiB of stalled uploads), connections full, the
    // unread answers and the streams (each key under its share of requests in progress), and the normal client
    // parsing worst-case bodies back to back.
    const worstClients = await attackers(ATTACK_KEYS.length);
    const stalled = Promise.all(
      worstClients.map((c, i) => c.attack({ kind: "uploads", port: gw.port, localAddress: `127.0.2.${i + 1}`, key: gw.keys[ATTACK_KEYS[i]!]!, count: 8, size: 4 * MiB, window: 8 })),
    );
    const [worstReader] = await attackers(1);
    const worstAnswers = worstReader!.attack(unread(gw.port, gw.keys.attacker!, "127.0.0.12", ANSWERS, "/v1/embeddings", LARGE_EMBEDDINGS));
    const worstStreams = streams(await attackers(ATTACK_KEYS.length), STREAMS_PER_KEY - 8);
    const worstIdle = idleFlood(gw.port, 9000, Array.from({ length: 9 }, (_, i) => `127.0.3.${i + 1}`));
    const body = amplifyingBody();
    const duringWorst = await serveWhile(gw, HOLD_MS * 2, () => body);
    const worstReports = [...(await stalled), await worstAnswers, ...(await worstStreams), (await worstIdle).report];
    clients.push(...(await worstIdle).clients);
    results.push(await phase("worst", gw, duringWorst, mergeReports(worstReports)));
  } finally {
    await Promise.all(clients.map((c) => c.release().catch(() => undefined)));
    await gw.stop();
    await stopAll([slow.proc, large.proc]);
  }

  const baseline = results[0]!.rss;
  const peak = Math.max(...results.map((r) => r.peak));
  const mb = (b: number) => fmt(b / MiB, 0);
  const lines = [
    `Hostile clients, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, ${mb(totalmem())} MiB RAM, ${gatewayRuntime()}`,
    `Documented bound: ${mb(DOCUMENTED_RSS_BOUND_BYTES)} MiB RSS (production defaults)`,
    "",
    "| phase | RSS MiB | peak RSS MiB | peak - baseline MiB | heap used MiB | external MiB | gateway connections | body memory MiB | answer memory MiB | normal client served | p50 ms | p99 ms | attackers saw |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...results.map(
      (r) =>
        `| ${r.phase} | ${mb(r.rss)} | ${mb(r.peak)} | ${mb(r.peak - baseline)} | ${mb(r.heapUsed)} | ${mb(r.external)} | ${r.connections} | ${fmt(r.bodyMemory / MiB, 1)} | ${fmt(r.answerMemory / MiB, 1)} | ${r.served}/${r.tried} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${
          r.attack ? `${r.attack.opened} connected, ${r.attack.closedByServer} closed by the gateway, answers ${JSON.stringify(r.attack.codes)}` : ""
        } |`,
    ),
    "",
    `Peak RSS ${mb(peak)} MiB of ${mb(DOCUMENTED_RSS_BOUND_BYTES)} MiB documented (${fmt((100 * peak) / DOCUMENTED_RSS_BOUND_BYTES, 0)}%).`,
    `Each stream in progress added ${fmt(streamCost / 1024, 0)} KiB of RSS (streams phase over baseline).`,
  ];
  console.log(lines.join("\n"));
  const unserved = results.some((r) => r.tried > 0 && r.served < r.tried);
  if (peak > DOCUMENTED_RSS_BOUND_BYTES || unserved) {
    console.error(peak > DOCUMENTED_RSS_BOUND_BYTES ? "FAIL: peak RSS over the documented bound" : "FAIL: the normal client was refused");
    process.exit(1);
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
