import type { NextFunction, Request, Response } from "express";
import { errors } from "../api/errors";
import { bearerToken, type ApiKeyRecord, type ApiKeyStore } from "./api-keys";

/** The authenticated key of this request (set by requireApiKey). */
export function callerKey(res: Response): ApiKeyRecord | undefined {
  return res.locals.apiKey as ApiKeyRecord | undefined;
}

/** A key restricted to some models does not even learn that the others exist. */
export function callerMayUse(req: Request, modelId: string): boolean {
  const key = callerKey(req.res!);
  return !key?.models || key.models.has(modelId);
}

export function requireApiKey(store: ApiKeyStore) {
  return (req: Request, res: Response, next: NextFunction) => {
    const token = bearerToken(req.headers.authorization);
    const record = token ? store.authenticate(token) : undefined;
    if (!record) throw errors.invalidApiKey();
    res.locals.apiKey = record;
    next();
  };
}
