/**
 * `npm run bench:wake`: a model at zero woken by its traffic, without a failed request. The local fleet's scale to
 * zero (local/scaler.ts: reserved addresses, simulators started with a load time) behind the production gateway
 * bundle with the image's flags; the scaler reads demand from the gateway's `/metrics`, as KEDA does in the cluster.
 *
 * Phase 1: 50 concurrent requests, half streaming, at a model at zero that loads for 5 s. Phase 2: more than
 * `maxHeld` at once at another (429 `model_saturated` for the excess), and requests at a model whose load outlasts
 * `timeoutMs` (503 `model_not_ready`; a stream gets it as an SSE error event). Exits 1 when an acceptance figure fails.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, stopAll } from "../scripts/lib/processes";
import { startLocalFleet, type LocalModel, type RunningFleet } from "../local/fleet";
import { gatewayRuntime, startBundledGateway } from "./lib/bundled-gateway";
import { scrapedDemand } from "./lib/scraped-demand";
import { fmt, percentile } from "./lib/stats";
import { runMain } from "./lib/run-main";

const KEY = "sk-bench-0123456789abcdefghijklmnop";
const LOAD_MS = 5000;
const CONCURRENCY = 50;
/** npm start's health interval: how soon the gateway sees a replica that finished loading. */
const HEALTH_INTERVAL_MS = 500;

/** A model at zero as the local fleet runs one (an 8B-like latency profile), with the bench's wake settings. */
function coldModel(id: string, loadMs: number, wake: { timeoutMs: number; maxHeld: number }): LocalModel {
  return {
    id,
    category: "generative",
    ownedBy: "ai-platform",
    replicas: 1,
    maxConcurrency: 64,
    simulator: { maxNumSeqs: 64, latency: { timeToFirstTokenMs: 30, interTokenLatencyMs: 12, prefillTimePerTokenMs: 0 } },
    scaleToZero: { loadMs, idleStopMs: 600_000 },
    wake,
  };
}

const MODELS = {
  wake: coldModel("wake-5s", LOAD_MS, { timeoutMs: 60_000, maxHeld: 64 }),
  capped: coldModel("wake-capped", LOAD_MS, { timeoutMs: 60_000, maxHeld: 8 }),
  slow: coldModel("wake-too-slow", 8000, { timeoutMs: 2000, maxHeld: 64 }),
};

interface Outcome {
  status: number;
  /** The error code, from the envelope or a stream's error event. */
  code?: string;
  /** ms from sending to the first `: keep-alive` (streams) and to the first token (stream) or whole answer. */
  keepAliveMs?: number;
  firstTokenMs?: number;
  ok: boolean;
}

async function request(base: string, model: string, stream: boolean): Promise<Outcome> {
  const sent = performance.now();
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Wake up and say hello." }], max_tokens: 8, stream }),
  });
  if (!stream || res.status !== 200) {
    const body = (await res.json()) as { error?: { code?: string }; choices?: unknown[] };
    const at = performance.now() - sent;
    return { status: res.status, code: body.error?.code, firstTokenMs: res.status === 200 ? at : undefined, ok: res.status === 200 && (body.choices?.length ?? 0) > 0 };
  }
  const out: Outcome = { status: 200, ok: false };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    const at = performance.now() - sent;
    if (out.keepAliveMs === undefined && text.includes(": keep-alive")) out.keepAliveMs = at;
    if (out.firstTokenMs === undefined && /^data: \{"id"/m.test(text)) out.firstTokenMs = at;
  }
  const error = /^data: (\{"error".*)$/m.exec(text);
  if (error) out.code = (JSON.parse(error[1]!) as { error: { code?: string } }).error.code;
  out.ok = !error && text.includes("data: [DONE]");
  return out;
}

const all = (base: string, model: string, n: number, streaming: (i: number) => boolean) => Promise.all(Array.from({ length: n }, (_, i) => request(base, model, streaming(i))));

async function main(): Promise<void> {
  const procs: ChildProcess[] = [];
  let fleet: RunningFleet | undefined;
  let view: ReturnType<typeof scrapedDemand> | undefined;
  const failures: string[] = [];
  try {
    fleet = await startLocalFleet(Object.values(MODELS), (line) => process.stderr.write(`local scaler: ${line}\n`));
    const dir = mkdtempSync(join(tmpdir(), "bench-wake-"));
    const catalog = join(dir, "catalog.json");
    writeFileSync(catalog, JSON.stringify(fleet.catalog));
    const metricsPort = await freePort();
    const gw = await startBundledGateway({
      catalog,
      key: KEY,
      env: { GATEWAY_METRICS_PORT: String(metricsPort), GATEWAY_HEALTH_INTERVAL_MS: String(HEALTH_INTERVAL_MS), LOG_LEVEL: "warn" },
    });
    procs.push(gw.proc);
    view = scrapedDemand(`http://127.0.0.1:${metricsPort}/metrics`);
    fleet.scaler.start(view);
    process.stderr.write(`${gatewayRuntime()}\n`);

    // Phase 1: half the requests stream (every other one).
    process.stderr.write(`phase 1: ${CONCURRENCY} requests at ${MODELS.wake.id} (at zero, loads in ${LOAD_MS / 1000} s)\n`);
    const wake = await all(gw.url, MODELS.wake.id, CONCURRENCY, (i) => i % 2 === 0);
    const failed = wake.filter((o) => !o.ok);
    const keepAlive = wake.filter((_, i) => i % 2 === 0).map((o) => o.keepAliveMs ?? Number.POSITIVE_INFINITY);
    const overLoad = (list: Outcome[]) => list.map((o) => (o.firstTokenMs ?? Number.POSITIVE_INFINITY) - LOAD_MS).sort((a, b) => a - b);
    const streamsOver = overLoad(wake.filter((_, i) => i % 2 === 0));
    const answersOver = overLoad(wake.filter((_, i) => i % 2 === 1));
    const metricNames = [...view.seen].sort();

    // Phase 2: the queue cap and the wake timeout, side by side.
    const maxHeld = MODELS.capped.wake!.maxHeld!;
    const capSent = maxHeld + 12;
    process.stderr.write(`phase 2: ${capSent} requests at ${MODELS.capped.id} (maxHeld ${maxHeld}); 10 at ${MODELS.slow.id} (loads in 8 s, timeoutMs 2000)\n`);
    const [capped, slow] = await Promise.all([all(gw.url, MODELS.capped.id, capSent, () => false), all(gw.url, MODELS.slow.id, 10, (i) => i % 2 === 0)]);
    const saturated = capped.filter((o) => o.status === 429 && o.code === "model_saturated").length;
    const cappedServed = capped.filter((o) => o.ok).length;
    const notReady503 = slow.filter((o, i) => i % 2 === 1 && o.status === 503 && o.code === "model_not_ready").length;
    const notReadyEvents = slow.filter((o, i) => i % 2 === 0 && o.status === 200 && o.code === "model_not_ready").length;

    const maxKeepAlive = Math.max(...keepAlive);
    const maxOver = Math.max(streamsOver.at(-1)!, answersOver.at(-1)!);
    if (failed.length > 0) failures.push(`${failed.length} failed requests (${failed.map((o) => `${o.status} ${o.code ?? ""}`).join(", ")})`);
    if (!(maxKeepAlive < 1000)) failures.push(`a stream's first keep-alive came after ${fmt(maxKeepAlive, 0)} ms`);
    if (!(maxOver < 1000)) failures.push(`a first token came ${fmt(maxOver, 0)} ms after the load time`);
    if (saturated !== capSent - maxHeld || cappedServed !== maxHeld) failures.push(`queue cap: ${saturated} × 429 model_saturated and ${cappedServed} served of ${capSent} (expected ${capSent - maxHeld} and ${maxHeld})`);
    if (notReady503 !== 5 || notReadyEvents !== 5) failures.push(`wake timeout: ${notReady503}/5 × 503 model_not_ready, ${notReadyEvents}/5 streams with a model_not_ready event`);

    console.log(`${gatewayRuntime()}; health checks every ${HEALTH_INTERVAL_MS} ms; load average ${loadavg()[0]!.toFixed(1)}\n`);
    console.log("| figure | value |");
    console.log("|---|---|");
    console.log(`| phase 1: requests (streaming) / failed | ${CONCURRENCY} (${keepAlive.length}) / ${failed.length} |`);
    console.log(`| stream's first keep-alive, max ms | ${fmt(maxKeepAlive, 0)} |`);
    console.log(`| stream's first token − load time, p50 / max ms | ${fmt(percentile(streamsOver, 50), 0)} / ${fmt(streamsOver.at(-1)!, 0)} |`);
    console.log(`| non-streaming answer − load time, p50 / max ms | ${fmt(percentile(answersOver, 50), 0)} / ${fmt(answersOver.at(-1)!, 0)} |`);
    console.log(`| phase 2: ${capSent} at maxHeld ${maxHeld}: 429 \`model_saturated\` / served | ${saturated} / ${cappedServed} |`);
    console.log(`| load 8 s, timeoutMs 2000: 503 \`model_not_ready\` / streams' error events | ${notReady503}/5 / ${notReadyEvents}/5 |`);
    console.log(`\ndemand read from: ${metricNames.join(", ")}`);
    if (failures.length > 0) {
      console.log(`\nFAILED:\n- ${failures.join("\n- ")}`);
      process.exitCode = 1;
    }
  } finally {
    view?.stop();
    await stopAll(procs);
    await fleet?.close();
  }
}

runMain(main);
