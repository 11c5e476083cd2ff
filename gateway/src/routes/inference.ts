import { Router, type Request, type Response } from "express";
import type { z } from "zod";
import { errors } from "../api/errors";
import { ChatCompletionRequestSchema, EmbeddingRequestSchema, parseBody } from "../api/schemas";
import type { ModelCategory } from "../config/catalog";
import { callerKey, callerMayUse } from "../auth/middleware";
import type { RateLimiter } from "../limits/rate-limiter";
import type { GatewayMetrics } from "../observability/metrics";
import type { ModelRegistry } from "../upstream/registry";
import { forwardInference, type ForwardOptions } from "../upstream/forward";
import { prefixHashes, promptText } from "../upstream/prefix-index";
import { requestLog } from "../http/request-log";

interface Endpoint {
  path: "/v1/chat/completions" | "/v1/embeddings";
  schema: z.ZodType<{ model: string; stream?: boolean | null; stream_options?: { include_usage?: boolean } | null }>;
  category: ModelCategory;
  what: string;
}

const ENDPOINTS: Endpoint[] = [
  { path: "/v1/chat/completions", schema: ChatCompletionRequestSchema, category: "generative", what: "chat completions" },
  { path: "/v1/embeddings", schema: EmbeddingRequestSchema, category: "embedder", what: "embeddings" },
];

/** POST /v1/chat/completions and /v1/embeddings: validate, resolve the model, admit, forward, account. */
export function inferenceRoutes(registry: ModelRegistry, limiter: RateLimiter, metrics: GatewayMetrics, forward: ForwardOptions): Router {
  const router = Router();
  for (const ep of ENDPOINTS) {
    router.post(ep.path, async (req: Request, res: Response) => {
      const parsed = parseBody(ep.schema, req.body);
      if (!parsed.ok) throw parsed.error;
      const { model, stream } = parsed.value;
      const log = requestLog(res);
      log.model = model;
      log.stream = stream === true;

      const pool = registry.get(model);
      if (!pool || !callerMayUse(req, model)) throw errors.modelNotFound(model);
      if (pool.model.category !== ep.category) throw errors.wrongCategory(model, ep.what);

      const key = callerKey(res)!;
      const limitHeaders = await limiter.admit(key);
      for (const [k, v] of Object.entries(limitHeaders)) res.setHeader(k, v);

      const abort = new AbortController();
      res.on("close", () => {
        if (!res.writableFinished) abort.abort();
      });
      // The client's own body goes upstream, unknown fields included; only `model` is mapped. Streams always
      // ask for the usage chunk (token limits and metrics need it); it is dropped again if the client did not.
      const body: Record<string, unknown> = { ...(req.body as Record<string, unknown>), model: pool.upstreamModel };
      const clientWantsUsage = stream === true && parsed.value.stream_options?.include_usage !== false && parsed.value.stream_options != null;
      if (stream === true) body.stream_options = { ...(parsed.value.stream_options ?? {}), include_usage: true };

      metrics.inFlight.inc({ model });
      try {
        const outcome = await forwardInference(
          {
            pool,
            path: ep.path,
            body,
            requestId: res.locals.requestId as string,
            stream: stream === true,
            stripUsageChunk: stream === true && !clientWantsUsage,
            res,
            signal: abort.signal,
            // Hashing the prompt costs a pass over it: only for models that route on it.
            pick: pool.model.routing.strategy === "prefix-affinity" ? { prefix: prefixHashes(promptText(body)) } : {},
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
        const total = outcome.usage?.total_tokens ?? (outcome.usage?.prompt_tokens ?? 0) + (outcome.usage?.completion_tokens ?? 0);
        await limiter.charge(key, total);
      } finally {
        metrics.inFlight.dec({ model });
      }
    });
  }
  return router;
}
