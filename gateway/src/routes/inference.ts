import { Router, type Request, type Response } from "express";
import type { z } from "zod";
import { errors } from "../api/errors";
import { ChatCompletionRequestSchema, EmbeddingRequestSchema, parseBody } from "../api/schemas";
import type { ModelCategory } from "../config/catalog";
import { callerMayUse } from "../auth/middleware";
import type { ModelRegistry } from "../upstream/registry";
import { forwardInference, type ForwardOptions } from "../upstream/forward";
import { requestLog } from "../http/request-log";

interface Endpoint {
  path: "/v1/chat/completions" | "/v1/embeddings";
  schema: z.ZodType<{ model: string; stream?: boolean | null }>;
  category: ModelCategory;
  what: string;
}

const ENDPOINTS: Endpoint[] = [
  { path: "/v1/chat/completions", schema: ChatCompletionRequestSchema, category: "generative", what: "chat completions" },
  { path: "/v1/embeddings", schema: EmbeddingRequestSchema, category: "embedder", what: "embeddings" },
];

/** POST /v1/chat/completions and /v1/embeddings: validate, resolve the model, forward to a replica. */
export function inferenceRoutes(registry: ModelRegistry, forward: ForwardOptions): Router {
  const router = Router();
  for (const ep of ENDPOINTS) {
    router.post(ep.path, async (req: Request, res: Response) => {
      const parsed = parseBody(ep.schema, req.body);
      if (!parsed.ok) throw parsed.error;
      const { model, stream } = parsed.value;
      const log = requestLog(res);
      log.model = model;

      const pool = registry.get(model);
      if (!pool || !callerMayUse(req, model)) throw errors.modelNotFound(model);
      if (pool.model.category !== ep.category) throw errors.wrongCategory(model, ep.what);

      const abort = new AbortController();
      res.on("close", () => {
        if (!res.writableFinished) abort.abort();
      });
      log.stream = stream === true;
      // The client's own body goes upstream, unknown fields included; only `model` is mapped.
      const outcome = await forwardInference(
        {
          pool,
          path: ep.path,
          body: { ...(req.body as Record<string, unknown>), model: pool.upstreamModel },
          requestId: res.locals.requestId as string,
          stream: stream === true,
          res,
          signal: abort.signal,
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
    });
  }
  return router;
}
