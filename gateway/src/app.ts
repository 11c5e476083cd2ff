import express, { type Express } from "express";
import type { Dispatcher } from "undici";
import { errors } from "./api/errors";
import type { ApiKeyStore } from "./auth/api-keys";
import { requireApiKey } from "./auth/middleware";
import type { GatewaySettings } from "./config/settings";
import { admitRequest } from "./http/admission";
import { boundClientStalls } from "./http/client-stall";
import { corsPolicy } from "./http/cors";
import { errorHandler } from "./http/error-handler";
import { requestLogging } from "./http/request-log";
import { UnreadBodies } from "./http/unread-body";
import type { KeyedBudget } from "./limits/keyed-budget";
import type { RateLimiter } from "./limits/rate-limiter";
import { httpMetrics } from "./observability/http-metrics";
import type { LogSampler } from "./observability/log-sampler";
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
  sampler: LogSampler;
  state: ProbeState;
  dispatcher: Dispatcher;
  limiter: RateLimiter;
  budget: KeyedBudget;
  /** Memory for non-streaming answers held until their clients take them. */
  answerBudget: KeyedBudget;
  /** Requests in progress, gateway-wide and per key (a budget counted in requests). */
  inFlight: KeyedBudget;
  metrics: GatewayMetrics;
}

/**
 * The request path, in order: transport limits (server.ts, http/transport.ts) → admission (draining) → auth →
 * per-key limits and body memory → the bounded body read → validation → routing → relay → accounting. Bodies
 * are read by the inference routes' own admission step, never by a parser in front of everything: a refused
 * caller costs no body read.
 */
export function createApp(deps: AppDeps): Express {
  const { settings, state } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  app.use(requestLogging(deps.log, deps.sampler));
  const browsers = corsPolicy(settings.corsOrigins, settings.corsMaxAgeSeconds);
  if (browsers) app.use(browsers);
  app.use(httpMetrics(deps.metrics, deps.registry));
  const unread = new UnreadBodies(settings.bodyLimitBytes);
  app.use(unread.middleware());
  app.use(boundClientStalls(settings.answerStallTimeoutMs));
  app.use((_req, res, next) => {
    // Shutting down: serve what still arrives, but close the connection after it, so clients reconnect to
    // a replica that stays (refusing it would drop a request the load balancer already sent here).
    if (state.draining) res.setHeader("connection", "close");
    next();
  });
  app.use(probeRoutes(state));
  app.use("/v1", requireApiKey(deps.keys));

  app.use(modelRoutes(deps.registry, settings.retryAfterNotReadySeconds));
  const refused = (reason: string) => deps.metrics.admissionRefusals.inc({ reason });
  const admit = admitRequest(settings, deps.limiter, deps.budget, deps.inFlight, { refused });
  app.use(
    inferenceRoutes(deps.registry, deps.limiter, deps.metrics, admit, {
      dispatcher: deps.dispatcher,
      upstreamAuthorization: settings.upstreamApiKey ? `Bearer ${settings.upstreamApiKey}` : undefined,
      headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
      idleTimeoutMs: settings.upstreamIdleTimeoutMs,
      retryAfterSaturatedSeconds: settings.retryAfterSaturatedSeconds,
      retryAfterNotReadySeconds: settings.retryAfterNotReadySeconds,
      sseKeepAliveMs: settings.sseKeepAliveMs,
      clientStallTimeoutMs: settings.clientStallTimeoutMs,
      answerStallTimeoutMs: settings.answerStallTimeoutMs,
      answerBudget: deps.answerBudget,
      answerRefused: refused,
    }),
  );
  app.use((req, _res) => {
    throw errors.unknownUrl(req.method, req.path);
  });
  app.use(errorHandler(deps.log, unread));
  return app;
}
