import { Router, type Request, type RequestHandler, type Response } from "express";
import { ENDPOINTS } from "../endpoints";
import { prepareRequest } from "../endpoints/prepare";
import type { EndpointSpec } from "../endpoints/spec";
import { takeAdmittedBody } from "../http/admission";
import type { RouteChain } from "../http/exact-routes";
import { contextOf } from "../http/request-context";
import type { RateLimiter } from "../limits/rate-limiter";
import type { GatewayMetrics } from "../observability/metrics";
import { relayAnswer, type Relayed, type RelayOptions } from "../relay";
import { SseKeepAlive } from "../relay/keep-alive";
import type { ModelRegistry } from "../upstream/registry";
import { send, type SendOptions } from "../upstream/send";

export interface InferenceOptions extends SendOptions, RelayOptions {
  /** Streaming: after this long without an upstream response, send SSE headers and keep-alive comments. */
  sseKeepAliveMs: number;
}

export interface InferenceDeps {
  registry: ModelRegistry;
  limiter: RateLimiter;
  metrics: GatewayMetrics;
  /** Admission: per-key limits, body memory and the bounded body read. */
  admit: RequestHandler;
  options: InferenceOptions;
}

/**
 * One inference endpoint, the route level: validation and model resolution (endpoints/prepare.ts), then the
 * attempt level (upstream/send.ts: pick, send, retry), the relay (relay/: JSON or SSE to the client), and what
 * the request is charged (tokens against the key's TPM; the log line and metrics are accounted when it closes).
 * Nothing here knows an endpoint's wire format: that is the spec's.
 */
function serve(spec: EndpointSpec, deps: InferenceDeps) {
  const { registry, limiter, metrics, options } = deps;
  return async (req: Request, res: Response) => {
    const ctx = contextOf(res);
    const { model, pool, stream, clientWantsUsage, body, pick } = prepareRequest(spec, takeAdmittedBody(ctx), ctx, registry);
    const key = ctx.key!;
    const perModel = metrics.forModel(model);

    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });

    perModel.inFlight.inc();
    const keepAlive = stream ? new SseKeepAlive(res, options.sseKeepAliveMs) : undefined;
    try {
      const sent = await send({ pool, path: spec.path, body, requestId: ctx.requestId, stream, signal: abort.signal, pick, retried: perModel.retried }, options);
      keepAlive?.stop();
      ctx.log.attempts = sent.attempts;
      ctx.log.replica = sent.replica?.url;
      if (!sent.answered) return;
      let relayed: Relayed;
      try {
        relayed = await relayAnswer(
          sent.upstream,
          { res, spec, modelId: model, upstreamModel: pool.upstreamModel, stream, clientWantsUsage, keyName: key.name, signal: abort.signal, timings: perModel },
          options,
        );
      } finally {
        sent.done();
      }
      const usage = relayed.usage;
      ctx.log.promptTokens = usage?.prompt_tokens;
      ctx.log.completionTokens = usage?.completion_tokens;
      ctx.log.streamError = relayed.streamError;
      const total = usage?.total_tokens ?? (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0);
      await limiter.charge(key, total);
    } finally {
      keepAlive?.stop();
      body.release();
      perModel.inFlight.dec();
    }
  };
}

/**
 * POST at each endpoint's path: `before` (authentication), admission (a refused caller costs no body read), then
 * `serve`. As chains by "METHOD path" for exact-path dispatch, and as a router for every other spelling of them.
 */
export function inferenceRoutes(deps: InferenceDeps, before: readonly RequestHandler[]): { exact: Map<string, RouteChain>; router: Router } {
  const exact = new Map<string, RouteChain>();
  const router = Router();
  for (const spec of ENDPOINTS) {
    const handlers = [deps.admit, serve(spec, deps)];
    exact.set(`POST ${spec.path}`, [...before, ...handlers]);
    router.post(spec.path, ...handlers);
  }
  return { exact, router };
}
