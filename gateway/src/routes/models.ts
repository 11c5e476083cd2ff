import { Router, type Request } from "express";
import { errors } from "../api/errors";
import type { ModelRegistry } from "../upstream/registry";
import type { ModelPool } from "../upstream/model-pool";
import { callerMayUse } from "../auth/middleware";
import { contextOf } from "../context/request-context";

function modelObject(id: string, pool: ModelPool, fallbackCreated: number) {
  return { id, object: "model", created: pool.model.created ?? fallbackCreated, owned_by: pool.model.ownedBy };
}

/**
 * GET /v1/models lists only what can serve now (a ready replica; with `listWakeModels`, also a model that wakes on
 * demand) and what the caller's key may use: models, then the listed aliases (an alias is described by the model it
 * would reach now).
 */
export function modelRoutes(registry: ModelRegistry, retryAfterNotReadySeconds: number, listWakeModels = false): Router {
  const router = Router();
  const serves = (p: ModelPool) => p.isReady || (listWakeModels && p.wakeQueue !== undefined);
  const listedAliases = (req: Request) =>
    registry
      .aliases()
      .filter(({ alias }) => alias.listed && callerMayUse(contextOf(req.res!), alias.id))
      .flatMap(({ alias, pools }) => {
        const serving = pools.find((p) => p.isReady) ?? pools.find(serves);
        return serving ? [modelObject(alias.id, serving, registry.loadedAt)] : [];
      });

  router.get("/v1/models", (req, res) => {
    const models = registry
      .all()
      .filter((p) => serves(p) && callerMayUse(contextOf(req.res!), p.model.id))
      .map((p) => modelObject(p.model.id, p, registry.loadedAt));
    res.json({ object: "list", data: [...models, ...listedAliases(req)] });
  });

  // Model ids may contain "/" (e.g. "Qwen/Qwen3-8B"), so the id is the rest of the path.
  router.get("/v1/models/{*id}", (req, res) => {
    const segments = (req.params as { id?: string[] | string }).id ?? [];
    const id = Array.isArray(segments) ? segments.join("/") : segments;
    const resolved = registry.resolve(id);
    if (!resolved || !callerMayUse(contextOf(req.res!), id)) throw errors.modelNotFound(id);
    if (!serves(resolved.pool)) throw errors.notReady(id, retryAfterNotReadySeconds);
    res.json(modelObject(id, resolved.pool, registry.loadedAt));
  });
  return router;
}
