/**
 * `npm run bench:soak`: minutes of mixed traffic through the gateway process while model servers fail in
 * every way they do (5% 500s, 5% 429s, a replica SIGKILLed and restarted every 20 s, streams the client
 * abandons) plus a share of bad requests. Checks that every request ends in a success or an error envelope
 * (an SSE error event and [DONE] once a stream started) and that the gateway's memory stays flat:
 * heap and RSS read from its own /metrics, warm-up versus end.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { Agent, request } from "undici";
import { freePort, spawnGateway, spawnSimulator, stopAll } from "../scripts/lib/processes";
import { fmt } from "./lib/stats";
import { runMain } from "./lib/run-main";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const KEY = "sk-soak-0123456789abcdefghijklmnopqrstu";
const SIM = ["--ttft-ms", "5", "--itl-ms", "5", "--prefill-time-per-token-ms", "0.01", "--max-num-seqs", "16"];

type Outcome = "ok" | "envelope" | "stream-error-event" | "client-abort" | "VIOLATION";

function isEnvelope(text: string): boolean {
  try {
    const e = (JSON.parse(text) as { error?: Record<string, unknown> }).error;
    return !!e && typeof e.message === "string" && typeof e.type === "string" && "param" in e && (e.code === null || typeof e.code === "string");
  } catch {
    return false;
  }
}

async function one(agent: Agent, base: string, kind: number, violations: string[]): Promise<Outcome> {
  const chat = (extra: Record<string, unknown>) => ({ model: "chat", messages: [{ role: "user", content: `soak ${kind}` }], max_tokens: 24, ...extra });
  const cases: { path: string; body: unknown; key?: string; abort?: boolean }[] = [
    { path: "/v1/chat/completions", body: chat({}) },
    { path: "/v1/chat/completions", body: chat({ stream: true }) },
    { path: "/v1/chat/completions", body: chat({ stream: true, stream_options: { include_usage: true } }) },
    { path: "/v1/embeddings", body: { model: "embed", input: ["a", "b"] } },
    { path: "/v1/chat/completions", body: chat({ stream: true, max_tokens: 200 }), abort: true },
    { path: "/v1/chat/completions", body: chat({ temperature: 9 }) },
    { path: "/v1/chat/completions", body: chat({ model: "nope" }) },
    { path: "/v1/chat/completions", body: chat({}), key: "sk-wrong" },
  ];
  const c = cases[kind % cases.length]!;
  const ac = new AbortController();
  try {
    const res = await request(`${base}${c.path}`, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: `Bearer ${c.key ?? KEY}`, "content-type": "application/json" },
      body: JSON.stringify(c.body),
      signal: ac.signal,
    });
    if (c.abort && res.statusCode === 200) {
      for await (const _ of res.body) break;
      ac.abort();
      return "client-abort";
    }
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      if (isEnvelope(text) && String(res.headers["content-type"]).startsWith("application/json")) return "envelope";
      violations.push(`${res.statusCode} without envelope: ${text.slice(0, 200)}`);
      return "VIOLATION";
    }
    if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
      if (!text.trimEnd().endsWith("data: [DONE]")) {
        violations.push(`stream without [DONE]: ${text.slice(-200)}`);
        return "VIOLATION";
      }
      const errorEvent = text.split("\n\n").find((e) => e.startsWith('data: {"error"'));
      if (errorEvent) return isEnvelope(errorEvent.slice(6)) ? "stream-error-event" : "VIOLATION";
      return "ok";
    }
    const body = JSON.parse(text) as { choices?: unknown[]; data?: unknown[] };
    if (Array.isArray(body.choices) || Array.isArray(body.data)) return "ok";
    violations.push(`200 without choices/data: ${text.slice(0, 200)}`);
    return "VIOLATION";
  } catch (err) {
    if (c.abort) return "client-abort";
    violations.push(`transport error: ${(err as Error).message}`);
    return "VIOLATION";
  }
}

async function gatewayMemory(metricsUrl: string): Promise<{ heap: number; rss: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN);
  return { heap: read("nodejs_heap_size_used_bytes"), rss: read("process_resident_memory_bytes") };
}

async function main(): Promise<void> {
  const procs: ChildProcess[] = [];
  try {
    const failing500 = await spawnSimulator(["--model", "chat", "--port", "0", ...SIM, "--failure-rate", "0.05", "--failure-status", "500"]);
    const failing429 = await spawnSimulator(["--model", "chat", "--port", "0", ...SIM, "--failure-rate", "0.05", "--failure-status", "429"]);
    const flappingPort = await freePort();
    let flapping = await spawnSimulator(["--model", "chat", "--port", String(flappingPort), ...SIM]);
    const embed = await spawnSimulator(["--model", "embed", "--kind", "embed", "--port", "0", ...SIM]);
    procs.push(failing500.proc, failing429.proc, flapping.proc, embed.proc);

    const dir = mkdtempSync(join(tmpdir(), "soak-"));
    const catalog = join(dir, "catalog.json");
    writeFileSync(
      catalog,
      JSON.stringify({
        models: [
          { id: "chat", category: "generative", upstream: { mode: "endpoints", endpoints: [failing500, failing429, flapping].map((s) => ({ url: s.url })) } },
          { id: "embed", category: "embedder", upstream: { mode: "endpoints", endpoints: [{ url: embed.url }] } },
        ],
      }),
    );
    const gw = await spawnGateway({ GATEWAY_CATALOG: catalog, GATEWAY_API_KEY: KEY, GATEWAY_HEALTH_INTERVAL_MS: "500", LOG_LEVEL: "info" });
    procs.push(gw.proc);
    const metricsUrl = gw.metricsUrl;

    const outcomes: Record<Outcome, number> = { ok: 0, envelope: 0, "stream-error-event": 0, "client-abort": 0, VIOLATION: 0 };
    const violations: string[] = [];
    const agent = new Agent({ connections: CONCURRENCY * 2 });
    const started = Date.now();
    const deadline = started + SECONDS * 1000;
    const memory: { t: number; heap: number; rss: number }[] = [];
    let counter = 0;

    const sampler = setInterval(() => {
      void gatewayMemory(metricsUrl).then((m) => memory.push({ t: (Date.now() - started) / 1000, ...m }), () => undefined);
    }, 5000);
    // Kill the flapping replica for real every 20 s and bring it back on the same port.
    const flapper = (async () => {
      while (Date.now() < deadline - 20_000) {
        await new Promise((r) => setTimeout(r, 20_000));
        flapping.proc.kill("SIGKILL");
        await new Promise((r) => setTimeout(r, 3000));
        flapping = await spawnSimulator(["--model", "chat", "--port", String(flappingPort), ...SIM]);
        procs.push(flapping.proc);
      }
    })();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < deadline) outcomes[await one(agent, gw.url, counter++, violations)]++;
      }),
    );
    clearInterval(sampler);
    await flapper;
    await agent.close();

    const total = Object.values(outcomes).reduce((a, b) => a + b, 0);
    const warm = memory.find((m) => m.t >= Math.min(60, SECONDS / 3)) ?? memory[0];
    const last = memory[memory.length - 1];
    const lines = [
      `Soak: ${SECONDS}s, ${CONCURRENCY} concurrent clients, ${total} requests (${fmt(total / SECONDS, 0)}/s)`,
      "",
      "| outcome | requests |",
      "|---|---|",
      ...Object.entries(outcomes).map(([k, v]) => `| ${k} | ${v} |`),
      "",
      "| gateway memory | after warm-up | end | ratio |",
      "|---|---|---|---|",
      `| heap used MiB | ${fmt((warm?.heap ?? NaN) / 2 ** 20, 1)} | ${fmt((last?.heap ?? NaN) / 2 ** 20, 1)} | ${fmt((last?.heap ?? NaN) / (warm?.heap ?? NaN))} |`,
      `| RSS MiB | ${fmt((warm?.rss ?? NaN) / 2 ** 20, 1)} | ${fmt((last?.rss ?? NaN) / 2 ** 20, 1)} | ${fmt((last?.rss ?? NaN) / (warm?.rss ?? NaN))} |`,
    ];
    if (violations.length) lines.push("", "First violations:", ...violations.slice(0, 10).map((v) => `- ${v}`));
    process.stdout.write(lines.join("\n") + "\n");
    const grew = last && warm ? last.rss / warm.rss : 1;
    if (outcomes.VIOLATION > 0 || grew > 1.5) process.exitCode = 1;
  } finally {
    await stopAll(procs);
  }
}

runMain(main);
