import type { NextFunction, Request, Response } from "express";
import { errors } from "../api/errors";
import { contextOf, type RequestContext } from "../context/request-context";
import { bearerToken, type ApiKeyStore } from "./api-keys";

/** A key restricted to some models does not even learn that the others exist. */
export function callerMayUse(ctx: RequestContext, modelId: string): boolean {
  return !ctx.key?.models || ctx.key.models.has(modelId);
}

/** Auth: the bearer key's record goes into the request context; anything else is 401. */
export function requireApiKey(store: ApiKeyStore) {
  return (req: Request, res: Response, next: NextFunction) => {
    const token = bearerToken(req.headers.authorization);
    const record = token ? store.authenticate(token) : undefined;
    if (!record) throw errors.invalidApiKey();
    contextOf(res).key = record;
    next();
  };
}
