import { Router, type Request, type RequestHandler, type Response } from "express";
import { request } from "undici";
import { errors } from "../api/errors";
import { callerMayUse } from "../auth/middleware";
import { contextOf } from "../context/request-context";
import { responses } from "../endpoints/responses";
import type { EndpointSpec } from "../endpoints/spec";
import type { RateLimiter } from "../limits/rate-limiter";
import { admitKeyLimits } from "../limits/request-limits";
import { relayAnswer, type RelayOptions } from "../relay";
import type { TokenTimingSink } from "../observability/metrics";
import type { ModelRegistry } from "../upstream/registry";
import { CONNECT_ERRORS, errorCode, guardBody, type SendOptions } from "../upstream/send";
import type { ResponseIds } from "./response-ids";

export interface FollowUpDeps {
  registry: ModelRegistry;
  limiter: RateLimiter;
  ids: ResponseIds;
  options: SendOptions & RelayOptions;
}

/** A retrieved or cancelled response generates nothing: it is relayed like a response, but its usage is not counted again. */
const retrieved: EndpointSpec = {
  ...(responses as EndpointSpec),
  usageOf: () => undefined,
  streamEvent: (data, parsed, wants) => ({ ...responses.streamEvent(data, parsed, wants), usage: undefined }),
};

/**
 * The follow-ups of stored responses, each sent to the replica that stores the response (found from its id, see
 * response-ids.ts): `GET /v1/responses/{id}` (with its query, e.g. `stream=true` for a background response's
 * events), `POST /v1/responses/{id}/cancel`. `DELETE /v1/responses/{id}` is answered 405 as vLLM answers it (it
 * has no such route), once the key is known to own the id. Each counts against the key's requests per minute and
 * concurrency; none reads a body.
 */
export function followUpRoutes(deps: FollowUpDeps): Router {
  const router = Router();
  const admit: RequestHandler = async (_req, res, next) => {
    const ctx = contextOf(res);
    await admitKeyLimits(deps.limiter, ctx.key!, res, ctx);
    ctx.charged = true;
    next();
  };
  router.get("/v1/responses/:id", admit, forward(deps, "GET", ""));
  router.post("/v1/responses/:id/cancel", admit, forward(deps, "POST", "/cancel"));
  router.delete("/v1/responses/:id", admit, (req: Request, res: Response) => {
    locate(deps, req, res);
    throw errors.responseNotDeletable();
  });
  return router;
}

/** The stored response's home, for this key (or the 404/503 envelope); labels the request with its model. */
function locate(deps: FollowUpDeps, req: Request, res: Response) {
  const ctx = contextOf(res);
  const id = String(req.params.id);
  ctx.log.responseId = id.slice(0, 128);
  const home = deps.ids.locate(id, ctx.key!.name, deps.registry, "response_id", deps.options.retryAfterNotReadySeconds);
  // The key may have lost the model since: then the response does not exist for it either.
  if (!deps.registry.namesOf(home.pool.model.id).some((name) => callerMayUse(ctx, name))) throw errors.responseNotFound(id);
  ctx.modelId = home.pool.model.id;
  ctx.log.model = home.pool.model.id;
  ctx.log.replica = home.replica.url;
  return { id, ...home };
}

function forward(deps: FollowUpDeps, method: "GET" | "POST", suffix: string) {
  const { options } = deps;
  return async (req: Request, res: Response) => {
    const ctx = contextOf(res);
    const { id, pool, replica } = locate(deps, req, res);
    const query = req.url.indexOf("?");
    const asksStream = method === "GET" && /^(true|1)$/i.test(String(req.query.stream ?? ""));
    const headers: Record<string, string> = { accept: asksStream ? "text/event-stream" : "application/json", "x-request-id": ctx.requestId };
    if (options.upstreamAuthorization) headers.authorization = options.upstreamAuthorization;
    let upstream;
    try {
      // The id passed the pattern check in locate(): only hex after `resp_`, nothing to escape.
      upstream = guardBody(
        await request(`${replica.url}/v1/responses/${id}${suffix}${query >= 0 ? req.url.slice(query) : ""}`, {
        method,
        dispatcher: options.dispatcher,
        headers,
        signal: ctx.signal,
        headersTimeout: options.headersTimeoutMs,
          bodyTimeout: options.idleTimeoutMs,
        }),
      );
    } catch (err) {
      if (ctx.signal.aborted) return;
      const code = errorCode(err);
      if (code === "UND_ERR_HEADERS_TIMEOUT") throw errors.upstreamTimeout(pool.model.id);
      // Only a failed connection says the replica is gone; anything else is this request's trouble.
      if (code && CONNECT_ERRORS.has(code)) replica.eject(code);
      throw errors.responseReplicaUnavailable(id, options.retryAfterNotReadySeconds);
    }
    ctx.log.attempts = 1;
    // What the model server sends decides the relay, whatever spelling of `stream` the query used.
    const stream = String(upstream.headers["content-type"] ?? "").startsWith("text/event-stream");
    ctx.log.stream = stream;
    const relayed = await relayAnswer(
      upstream,
      { res, spec: retrieved, modelId: pool.model.id, upstreamModel: pool.upstreamModel, stream, clientWantsUsage: false, keyName: ctx.key!.name, signal: ctx.signal, timings: NO_TIMINGS },
      options,
    );
    ctx.log.streamError = relayed.streamError;
  };
}

/** A replayed stream is not generation: its events are not timed as tokens. */
const NO_TIMINGS: TokenTimingSink = { firstToken: () => undefined, interTokens: () => undefined };
