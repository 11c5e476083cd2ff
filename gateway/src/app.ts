import express, { type Express } from "express";
import type { Dispatcher } from "undici";
import { errors } from "./api/errors";
import type { ApiKeyStore } from "./auth/api-keys";
import { requireApiKey } from "./auth/middleware";
import type { GatewaySettings } from "./config/settings";
import { errorHandler } from "./http/error-handler";
import { requestLogging } from "./http/request-log";
import type { RateLimiter } from "./limits/rate-limiter";
import { httpMetrics } from "./observability/http-metrics";
import type { Logger } from "./observability/logger";
import type { GatewayMetrics } from "./observability/metrics";
import { inferenceRoutes } from "./routes/inference";
import { modelRoutes } from "./routes/models";
import { probeRoutes, type ProbeState } from "./routes/probes";
import type { ModelRegistry } from "./upstream/registry";

export interface AppDeps {
  settings: GatewaySettings;
  registry: ModelRegistry;
  keys: ApiKeyStore;
  log: Logger;
  state: ProbeState;
  dispatcher: Dispatcher;
  limiter: RateLimiter;
  metrics: GatewayMetrics;
}

export function createApp(deps: AppDeps): Express {
  const { settings, state } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  app.use(requestLogging(deps.log));
  app.use(httpMetrics(deps.metrics, deps.registry));
  app.use((_req, res, next) => {
    // Shutting down: serve what still arrives, but close the connection after it, so clients reconnect to
    // a replica that stays (refusing it would drop a request the load balancer already sent here).
    if (state.draining) res.setHeader("connection", "close");
    next();
  });
  app.use(probeRoutes(state));
  // Authenticate before reading the body, so an anonymous caller cannot make us parse megabytes.
  app.use("/v1", requireApiKey(deps.keys));
  // Every body is read as JSON whatever its content-type (a bare `curl -d` sends form encoding).
  app.use(express.json({ limit: settings.bodyLimitBytes, type: () => true, strict: true }));

  app.use(modelRoutes(deps.registry, settings.retryAfterNotReadySeconds));
  app.use(
    inferenceRoutes(deps.registry, deps.limiter, deps.metrics, {
      dispatcher: deps.dispatcher,
      headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
      idleTimeoutMs: settings.upstreamIdleTimeoutMs,
      retryAfterSaturatedSeconds: settings.retryAfterSaturatedSeconds,
      retryAfterNotReadySeconds: settings.retryAfterNotReadySeconds,
      sseKeepAliveMs: settings.sseKeepAliveMs,
    }),
  );
  app.use((req, _res) => {
    throw errors.unknownUrl(req.method, req.path);
  });
  app.use(errorHandler(deps.log));
  return app;
}
