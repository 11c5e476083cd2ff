import { Router, type Request } from "express";
import { errors } from "../api/errors";
import { targetId, type ModelRegistry, type Target } from "../upstream/registry";
import type { ModelPool } from "../upstream/model-pool";
import { callerMayUse } from "../auth/middleware";
import { contextOf } from "../context/request-context";

/** A model card; an adapter's names its base model as `parent`, as vLLM lists adapters. */
function modelObject(id: string, target: Target, fallbackCreated: number) {
  const { pool, adapter } = target;
  const card = { id, object: "model", created: pool.model.created ?? fallbackCreated, owned_by: pool.model.ownedBy };
  return adapter === undefined ? card : { ...card, parent: pool.model.id };
}

/**
 * GET /v1/models lists only what can serve now (a ready replica; with `listWakeModels`, also a model that wakes on
 * demand) and what the caller's key may use: models, their LoRA adapters, then the listed aliases (an alias is
 * described by the target it would reach now).
 */
export function modelRoutes(registry: ModelRegistry, retryAfterNotReadySeconds: number, listWakeModels = false): Router {
  const router = Router();
  const serves = (p: ModelPool) => p.isReady || (listWakeModels && p.wakes);
  const listedAliases = (req: Request) =>
    registry
      .aliases()
      .filter(({ alias }) => alias.listed && callerMayUse(contextOf(req.res!), alias.id))
      .flatMap(({ alias, targets }) => {
        const serving = targets.find((t) => t.pool.isReady) ?? targets.find((t) => serves(t.pool));
        return serving ? [modelObject(alias.id, serving, registry.loadedAt)] : [];
      });

  router.get("/v1/models", (req, res) => {
    const mayList = (t: Target) => serves(t.pool) && callerMayUse(contextOf(req.res!), targetId(t));
    const targets = [...registry.all().map((pool) => ({ pool })), ...registry.adapters()].filter(mayList);
    res.json({ object: "list", data: [...targets.map((t) => modelObject(targetId(t), t, registry.loadedAt)), ...listedAliases(req)] });
  });

  // Model ids may contain "/" (e.g. "Qwen/Qwen3-8B"), so the id is the rest of the path.
  router.get("/v1/models/{*id}", (req, res) => {
    const segments = (req.params as { id?: string[] | string }).id ?? [];
    const id = Array.isArray(segments) ? segments.join("/") : segments;
    const resolved = registry.resolve(id);
    if (!resolved || !callerMayUse(contextOf(req.res!), id)) throw errors.modelNotFound(id);
    if (!serves(resolved.pool)) throw errors.notReady(id, retryAfterNotReadySeconds);
    res.json(modelObject(id, resolved, registry.loadedAt));
  });
  return router;
}
