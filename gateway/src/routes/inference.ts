import { Router, type Request, type RequestHandler, type Response } from "express";
import type { z } from "zod";
import { clientText } from "../api/client-text";
import { errors } from "../api/errors";
import { ChatCompletionRequestSchema, EmbeddingRequestSchema, parseBody } from "../api/schemas";
import type { ModelCategory } from "../config/catalog";
import { callerKey, callerMayUse } from "../auth/middleware";
import type { RateLimiter } from "../limits/rate-limiter";
import type { GatewayMetrics } from "../observability/metrics";
import type { ModelRegistry } from "../upstream/registry";
import type { ModelPool } from "../upstream/model-pool";
import type { PickContext } from "../upstream/balancer";
import { forwardInference, type ForwardOptions } from "../upstream/forward";
import { prefixHashes, promptText } from "../upstream/prefix-index";
import { requestLog } from "../http/request-log";
import { takeAdmittedBody, type AdmittedBody } from "../http/admission";
import { HeldBody } from "../http/body/held-body";
import { memberKey, replaceMembers, type JsonMember } from "../http/body/json-members";

type RequestShape = { model: string; stream?: boolean | null; stream_options?: { include_usage?: boolean } | null };

interface Endpoint {
  path: "/v1/chat/completions" | "/v1/embeddings";
  schema: z.ZodType<RequestShape>;
  category: ModelCategory;
  what: string;
}

const ENDPOINTS: Endpoint[] = [
  { path: "/v1/chat/completions", schema: ChatCompletionRequestSchema, category: "generative", what: "chat completions" },
  { path: "/v1/embeddings", schema: EmbeddingRequestSchema, category: "embedder", what: "embeddings" },
];

/** What the relay needs of a validated request; the parsed body itself is not kept. */
interface PreparedRequest {
  model: string;
  pool: ModelPool;
  stream: boolean;
  clientWantsUsage: boolean;
  body: HeldBody;
  pick: PickContext;
}

/** Top-level members that decide what the gateway does with a request. */
const ACTED_ON = new Set(["model", "stream", "stream_options"]);

/** Which of ACTED_ON the body holds more than once (keys compared decoded: "mod\u0065l" is "model"). */
function repeatedMembers(members: readonly JsonMember[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const m of members) {
    const key = memberKey(m);
    if (!ACTED_ON.has(key)) continue;
    if (seen.has(key)) repeated.add(key);
    seen.add(key);
  }
  return repeated;
}

/**
 * Validates the admitted body, resolves the model and builds the bytes to send. Synchronous on purpose: the
 * parsed body (which may take many times the body's size) is garbage as soon as this returns, before the
 * request waits for a replica or an answer. The body goes upstream as the client's own bytes with `model`
 * mapped (and, for streams, `stream_options` asking for usage): unknown fields pass untouched.
 */
function prepare(ep: Endpoint, admitted: AdmittedBody, req: Request, res: Response, registry: ModelRegistry): PreparedRequest {
  const parsed = parseBody(ep.schema, admitted.json);
  if (!parsed.ok) throw parsed.error;
  const { model, stream, stream_options } = parsed.value;
  const log = requestLog(res);
  log.model = clientText(model);
  log.stream = stream === true;

  // A key may use an alias it is given, whichever model the alias reaches.
  const resolved = registry.resolve(model);
  if (!resolved || !callerMayUse(req, model)) throw errors.modelNotFound(model);
  const { pool, alias } = resolved;
  if (pool.model.category !== ep.category) throw errors.wrongCategory(model, ep.what);
  if (alias) {
    // Logs, metrics and the answer name the model that served; the log line also the alias asked for.
    log.alias = alias.id;
    log.model = pool.model.id;
  }

  // Streams always ask for the usage chunk (token limits and metrics need it); it is dropped again if the
  // client did not ask for it. A member the gateway acts on that the client repeated is rewritten too: the
  // gateway decided on JSON.parse's value (the last), and a model server keeping the first would otherwise
  // serve a model the key may not use, or stream to a client expecting JSON.
  const repeated = repeatedMembers(admitted.members);
  const replace: Record<string, string> = {};
  if (pool.upstreamModel !== model || repeated.has("model")) replace.model = JSON.stringify(pool.upstreamModel);
  if (stream === true) replace.stream_options = JSON.stringify({ ...(stream_options ?? {}), include_usage: true });
  else if (repeated.has("stream_options")) replace.stream_options = JSON.stringify(stream_options ?? null);
  if (repeated.has("stream")) replace.stream = JSON.stringify(stream ?? null);
  const bytes = Object.keys(replace).length > 0 ? replaceMembers(admitted.bytes, admitted.members, replace) : admitted.bytes;

  return {
    model: pool.model.id,
    pool,
    stream: stream === true,
    clientWantsUsage: stream === true && stream_options != null && stream_options.include_usage !== false,
    body: new HeldBody(bytes, admitted.lease),
    // Hashing the prompt costs a pass over it: only for models that route on it.
    pick: pool.model.routing.strategy === "prefix-affinity" ? { prefix: prefixHashes(promptText(parsed.value as Record<string, unknown>)) } : {},
  };
}

/**
 * POST /v1/chat/completions and /v1/embeddings: `admit` (per-key limits, body memory, the bounded body read)
 * runs first; then validate, resolve the model, forward, account.
 */
export function inferenceRoutes(registry: ModelRegistry, limiter: RateLimiter, metrics: GatewayMetrics, admit: RequestHandler, forward: ForwardOptions): Router {
  const router = Router();
  for (const ep of ENDPOINTS) {
    router.post(ep.path, admit, async (req: Request, res: Response) => {
      const { model, pool, stream, clientWantsUsage, body, pick } = prepare(ep, takeAdmittedBody(res), req, res, registry);
      const log = requestLog(res);
      const key = callerKey(res)!;

      const abort = new AbortController();
      res.on("close", () => {
        if (!res.writableFinished) abort.abort();
      });

      metrics.inFlight.inc({ model });
      try {
        const outcome = await forwardInference(
          {
            pool,
            path: ep.path,
            body,
            keyName: key.name,
            requestId: res.locals.requestId as string,
            stream,
            stripUsageChunk: stream && !clientWantsUsage,
            res,
            signal: abort.signal,
            pick,
            timing: {
              firstToken: (s) => metrics.timeToFirstToken.observe({ model }, s),
              interToken: (s) => metrics.interTokenLatency.observe({ model }, s),
              retried: () => metrics.upstreamRetries.inc({ model }),
            },
          },
          forward,
        );
        Object.assign(log, {
          replica: outcome.replica,
          attempts: outcome.attempts,
          promptTokens: outcome.usage?.prompt_tokens,
          completionTokens: outcome.usage?.completion_tokens,
          streamError: outcome.streamError,
        });
        await limiter.settle(res, outcome.usage);
      } finally {
        metrics.inFlight.dec({ model });
      }
    });
  }
  return router;
}
