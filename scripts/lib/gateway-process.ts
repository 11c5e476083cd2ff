import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { startSimulator, type RunningSimulator } from "../../simulator/src";
import { generateApiKey, hashApiKey } from "../../gateway/src/auth/api-keys";
import { SETTINGS_ENV, type GatewaySettingsInput } from "../../gateway/src/config/settings";
import { IMAGE_NODE_FLAGS } from "../../gateway/src/config/memory-bound";
import { buildGateway, BUNDLE } from "../build-gateway";
import { freePort, ROOT, spawnWithFileLimit } from "./processes";

/**
 * The production gateway as a process of its own, in front of simulated model servers: what a hostile client
 * meets, with the gateway's own memory (RSS read from /proc) and log lines. By default it runs the artifact the
 * image ships (the esbuild bundle of `gateway/src/cli/serve.ts`, built once per process), so memory figures are
 * the production process's, without a TypeScript loader in it.
 */
export interface GatewayProcess {
  url: string;
  port: number;
  metricsUrl: string;
  /** The operations listener: metrics and probes. */
  opsUrl: string;
  proc: ChildProcess;
  /** Key name -> plaintext key. */
  keys: Record<string, string>;
  /** Every JSON line the gateway wrote so far. */
  logs(): Record<string, unknown>[];
  rawLogs(): string[];
  /** Resident memory now and at its peak (VmRSS, VmHWM), in bytes. */
  memory(): { rss: number; peak: number };
  /** A gauge or counter from the gateway's /metrics (summed over labels). */
  metric(name: string): Promise<number>;
  /** Sends SIGTERM and waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  sims: RunningSimulator[];
}

export interface GatewayProcessOptions {
  /** Settings as the environment carries them; production defaults otherwise. */
  settings?: Partial<Record<keyof GatewaySettingsInput, string | number>>;
  /** Names of API keys to mint (each gets its own key). */
  keyNames?: string[];
  /** Plaintext keys by name to use instead of minting (several gateways sharing one key set). */
  keys?: Record<string, string>;
  /** Per-key limits of the keys file, by key name. */
  keyLimits?: Record<string, { rpm?: number; tpm?: number; maxConcurrent?: number }>;
  /** Raise the gateway's open-file limit to this, as far as the machine allows (its connection cap clamps to it). */
  fileLimit?: number;
  /** `bundle` (default): dist's serve.js; `source`: serve.ts through tsx (no build step). */
  entry?: "bundle" | "source";
  /** The chat model's concurrency cap and simulated time per token (many long streams at once). */
  chat?: { maxConcurrency?: number; interTokenLatencyMs?: number };
  /** Dimensions of the simulated embedder (large answers). */
  embedDimensions?: number;
  /** More models served by an address of the caller's (pool mode: one address, passively checked; an embedder, endpoints mode); generative unless said. */
  extraModels?: { id: string; url: string; upstreamModel?: string; category?: "generative" | "embedder" }[];
}

let bundled: Promise<string> | undefined;
/** Builds the gateway bundle into a temporary directory, once per process. */
function bundlePath(): Promise<string> {
  bundled ??= buildGateway(mkdtempSync(join(tmpdir(), "gateway-bundle-"))).then((b) => join(b.outDir, BUNDLE));
  return bundled;
}

/** /proc/<pid>/status fields in bytes (Linux). */
export function procMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

export async function startGatewayProcess(options: GatewayProcessOptions = {}): Promise<GatewayProcess> {
  const sims = [
    await startSimulator({
      models: ["chat"],
      kind: "generate",
      maxNumSeqs: options.chat?.maxConcurrency ?? 16,
      latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: options.chat?.interTokenLatencyMs ?? 0, prefillTimePerTokenMs: 0 },
    }),
    await startSimulator({
      models: ["embed"],
      kind: "embed",
      embeddingDimensions: options.embedDimensions ?? 384,
      latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 },
    }),
  ];
  const dir = mkdtempSync(join(tmpdir(), "gateway-process-"));
  const keys: Record<string, string> = { ...options.keys };
  if (!options.keys) for (const name of options.keyNames ?? ["client", "attacker"]) keys[name] = generateApiKey();
  const entries = Object.entries(keys).map(([name, key]) => ({ name, sha256: hashApiKey(key), ...options.keyLimits?.[name] }));
  writeFileSync(join(dir, "keys.json"), JSON.stringify({ keys: entries }));
  writeFileSync(
    join(dir, "catalog.json"),
    JSON.stringify({
      models: [
        { id: "chat", category: "generative", maxConcurrency: options.chat?.maxConcurrency ?? 16, upstream: { mode: "endpoints", endpoints: [{ url: sims[0]!.url }] } },
        { id: "embed", category: "embedder", upstream: { mode: "endpoints", endpoints: [{ url: sims[1]!.url }] } },
        // An embedder cannot sit behind an InferencePool (the catalog refuses it): its address is its one endpoint.
        ...(options.extraModels ?? []).map((m) => ({
          id: m.id,
          category: m.category ?? "generative",
          upstreamModel: m.upstreamModel,
          upstream: m.category === "embedder" ? { mode: "endpoints", endpoints: [{ url: m.url }] } : { mode: "pool", url: m.url },
        })),
      ],
    }),
  );

  const port = await freePort();
  const metricsPort = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    [SETTINGS_ENV.catalogFile]: join(dir, "catalog.json"),
    [SETTINGS_ENV.keysFile]: join(dir, "keys.json"),
    [SETTINGS_ENV.host]: "127.0.0.1",
    [SETTINGS_ENV.port]: String(port),
    [SETTINGS_ENV.metricsPort]: String(metricsPort),
    [SETTINGS_ENV.healthIntervalMs]: "200",
    [SETTINGS_ENV.drainDelayMs]: "0",
    [SETTINGS_ENV.shutdownGraceMs]: "1000",
  };
  for (const [k, v] of Object.entries(options.settings ?? {})) env[SETTINGS_ENV[k as keyof typeof SETTINGS_ENV]] = String(v);

  // The image's Node flags (gateway/Dockerfile: heap caps), so memory behaves as in production.
  const args = options.entry === "source" ? [...IMAGE_NODE_FLAGS, "--import", "tsx", "gateway/src/cli/serve.ts"] : [...IMAGE_NODE_FLAGS, await bundlePath()];
  const spawnOptions = { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] } satisfies SpawnOptions;
  const proc = options.fileLimit ? spawnWithFileLimit(options.fileLimit, process.execPath, args, spawnOptions) : spawn(process.execPath, args, spawnOptions);
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  let partial = "";
  proc.stdout!.on("data", (d: Buffer) => {
    const lines = (partial + d.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line) continue;
      rawLogs.push(line);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ unparseable: line });
      }
    }
  });
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString("utf8")));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`gateway exited with ${proc.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`gateway did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    url,
    port,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    opsUrl: `http://127.0.0.1:${metricsPort}`,
    proc,
    keys,
    sims,
    logs: () => logs,
    rawLogs: () => rawLogs,
    memory: () => procMemory(proc.pid!),
    metric: async (name) => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      let sum = 0;
      for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))) sum += Number(m[1]);
      return sum;
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = once(proc, "exit");
        proc.kill("SIGTERM");
        await exited;
      }
      await Promise.all(sims.map((s) => s.close()));
      return proc.exitCode;
    },
  };
}

/** A well-behaved client on its own source address (Linux loopback routes all of 127/8). */
export function normalClient(url: string, key: string, localAddress = "127.0.0.2") {
  // undici takes the source address as a client option (inside `connect` it is overridden).
  const agent = new Agent({ localAddress, connect: { timeout: 10_000 }, connections: 8 });
  return {
    /** A small chat completion; resolves with the status and whether the body was a completion. */
    async chat(extra: Record<string, unknown> = {}): Promise<{ status: number; ok: boolean; ms: number; text: string }> {
      const started = performance.now();
      try {
        const res = await request(`${url}/v1/chat/completions`, {
          method: "POST",
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Say something about the sea." }], max_tokens: 4, ...extra }),
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        const text = await res.body.text();
        return { status: res.statusCode, ok: res.statusCode === 200 && text.includes('"choices"'), ms: performance.now() - started, text };
      } catch (err) {
        return { status: 0, ok: false, ms: performance.now() - started, text: (err as Error).message };
      }
    },
    close: () => agent.close(),
  };
}
