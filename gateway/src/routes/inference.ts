import { Router, type Request, type RequestHandler, type Response } from "express";
import { ENDPOINTS } from "../endpoints";
import { errors } from "../api/errors";
import { contextOf, type RequestContext } from "../context/request-context";
import { prepareRequest, type PreparedRequest } from "../endpoints/prepare";
import type { EndpointSpec, Usage } from "../endpoints/spec";
import { takeAdmittedBody } from "../http/admission";
import type { RouteChain } from "../http/exact-routes";
import { promptEstimate, type RateLimiter } from "../limits/rate-limiter";
import { settleKeyLimits } from "../limits/request-limits";
import type { GatewayMetrics } from "../observability/metrics";
import type { RequestTracing } from "../observability/tracing";
import { relayAnswer, type RelayOptions } from "../relay";
import { SseKeepAlive } from "../relay/keep-alive";
import { RESPONSE_STAMP_LENGTH, type ResponseIds } from "../responses/response-ids";
import type { ModelRegistry } from "../upstream/registry";
import type { Replica } from "../upstream/replica";
import { tenantOf } from "../upstream/scheduler/tenant";
import { send, type SendOptions, type UpstreamCall } from "../upstream/send";

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
  /** Mints and reads stored responses' ids (the Responses API). */
  responseIds: ResponseIds;
  /** Traces, when configured (off: undefined, and nothing on the request path touches them). */
  tracing?: RequestTracing;
}

/**
 * One inference endpoint, the route level: validation and model resolution (endpoints/prepare.ts), then the
 * attempt level (upstream/send.ts: pick, send, retry), the relay (relay/: JSON or SSE to the client), and what
 * the request is charged (tokens against the key's TPM; the log line and metrics are accounted when it closes).
 * Nothing here knows an endpoint's wire format: that is the spec's.
 */
function serve(spec: EndpointSpec, deps: InferenceDeps) {
  return async (req: Request, res: Response) => {
    const ctx = contextOf(res);
    // Accounting (at 'close') waits for this handler: a stream the client cut is counted once the relay knows what it used.
    let handled!: () => void;
    ctx.handled = new Promise<void>((resolve) => (handled = resolve));
    try {
      await serveRequest(spec, deps, req, res, ctx);
    } finally {
      handled();
    }
  };
}

async function serveRequest(spec: EndpointSpec, deps: InferenceDeps, req: Request, res: Response, ctx: RequestContext): Promise<void> {
  const { registry, limiter, metrics, options } = deps;
  const key = ctx.key!;
  const ids = spec.storesResponses ? deps.responseIds : undefined;
  // The gateway chooses a stored response's id (vLLM's `request_id`): it names the replica that will hold it.
  const placeholder = ids?.placeholder();
  // An alias keeps a continued conversation on the model holding it (a bad id is refused below, in stickiness).
  const homeOf = ids
    ? (id: string) => {
        try {
          return ids.locate(id, ctx.key!.name, registry, "previous_response_id", options.retryAfterNotReadySeconds).pool;
        } catch {
          return undefined;
        }
      }
    : undefined;
  const prepared = prepareRequest(spec, takeAdmittedBody(ctx), ctx, registry, placeholder ? { request_id: JSON.stringify(placeholder) } : {}, homeOf);
  const { model, pool, upstreamModel, stream, clientWantsUsage, body, pick } = prepared;
  const sticky = ids && placeholder ? stickiness(ids, placeholder, prepared, ctx, deps) : {};
  const perModel = metrics.forModel(model);
  const traceHeaders = deps.tracing?.begin(req, ctx, spec.path, ctx.log.alias ?? model, model);
  // With a span, its time to first token is the client's: from the request's arrival.
  const timings = traceHeaders
    ? { firstToken: (s: number) => ((ctx.firstTokenSeconds = (performance.now() - ctx.started) / 1000), perModel.firstToken(s)), interTokens: perModel.interTokens }
    : perModel;

  perModel.inFlight.inc();
  const keepAlive = stream ? new SseKeepAlive(res, options.sseKeepAliveMs) : undefined;
  try {
    // Held for a model waking from zero: a stream starts its keep-alives at once; the log line says how long.
    const hold = pool.wakes ? { started: () => keepAlive?.held(), ended: (ms: number) => (ctx.log.heldMs = Math.round(ms)) } : undefined;
    const sent = await send(
      { pool, path: spec.path, body, requestId: ctx.requestId, stream, signal: ctx.signal, pick, tenant: tenantOf(key), retried: perModel.retried, traceHeaders, hold, ...sticky },
      options,
    );
    keepAlive?.stop();
    ctx.log.attempts = sent.attempts;
    ctx.log.replica = sent.replica?.url;
    if (!sent.answered) return;
    ctx.reachedModel = true;
    let relayed;
    try {
      relayed = await relayAnswer(
        sent.upstream,
        { res, spec, modelId: model, upstreamModel, stream, clientWantsUsage, keyName: key.name, signal: ctx.signal, timings },
        options,
      );
    } finally {
      sent.done();
    }
    const usage = relayed.usage ?? countedUsage(stream, res, relayed.tokenEvents);
    ctx.log.promptTokens = usage?.prompt_tokens;
    ctx.log.completionTokens = usage?.completion_tokens;
    const cached = usage?.prompt_tokens_details?.cached_tokens;
    if (typeof cached === "number" && cached > 0) ctx.log.cachedTokens = cached;
    ctx.log.streamError = relayed.streamError;
    // A count without the prompt (a Responses stream cut before its usage) is charged the prompt's estimate.
    const charged = usage && usage.prompt_tokens === undefined ? { ...usage, prompt_tokens: promptEstimate(body.length) } : usage;
    await settleKeyLimits(limiter, ctx, res, charged);
  } finally {
    keepAlive?.stop();
    body.release();
    perModel.inFlight.dec();
  }
}

/**
 * What a stream used when the model server's usage never came (the client cut it, or it broke off): the events
 * that carried output, one token each (vLLM sends one token per event unless it batches them, so this errs
 * low), and no prompt figure. Chat and completions streams carry the running usage on every chunk, so this is
 * only their fallback (a stream cut before its first chunk); for the Responses API, whose usage comes only in
 * `response.completed`, it is the figure.
 */
function countedUsage(stream: boolean, res: Response, tokenEvents: number | undefined): Usage | undefined {
  if (!stream || !res.headersSent || tokenEvents === undefined) return undefined;
  return { completion_tokens: tokenEvents };
}

/**
 * A stored response's routing: a follow-up (`previous_response_id`) is pinned to the replica holding the response
 * it continues, and each attempt stamps the new response's id with the replica it goes to and the key that owns it.
 */
function stickiness(ids: ResponseIds, placeholder: string, prepared: PreparedRequest, ctx: RequestContext, deps: InferenceDeps): Partial<UpstreamCall> {
  const key = ctx.key!;
  let pinned: Replica | undefined;
  if (prepared.continues) {
    const home = ids.locate(prepared.continues, key.name, deps.registry, "previous_response_id", deps.options.retryAfterNotReadySeconds);
    if (home.pool !== prepared.pool) throw errors.responseModelMismatch(prepared.continues, home.pool.model.id);
    pinned = home.replica;
  }
  const at = prepared.body.find(placeholder) + placeholder.length - RESPONSE_STAMP_LENGTH;
  const continues = prepared.continues;
  return {
    pinned,
    unavailable: continues ? () => errors.responseReplicaUnavailable(continues, deps.options.retryAfterNotReadySeconds) : undefined,
    beforeAttempt: (replica) => {
      const stamp = ids.stamp(placeholder, replica.url, key.name);
      prepared.body.overwrite(at, stamp);
      ctx.log.responseId = placeholder.slice(0, placeholder.length - RESPONSE_STAMP_LENGTH) + stamp;
    },
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
