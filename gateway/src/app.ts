import express, { type Express } from "express";
import type { Dispatcher } from "undici";
import { errors } from "./api/errors";
import type { ApiKeyStore } from "./auth/api-keys";
import { requireApiKey } from "./auth/middleware";
import { upstreamAuthorization, type GatewaySettings } from "./config/settings";
import { admitRequest } from "./http/admission";
import { corsPolicy } from "./http/cors";
import { errorHandler } from "./http/error-handler";
import { exactRoutes } from "./http/exact-routes";
import { front } from "./http/front";
import { probeRoutes, type ProbeState } from "./http/probes";
import type { LingeringClose } from "./http/lingering-close";
import type { KeyedBudget } from "./limits/keyed-budget";
import type { KeyBudgets } from "./limits/key-budgets";
import type { RateLimiter } from "./limits/rate-limiter";
import type { UsageLedger } from "./ledger/usage-ledger";
import { Accounting } from "./observability/accounting";
import type { LogSampler } from "./observability/log-sampler";
import type { Logger } from "./observability/logger";
import type { GatewayMetrics } from "./observability/metrics";
import { followUpRoutes } from "./responses/follow-ups";
import type { ResponseIds } from "./responses/response-ids";
import type { RequestTracing } from "./observability/tracing";
import { inferenceRoutes } from "./routes/inference";
import { modelRoutes } from "./routes/models";
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
  /** Day and month budgets per key. */
  keyBudgets?: KeyBudgets;
  /** Counts per key, model and hour, written to the object store (absent: no ledger). */
  ledger?: UsageLedger;
  budget: KeyedBudget;
  /** Memory for non-streaming answers held until their clients take them. */
  answerBudget: KeyedBudget;
  /** Requests in progress, gateway-wide and per key (a budget counted in requests). */
  inFlight: KeyedBudget;
  metrics: GatewayMetrics;
  /** Ids of stored responses (the Responses API): minted per response, read by its follow-ups. */
  responseIds: ResponseIds;
  /** Traces, when configured. */
  tracing?: RequestTracing;
  /** How connections close while their client may still be sending (shared with the transport). */
  lingering: LingeringClose;
}

/**
 * The request path, one direction: transport limits (server.ts, http/transport.ts) → front (the request context,
 * draining; http/front.ts) → auth → admission: per-key limits, body memory, the bounded body read
 * (http/admission.ts) → validation and model resolution (endpoints/prepare.ts) → routing and sending (upstream/)
 * → relay (relay/) → accounting (observability/accounting.ts, when the response closes). Bodies are read by the
 * admission step, never by a parser in front of everything: a refused caller costs no body read. The inference
 * endpoints are found by exact path before Express's router (http/exact-routes.ts); everything else walks it.
 */
export function createApp(deps: AppDeps): Express {
  const { settings, state } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  const accounting = new Accounting(deps.log, deps.sampler, deps.metrics, deps.tracing, deps.ledger);
  const auth = requireApiKey(deps.keys);
  const refused = (reason: string) => deps.metrics.admissionRefusals.inc({ reason });
  const admit = admitRequest(settings, { limiter: deps.limiter, keyBudgets: deps.keyBudgets, budget: deps.budget, inFlight: deps.inFlight, events: { refused } });
  const upstreamOptions = {
    dispatcher: deps.dispatcher,
    upstreamAuthorization: upstreamAuthorization(settings),
    headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
    idleTimeoutMs: settings.upstreamIdleTimeoutMs,
    retryAfterSaturatedSeconds: settings.retryAfterSaturatedSeconds,
    retryAfterNotReadySeconds: settings.retryAfterNotReadySeconds,
    clientStallTimeoutMs: settings.clientStallTimeoutMs,
    answerStallTimeoutMs: settings.answerStallTimeoutMs,
    answerBudget: deps.answerBudget,
    answerRefused: refused,
  };
  const inference = inferenceRoutes(
    {
      registry: deps.registry,
      limiter: deps.limiter,
      metrics: deps.metrics,
      admit,
      responseIds: deps.responseIds,
      tracing: deps.tracing,
      // Inference waits for a replica, so a stream may need keep-alives first; follow-ups reuse the rest.
      options: { ...upstreamOptions, sseKeepAliveMs: settings.sseKeepAliveMs },
    },
    [auth],
  );

  app.use(front({ state, lingering: deps.lingering, accounting, answerStallTimeoutMs: settings.answerStallTimeoutMs }));
  // Browsers' preflights carry no key: answered before authentication, and before the exact-path dispatch.
  const browsers = corsPolicy(settings.corsOrigins, settings.corsMaxAgeSeconds);
  if (browsers) app.use(browsers);
  app.use(exactRoutes(inference.exact));
  app.use(probeRoutes(state));
  app.use("/v1", auth);
  app.use(modelRoutes(deps.registry, settings.retryAfterNotReadySeconds, settings.listWakeModels));
  app.use(inference.router);
  app.use(followUpRoutes({ registry: deps.registry, limiter: deps.limiter, ids: deps.responseIds, options: upstreamOptions }));
  app.use((req, _res) => {
    throw errors.unknownUrl(req.method, req.path);
  });
  app.use(errorHandler(deps.log));
  return app;
}
