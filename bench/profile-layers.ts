/**
 * `npm run bench:layers`: where the gateway's CPU goes, by layer of the request path. The production bundle runs
 * under V8's sampling profiler (--cpu-prof) while 16 clients send non-streaming chat requests, then streaming ones,
 * back to back to a zero-latency simulator; each sample's frame is mapped through the bundle's source map to its
 * TypeScript file or package, and self time is summed by layer. The table goes to docs/benchmarks.md.
 */
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { join } from "node:path";
import { stopAll } from "../scripts/lib/processes";
import { startBundledGateway } from "./lib/bundled-gateway";
import { closedLoop } from "./lib/closed-loop";
import { pinning } from "./lib/proc-stats";
import { startZeroLatencyModel } from "./lib/zero-latency-model";
import { fmt } from "./lib/stats";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const KEY = "sk-bench-0123456789abcdefghijklmnop";
const MODEL = "bench-model";
const body = (stream: boolean) =>
  JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Benchmark prompt about tides and harbours." }], max_tokens: 16, temperature: 0, stream, ignore_eos: true });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Layers in the order a request meets them; the first rule that matches a frame's source names its layer. */
const LAYERS: [string, (source: string, fn: string) => boolean][] = [
  ["idle", (s, fn) => fn === "(idle)"],
  ["garbage collection", (s, fn) => fn === "(garbage collector)"],
  ["Node HTTP server, sockets, streams (node:internal)", (s) => s.startsWith("node:")],
  ["Express and its router", (s) => /node_modules\/(express|router|finalhandler|path-to-regexp|send|serve-static|on-finished|parseurl|qs|accepts|type-is|content-type|mime|depd|debug|body-parser|raw-body)\//.test(s)],
  ["undici (upstream HTTP client)", (s) => s.includes("node_modules/undici/")],
  ["logging (pino)", (s) => /node_modules\/(pino|sonic-boom|fast-redact|quick-format-unescaped|atomic-sleep|on-exit-leak-free|thread-stream|safe-stable-stringify)/.test(s)],
  ["metrics (prom-client)", (s) => s.includes("node_modules/prom-client/") || s.includes("node_modules/tdigest/") || s.includes("node_modules/bintrees/")],
  ["validation (zod)", (s) => s.includes("node_modules/zod/")],
  ["SSE parsing (eventsource-parser)", (s) => s.includes("node_modules/eventsource-parser/")],
  ["gateway: transport, front, admission, body (http/)", (s) => s.includes("gateway/src/http/")],
  ["gateway: auth (auth/)", (s) => s.includes("gateway/src/auth/")],
  ["gateway: limits (limits/)", (s) => s.includes("gateway/src/limits/")],
  ["gateway: validation, endpoint specs (api/, endpoints/)", (s) => s.includes("gateway/src/api/") || s.includes("gateway/src/endpoints/")],
  ["gateway: routing, sending (upstream/)", (s) => s.includes("gateway/src/upstream/")],
  ["gateway: relay (relay/)", (s) => s.includes("gateway/src/relay/")],
  ["gateway: accounting, metrics, logs (observability/)", (s) => s.includes("gateway/src/observability/")],
  ["gateway: routes, app (routes/, app.ts)", (s) => s.includes("gateway/src/")],
  ["other packages", (s) => s.includes("node_modules/")],
  ["V8 and native (program, builtins)", () => true],
];

function layerOf(source: string, fn: string): string {
  return LAYERS.find(([, match]) => match(source, fn))![0];
}

/**
 * Self samples by layer, and by function: each sample's leaf frame, its bundle position mapped to the source it
 * came from.
 */
export function selfSamples(profile: Profile, map: SourceMap, bundleName: string): { layers: Map<string, number>; functions: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const seen = new Map<number, { layer: string; fn: string }>();
  const layers = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const id of profile.samples) {
    let where = seen.get(id);
    if (where === undefined) {
      const f = byId.get(id)!.callFrame;
      let source = f.url;
      let line = f.lineNumber;
      if (f.url.endsWith(bundleName)) {
        const entry = map.findEntry(f.lineNumber, f.columnNumber) as { originalSource?: string; originalLine?: number };
        source = (entry.originalSource ?? "").replace(/^(\.\.\/)+/, "");
        line = entry.originalLine ?? -1;
      }
      where = { layer: layerOf(source, f.functionName), fn: `${f.functionName || "(anonymous)"} ${source}:${line + 1}` };
      seen.set(id, where);
    }
    layers.set(where.layer, (layers.get(where.layer) ?? 0) + 1);
    functions.set(where.fn, (functions.get(where.fn) ?? 0) + 1);
  }
  return { layers, functions };
}

async function main(): Promise<void> {
  const pin = pinning();
  const sim = await startZeroLatencyModel(MODEL, pin.rest, "bench-layers-");
  const { dir, catalog } = sim;
  const profDir = join(dir, "prof");
  const gw = await startBundledGateway({ catalog, key: KEY, prefix: pin.proxy, nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval=250"] });
  const headers = { authorization: `Bearer ${KEY}` };
  let requests = 0;
  try {
    process.stderr.write(`${pin.description}\nprofiling ${SECONDS}s of non-streaming, then ${SECONDS}s of streaming chat...\n`);
    for (const stream of [false, true]) {
      const r = await closedLoop({ base: gw.url, path: "/v1/chat/completions", body: body(stream), measure: "full", seconds: SECONDS, concurrency: 16, headers });
      requests += Math.round(r.rps * SECONDS);
    }
  } finally {
    gw.proc.kill("SIGTERM");
    if (gw.proc.exitCode === null) await once(gw.proc, "exit");
    await stopAll([sim.proc]);
  }
  const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no profile written");
  const profile = JSON.parse(readFileSync(join(profDir, file), "utf8")) as Profile;
  const map = new SourceMap(JSON.parse(readFileSync(`${gw.bundle}.map`, "utf8")) as SourceMapPayload);
  const { layers: counts, functions } = selfSamples(profile, map, "serve.js");
  const busy = [...counts].filter(([l]) => l !== "idle").reduce((s, [, n]) => s + n, 0);
  const rows = [...counts].filter(([l]) => l !== "idle").sort((a, b) => b[1] - a[1]);
  const out = [`CPU of the gateway by layer (self time, ${busy} samples of 250 µs over ${requests} requests, half streaming); ${new Date().toISOString().slice(0, 16)}Z`, "", "| layer | share of busy CPU | µs per request |", "|---|---|---|"];
  for (const [layer, n] of rows) out.push(`| ${layer} | ${fmt((n / busy) * 100, 1)} % | ${fmt((n * 250) / requests, 1)} |`);
  process.stdout.write(out.join("\n") + "\n");
  // The heaviest functions, for reading the table (not part of it).
  const top = [...functions].filter(([f]) => !f.startsWith("(idle)")).sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_TOP ?? 30));
  process.stderr.write(`\nheaviest functions (self):\n${top.map(([f, n]) => `${fmt((n / busy) * 100, 1).padStart(5)} %  ${f}`).join("\n")}\n`);
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
