import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { createApp } from "./app";
import { ApiKeyStore, hashApiKey, type ApiKeyEntry } from "./auth/api-keys";
import type { Catalog } from "./config/catalog";
import type { GatewaySettings } from "./config/settings";
import { createLogger, type Logger } from "./observability/logger";
import type { ProbeState } from "./routes/probes";
import { DnsDiscovery } from "./upstream/dns-discovery";
import { HealthChecker } from "./upstream/health-checker";
import { ModelRegistry } from "./upstream/registry";

export interface GatewayOptions {
  settings: GatewaySettings;
  catalog: Catalog;
  /** Hashed key entries (a keys file); `settings.apiKey`, if set, is added as the key named "default". */
  keys?: readonly ApiKeyEntry[];
  log?: Logger;
}

export interface RunningGateway {
  url: string;
  port: number;
  registry: ModelRegistry;
  keys: ApiKeyStore;
  state: ProbeState;
  server: Server;
  /** Fails readiness, stops accepting, lets in-flight requests finish within the grace period, then closes. */
  close(): Promise<void>;
}

export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const { settings } = opts;
  const log = opts.log ?? createLogger(settings.logLevel);
  const entries: ApiKeyEntry[] = [...(opts.keys ?? [])];
  if (settings.apiKey) entries.push({ name: "default", sha256: hashApiKey(settings.apiKey) });
  const keys = new ApiKeyStore(entries);
  if (keys.size === 0) log.warn("no API keys configured: every /v1 request will get 401");

  const registry = new ModelRegistry(opts.catalog);
  // One pooled keep-alive agent for all replicas; streams can be long, so no overall request timeout here.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: 5_000 } });
  const state: ProbeState = { started: false, draining: false };
  const health = new HealthChecker(() => registry.replicas(), dispatcher, {
    intervalMs: settings.healthIntervalMs,
    timeoutMs: settings.healthTimeoutMs,
    unhealthyThreshold: settings.unhealthyThreshold,
  }, log);

  const app = createApp({ settings, registry, keys, log, state, dispatcher });
  const server = createServer(app);
  // Longer than typical load-balancer idle timeouts, so the LB closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const discoveries = registry.all().map((p) => new DnsDiscovery(p, log));
  await Promise.all(discoveries.map((d) => d.start()));
  await health.start();
  state.started = true;
  const port = (server.address() as AddressInfo).port;
  const host = settings.host === "0.0.0.0" || settings.host === "::" ? "127.0.0.1" : settings.host;
  log.info({ port, models: registry.all().map((p) => p.model.id) }, "gateway listening");

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      state.draining = true;
      health.stop();
      discoveries.forEach((d) => d.stop());
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, settings.shutdownGraceMs).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
      await dispatcher.close().catch(() => undefined);
      log.info("gateway stopped");
    })());

  return { url: `http://${host}:${port}`, port, registry, keys, state, server, close };
}
