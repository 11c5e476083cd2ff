import { Writable } from "node:stream";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import OpenAI from "openai";
import { startSimulator, type RunningSimulator, type SimulatorConfigInput } from "../../../simulator/src";
import { generateApiKey, hashApiKey, type ApiKeyEntry } from "../../src/auth/api-keys";
import type { CatalogInput, ModelCategory, RoutingSchema } from "../../src/config/catalog";
import type { z } from "zod";

type RoutingInput = z.input<typeof RoutingSchema>;
import { parseCatalog } from "../../src/config/load-catalog";
import { settingsFromEnv, type GatewaySettingsInput } from "../../src/config/settings";
import { createLogger } from "../../src/observability/logger";
import { startGateway, type RunningGateway } from "../../src/server";

export interface HarnessModel {
  id: string;
  category?: ModelCategory;
  replicas?: number;
  maxConcurrency?: number;
  upstreamModel?: string;
  /** Routing settings of the model (strategy, saturation thresholds, wait queue). */
  routing?: Partial<RoutingInput>;
  /** Extra replica URLs that are not simulators (e.g. a closed port). */
  extraEndpoints?: string[];
  sim?: Omit<SimulatorConfigInput, "models" | "kind">;
  /**
   * LoRA adapters: the catalog's lora block (paths default to /adapters/<id>); the simulators get --enable-lora,
   * runtime loading, the preloaded ones as --lora-modules, and `sim.lora` (load time, faults) on top.
   */
  lora?: { maxLoras: number; adapters: { id: string; path?: string; loading?: "preload" | "on-demand" }[] };
}

export interface Harness {
  gateway: RunningGateway;
  sims: Record<string, RunningSimulator[]>;
  key: string;
  baseURL: string;
  /** Every JSON line the gateway logged. */
  logs: Record<string, unknown>[];
  rawLogs: string[];
  client(opts?: Partial<ConstructorParameters<typeof OpenAI>[0]>): OpenAI;
  /** POSTs/GETs with the harness key unless headers override it. */
  fetch(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/** Simulated replicas and a gateway in front of them, all real servers on loopback. */
export interface HarnessOptions {
  settings?: GatewaySettingsInput;
  /** Where the gateway's spans go (traces on with an in-memory exporter). */
  traceExporter?: SpanExporter;
  /** More key entries besides the harness key (named "test-key"). */
  extraKeys?: ApiKeyEntry[];
  /** Rewrites the generated catalog, e.g. to put a model in dns or pool mode. */
  mapCatalog?: (catalog: CatalogInput) => CatalogInput;
  /** Fixed harness key (e.g. shared by two gateways); default: a fresh one. */
  key?: string;
  /** Limits of the harness key. */
  keyLimits?: { rpm?: number; tpm?: number };
  /** How often GATEWAY_TLS_CERT_FILE is read again, ms. */
  tlsCertRereadMs?: number;
}

export async function startHarness(models: HarnessModel[], options: HarnessOptions = {}): Promise<Harness> {
  const { settings = {}, extraKeys = [], mapCatalog = (c: CatalogInput) => c } = options;
  const sims: Record<string, RunningSimulator[]> = {};
  const catalog: CatalogInput = { models: [] };
  for (const m of models) {
    const category = m.category ?? "generative";
    const list: RunningSimulator[] = [];
    const lora = m.lora && {
      maxLoras: m.lora.maxLoras,
      adapters: m.lora.adapters.map((a) => ({ id: a.id, path: a.path ?? `/adapters/${a.id}`, loading: a.loading ?? ("on-demand" as const) })),
    };
    const simLora = lora && {
      enabled: true,
      runtimeUpdating: true,
      maxLoras: lora.maxLoras,
      loadTimeMs: 0,
      swapInTimeMs: 0,
      modules: lora.adapters.filter((a) => a.loading === "preload").map((a) => ({ name: a.id, path: a.path })),
      ...m.sim?.lora,
    };
    for (let i = 0; i < (m.replicas ?? 1); i++) {
      list.push(
        await startSimulator({
          latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 },
          ...m.sim,
          ...(simLora ? { lora: simLora } : {}),
          models: [m.upstreamModel ?? m.id],
          kind: category === "embedder" ? "embed" : "generate",
          podName: m.sim?.podName ?? `${m.id}-${i}`,
        }),
      );
    }
    sims[m.id] = list;
    catalog.models.push({
      id: m.id,
      category,
      upstreamModel: m.upstreamModel,
      maxConcurrency: m.maxConcurrency ?? 16,
      routing: m.routing,
      ...(lora ? { lora } : {}),
      upstream: { mode: "endpoints", endpoints: [...list.map((s) => ({ url: s.url })), ...(m.extraEndpoints ?? []).map((url) => ({ url }))] },
    });
  }

  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line) continue;
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      cb();
    },
  });

  const key = options.key ?? generateApiKey();
  const gateway = await startGateway({
    settings: settingsFromEnv({}, { host: "127.0.0.1", port: 0, metricsPort: 0, healthIntervalMs: 50, healthTimeoutMs: 500, drainDelayMs: 0, shutdownGraceMs: 2000, ...settings }),
    catalog: parseCatalog(mapCatalog(catalog)),
    keys: [{ name: "test-key", sha256: hashApiKey(key), ...options.keyLimits }, ...extraKeys],
    traceExporter: options.traceExporter,
    tlsCertRereadMs: options.tlsCertRereadMs,
    log: createLogger("info", sink),
  });
  const baseURL = `${gateway.url}/v1`;
  // The gateway's first health probe can time out on a loaded machine, leaving a replica out until the next
  // one: tests start once every simulator is seen ready (a deliberately bad extra endpoint is not waited for).
  const simUrls = new Set(Object.values(sims).flat().map((s) => s.url));
  await waitFor(() => gateway.registry.replicas().every((r) => !simUrls.has(r.url) || r.ready), 10_000, "the simulators to be ready").catch(() => undefined);

  return {
    gateway,
    sims,
    key,
    baseURL,
    logs,
    rawLogs,
    client: (opts = {}) => new OpenAI({ baseURL, apiKey: key, maxRetries: 0, ...opts }),
    fetch: (path, init = {}) => {
      const { json, headers, ...rest } = init;
      return fetch(`${gateway.url}${path}`, {
        method: json === undefined ? (rest.method ?? "GET") : "POST",
        ...rest,
        headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { "content-type": "application/json" }), ...(headers as Record<string, string>) },
        body: json === undefined ? rest.body : JSON.stringify(json),
      });
    },
    close: async () => {
      await gateway.close();
      await Promise.all(Object.values(sims).flat().map((s) => s.close()));
    },
  };
}

/** Polls until the predicate holds (for state that changes asynchronously, like health checks). */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: "user", content: "Say something about the sea." }],
  ...extra,
});
