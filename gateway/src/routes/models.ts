import { Router, type Request } from "express";
import { errors } from "../api/errors";
import type { ModelRegistry } from "../upstream/registry";
import type { ModelPool } from "../upstream/model-pool";
import { callerMayUse } from "../auth/middleware";
import { contextOf } from "../http/request-context";

function modelObject(pool: ModelPool, fallbackCreated: number) {
  return { id: pool.model.id, object: "model", created: pool.model.created ?? fallbackCreated, owned_by: pool.model.ownedBy };
}

/** GET /v1/models lists only what can serve now (a ready replica) and what the caller's key may use. */
export function modelRoutes(registry: ModelRegistry, retryAfterNotReadySeconds: number): Router {
  const router = Router();
  const visible = (req: Request, pool: ModelPool) => callerMayUse(contextOf(req.res!), pool.model.id);

  router.get("/v1/models", (req, res) => {
    const data = registry
      .all()
      .filter((p) => p.isReady && visible(req, p))
      .map((p) => modelObject(p, registry.loadedAt));
    res.json({ object: "list", data });
  });

  // Model ids may contain "/" (e.g. "Qwen/Qwen3-8B"), so the id is the rest of the path.
  router.get("/v1/models/{*id}", (req, res) => {
    const segments = (req.params as { id?: string[] | string }).id ?? [];
    const id = Array.isArray(segments) ? segments.join("/") : segments;
    const pool = registry.get(id);
    if (!pool || !visible(req, pool)) throw errors.modelNotFound(id);
    if (!pool.isReady) throw errors.notReady(id, retryAfterNotReadySeconds);
    res.json(modelObject(pool, registry.loadedAt));
  });
  return router;
}
