import type { Server } from "node:http";
import { hostname } from "node:os";
import type { AddressInfo } from "node:net";
import { getHeapStatistics } from "node:v8";
import Redis from "ioredis";
import { Agent } from "undici";
import { createApp } from "./app";
import { ApiKeyStore, hashApiKey, type ApiKeyEntry } from "./auth/api-keys";
import { KeysFileReloader } from "./auth/keys-file";
import type { Catalog } from "./config/catalog";
import { rssBoundBytes } from "./config/memory-bound";
import { upstreamAuthorization, type GatewaySettings } from "./config/settings";
import { LingeringClose } from "./http/lingering-close";
import { createOpsServer } from "./http/ops-listener";
import type { ProbeState } from "./http/probes";
import { createTransport } from "./http/transport";
import { KeyedBudget } from "./limits/keyed-budget";
import { RateLimiter } from "./limits/rate-limiter";
import { RedisBuckets } from "./limits/redis-buckets";
import { LocalBudgetCounters } from "./limits/budget-counters";
import { KeyBudgets, type BudgetBaseline } from "./limits/key-budgets";
import { RedisBudgetCounters } from "./limits/redis-budget-counters";
import { LedgerTotals } from "./ledger/ledger-totals";
import { DirLedgerStore, S3LedgerStore } from "./ledger/store";
import { UsageLedger } from "./ledger/usage-ledger";
import { systemClock } from "./context/clock";
import { LogSampler } from "./observability/log-sampler";
import { createLogger, type Logger } from "./observability/logger";
import { GatewayMetrics } from "./observability/metrics";
import { TlsCertificateExpiry } from "./observability/tls-certificate-expiry";
import { RequestTracing } from "./observability/tracing";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { seedUsageSeries } from "./observability/usage-series";
import { responseIdSecret } from "./responses/id-secret";
import { ResponseIds } from "./responses/response-ids";
import { DnsDiscovery } from "./upstream/dns-discovery";
import { HealthChecker } from "./upstream/health-checker";
import { LoadScraper } from "./upstream/load-scraper";
import { AdapterClient } from "./upstream/lora/adapter-client";
import type { AdapterEvents } from "./upstream/lora/pool-adapters";
import type { Replica } from "./upstream/replica";
import { ModelRegistry } from "./upstream/registry";

/** How long the last ledger write of a shutdown may take: within the pod's termination margin (10 s). */
export const LEDGER_CLOSE_TIMEOUT_MS = 5000;

export interface GatewayOptions {
  settings: GatewaySettings;
  catalog: Catalog;
  /** Hashed key entries given directly (tests, embedding); `settings.keysFile` and `settings.apiKey` add to them. */
  keys?: readonly ApiKeyEntry[];
  log?: Logger;
  /** Where spans go instead of the configured OTLP endpoint (tests). */
  traceExporter?: SpanExporter;
  /** How often `settings.tlsCertFile` is read again, ms (tests; default a minute). */
  tlsCertRereadMs?: number;
  /** The wall clock, epoch ms: the ledger's hours and the budgets' periods (tests move it; default Date.now). */
  wallClock?: () => number;
}

export interface RunningGateway {
  url: string;
  port: number;
  metricsUrl: string;
  /** The operations listener (metrics and probes): where the pod's probes should point. */
  opsUrl: string;
  registry: ModelRegistry;
  keys: ApiKeyStore;
  keysReloader?: KeysFileReloader;
  limiter: RateLimiter;
  budget: KeyedBudget;
  metrics: GatewayMetrics;
  state: ProbeState;
  server: Server;
  /** The connection cap in force (maxConnections clamped to the open-file limit). */
  maxConnections: number;
  /** Fails readiness, keeps serving for the drain delay, stops accepting, lets in-flight requests finish within the grace period, then closes. */
  close(): Promise<void>;
  /** Traces, when configured (flush() in tests). */
  tracing?: RequestTracing;
  /** The usage ledger, when configured. */
  ledger?: UsageLedger;
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const { settings } = opts;
  const log = opts.log ?? createLogger(settings.logLevel);

  const fixedKeys: ApiKeyEntry[] = [...(opts.keys ?? [])];
  if (settings.apiKey) fixedKeys.push({ name: "default", sha256: hashApiKey(settings.apiKey) });
  const registry = new ModelRegistry(opts.catalog);
  const metrics = new GatewayMetrics(registry);
  const keys = new ApiKeyStore(fixedKeys);
  seedUsageSeries(metrics, fixedKeys, opts.catalog);
  let keysReloader: KeysFileReloader | undefined;
  if (settings.keysFile) {
    keysReloader = new KeysFileReloader(settings.keysFile, keys, fixedKeys, log, (entries) => seedUsageSeries(metrics, entries, opts.catalog));
    await keysReloader.start(settings.keysReloadIntervalMs);
  }
  if (keys.size === 0) log.warn("no API keys configured: every /v1 request will get 401");

  const state: ProbeState = { started: false, draining: false };
  const redis = settings.redisUrl
    ? new Redis(settings.redisUrl, {
        // Fail fast while Redis is away (or slow), so requests do not wait on it: see redisFailureMode.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: settings.redisTimeoutMs,
        connectTimeout: 2000,
      })
    : undefined;
  redis?.on("error", () => undefined); // reported once per transition by the limiter, not on every reconnect attempt
  let redisReady = redis?.status === "ready";
  if (redis && !redisReady) {
    // Start on shared limits when Redis is there; if it is not, start degraded (as redisFailureMode says) rather than not at all.
    redisReady = await Promise.race([
      new Promise<boolean>((resolve) => redis.once("ready", () => resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000).unref()),
    ]);
  }
  const limiter = new RateLimiter(
    redis ? new RedisBuckets(redis, { windowMs: settings.rateLimitWindowMs, leaseMs: settings.limitSlotLeaseMs }) : undefined,
    log,
    {
      refused: (key, limit) => metrics.rateLimited.inc({ key, limit }),
      storeUp: (up) => {
        metrics.rateLimitStoreUp.set({ store: "redis" }, up ? 1 : 0);
        metrics.rateLimitStoreTransitions.inc({ to: up ? "up" : "down" });
      },
    },
    {
      windowMs: settings.rateLimitWindowMs,
      failureMode: settings.redisFailureMode,
      defaultMaxConcurrent: settings.keyMaxConcurrent,
      reserveCeiling: settings.tokenReserveCeiling,
      leaseMs: settings.limitSlotLeaseMs,
      startUp: redisReady,
    },
  );
  const wallNow = opts.wallClock ?? Date.now;
  const { ledger, baseline } = usageLedger(settings, wallNow, log, metrics);
  const keyBudgets = new KeyBudgets(limiter, redis ? new RedisBudgetCounters(redis, wallNow) : undefined, new LocalBudgetCounters(wallNow), baseline, wallNow, systemClock, metrics.observeBudgets(() => keys.records(), wallNow));
  if (!ledger && [...keys.records()].some((k) => k.budget)) {
    log.warn("keys have budgets but no usage ledger is configured: budgets start from zero when the limits store (or, without one, the gateway) restarts");
  }
  // The readiness detail, with Redis only: without it, limits are always per replica.
  if (redis) state.limits = () => limiter.state;

  // One pooled keep-alive agent for all replicas; streams can be long, so no overall request timeout here.
  // Idle connections are dropped after 4 s, before vLLM's server drops them (uvicorn's keep-alive is 5 s): a
  // request sent into a connection the server is closing fails after its body is sent, when it can no longer
  // be retried on another replica (request bodies are let go once sent, see http/body/held-body.ts).
  const dispatcher = new Agent({ keepAliveTimeout: 4_000, connect: { timeout: 5_000 } });
  const health = new HealthChecker(
    () => registry.replicas(),
    dispatcher,
    { intervalMs: settings.healthIntervalMs, timeoutMs: settings.healthTimeoutMs, unhealthyThreshold: settings.unhealthyThreshold },
    log,
  );
  connectAdapters(registry, metrics, log, new AdapterClient({ dispatcher, authorization: upstreamAuthorization(settings), timeoutMs: settings.upstreamHeadersTimeoutMs }), settings.healthTimeoutMs);
  for (const pool of registry.all()) {
    if (pool.wakes) pool.scheduler.listen(metrics.forWake(pool.model.id));
    pool.scheduler.watch(metrics.forQueue(pool.model.id));
  }

  const budget = new KeyedBudget(settings.bodyMemoryBytes, settings.bodyMemoryPerKeyBytes, settings.waitingBodyMemoryBytes);
  const answerBudget = new KeyedBudget(settings.answerMemoryBytes, settings.answerMemoryPerKeyBytes);
  const inFlight = new KeyedBudget(settings.maxInFlightRequests, settings.maxInFlightRequestsPerKey);
  const sampler = new LogSampler(settings.logLinesPerSecond, log);
  const responseIds = new ResponseIds(await responseIdSecret(settings.responseIdSecret, redis, log));
  const tracing = RequestTracing.create({ endpoint: settings.otlpTracesEndpoint, sampleRatio: settings.traceSampleRatio, exporter: opts.traceExporter });
  if (tracing) log.info({ endpoint: settings.otlpTracesEndpoint, sampleRatio: settings.traceSampleRatio }, "traces on");
  const lingering = new LingeringClose(settings, {
    lingering: (count) => metrics.lingeringConnections.set(count),
    ended: (outcome) => metrics.lingeringCloses.inc({ outcome }),
  });
  const app = createApp({ settings, registry, keys, log, sampler, state, dispatcher, limiter, keyBudgets, ledger, budget, answerBudget, inFlight, metrics, responseIds, tracing, lingering });
  const { server, guard, maxConnections } = createTransport(app, settings, {
    refused: (scope) => metrics.connectionsRefused.inc({ scope }),
    evicted: (scope) => metrics.connectionsEvicted.inc({ scope }),
    clientError: (code, answered) => {
      const label = /^[A-Z0-9_]{1,40}$/.test(code) ? code : "other";
      metrics.clientErrors.inc({ code: label });
      // A client that left is not news; a refused one is, within the sampler's budget.
      if (answered && sampler.allow("client errors")) log.info({ code: label, status: answered.status, errorCode: answered.code }, "client error");
    },
  }, lingering);
  metrics.observeResources({ openConnections: () => guard.open, bodyMemoryBytes: () => budget.reserved, answerMemoryBytes: () => answerBudget.reserved });
  if (maxConnections < settings.maxConnections) {
    log.warn({ maxConnections, configured: settings.maxConnections }, "connection cap lowered to fit the open-file limit (raise `ulimit -n`)");
  }
  const metricsServer = createOpsServer(metrics, state);
  const tlsExpiry = settings.tlsCertFile ? new TlsCertificateExpiry(settings.tlsCertFile, metrics.registry, log, opts.tlsCertRereadMs) : undefined;
  await tlsExpiry?.start();

  const port = await listen(server, settings.port, settings.host);
  const metricsPort = await listen(metricsServer, settings.metricsPort, settings.host);
  const discoveries = registry.all().map((p) => new DnsDiscovery(p, log));
  await Promise.all(discoveries.map((d) => d.start()));
  await health.start();
  // Replicas of a model with adapters also list what they hold (/v1/models) at each scrape.
  const syncAdapters = (r: Replica) => registry.get(r.modelId)?.adapters?.sync(r, settings.healthTimeoutMs) ?? Promise.resolve();
  const loadScraper = new LoadScraper(() => registry.replicas(), dispatcher, settings.loadScrapeIntervalMs, settings.healthTimeoutMs, syncAdapters);
  loadScraper.start();
  state.started = true;
  const host = settings.host === "0.0.0.0" || settings.host === "::" ? "127.0.0.1" : settings.host;
  log.info(
    {
      port,
      metricsPort,
      models: registry.all().map((p) => p.model.id),
      limits: limiter.state,
      maxConnections,
      // The memory bound assumes the image's heap cap (gateway/Dockerfile); a larger one lets garbage linger.
      heapLimitMiB: Math.round(getHeapStatistics().heap_size_limit / 1024 / 1024),
      // What these limits keep the process under (docs/gateway-api.md, "Memory bound"): size the container to it.
      memoryBoundMiB: Math.round(rssBoundBytes({ ...settings, maxConnections }) / 1024 / 1024),
    },
    "gateway listening",
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      state.draining = true;
      log.info({ drainDelayMs: settings.drainDelayMs, graceMs: settings.shutdownGraceMs }, "shutdown: readiness failing, draining");
      await new Promise((resolve) => setTimeout(resolve, settings.drainDelayMs));
      health.stop();
      loadScraper.stop();
      keysReloader?.stop();
      tlsExpiry?.stop();
      discoveries.forEach((d) => d.stop());
      // Requests held for a model to wake would outlast the grace: answered 503 now, their clients retry elsewhere.
      for (const pool of registry.all()) pool.scheduler.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections that go idle while in-flight requests finish are closed as they go idle.
      const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, settings.shutdownGraceMs).unref());
      await Promise.race([closed, grace]);
      clearInterval(idleSweep);
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        metricsServer.close(() => resolve());
        metricsServer.closeAllConnections();
      });
      // Every request has been counted: the ledger's last counts go out before the store connections close.
      if (ledger) {
        await ledger.close(LEDGER_CLOSE_TIMEOUT_MS);
        if (ledger.unwrittenHours > 0) log.error({ objects: ledger.unwrittenHours }, "usage ledger: the last counts could not be written and are lost");
      }
      limiter.stop();
      sampler.stop();
      metrics.eventLoop.stop();
      redis?.disconnect();
      await dispatcher.close().catch(() => undefined);
      // The last spans go out before the process ends.
      await tracing?.shutdown().catch(() => undefined);
      log.info("gateway stopped");
    })());

  return {
    url: `http://${host}:${port}`,
    port,
    metricsUrl: `http://${host}:${metricsPort}/metrics`,
    opsUrl: `http://${host}:${metricsPort}`,
    registry,
    keys,
    keysReloader,
    limiter,
    budget,
    metrics,
    state,
    server,
    tracing,
    ledger,
    maxConnections,
    close,
  };
}

/** The ledger the settings name (a bucket, a directory, or none) and the budgets' baseline read from it. */
function usageLedger(settings: GatewaySettings, wallNow: () => number, log: Logger, metrics: GatewayMetrics): { ledger?: UsageLedger; baseline: BudgetBaseline } {
  const store = settings.ledgerBucket
    ? new S3LedgerStore({ bucket: settings.ledgerBucket, endpoint: settings.ledgerEndpoint, region: settings.ledgerRegion })
    : settings.ledgerDir
      ? new DirLedgerStore(settings.ledgerDir)
      : undefined;
  if (!store) return { baseline: async () => 0 };
  const ledger = new UsageLedger(store, {
    prefix: settings.ledgerPrefix,
    podName: settings.replicaName ?? process.env.HOSTNAME ?? hostname(),
    flushMs: settings.ledgerFlushMs,
    clock: systemClock,
    wallNow,
    log,
    events: metrics.forLedger(),
  });
  log.info({ store: store.describe, prefix: settings.ledgerPrefix, replica: ledger.replica, flushMs: settings.ledgerFlushMs }, "usage ledger on");
  const totals = new LedgerTotals(store, settings.ledgerPrefix, wallNow);
  return { ledger, baseline: (key, resource, start, end) => totals.total(key, resource, start, end) };
}

/** Each model with adapters loads them through `client`; every load, failure and eviction is counted and logged. */
function connectAdapters(registry: ModelRegistry, metrics: GatewayMetrics, log: Logger, client: AdapterClient, listingTimeoutMs: number): void {
  for (const pool of registry.all()) {
    const adapters = pool.adapters;
    if (!adapters) continue;
    const model = pool.model.id;
    const counted = metrics.forAdapters(model);
    for (const { id } of adapters.lora.adapters) for (const outcome of ["success", "failure"]) metrics.adapterLoads.inc({ model, adapter: id, outcome }, 0);
    const events: AdapterEvents = {
      loaded: (adapter, replica, seconds) => {
        counted.loaded(adapter, seconds);
        log.info({ model, adapter, replica, loadMs: Math.round(seconds * 1000) }, "adapter loaded");
      },
      loadFailed: (adapter, replica, seconds, reason) => {
        counted.loadFailed(adapter, seconds);
        log.warn({ model, adapter, replica, loadMs: Math.round(seconds * 1000), reason }, "adapter load failed");
      },
      evicted: (adapter, replica, forAdapter) => {
        counted.evicted(adapter);
        log.info({ model, adapter, replica, for: forAdapter }, "adapter evicted");
      },
    };
    adapters.connect(client, events, listingTimeoutMs);
  }
}
