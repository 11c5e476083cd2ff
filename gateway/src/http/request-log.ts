import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../observability/logger";
import { requestIdFrom } from "./request-id";
import { callerKey } from "../auth/middleware";

/** Fields of the one log line written per request; handlers fill in what they learn. */
export interface RequestLogFields {
  model?: string;
  stream?: boolean;
  replica?: string;
  attempts?: number;
  promptTokens?: number;
  completionTokens?: number;
  errorCode?: string | null;
  streamError?: string;
}

export function requestLog(res: Response): RequestLogFields {
  return res.locals.log as RequestLogFields;
}

const UNLOGGED = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Assigns the request id (the caller's, if sane, else a new one), echoes it on every response, and writes one
 * JSON line when the response closes. The key appears by name only; probe paths are not logged.
 */
export function requestLogging(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    const started = process.hrtime.bigint();
    res.locals.requestId = requestId;
    res.locals.log = {} satisfies RequestLogFields;
    res.setHeader("x-request-id", requestId);
    if (!UNLOGGED.has(req.path)) {
      res.on("close", () => {
        const fields = requestLog(res);
        const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
        log.info(
          {
            requestId,
            method: req.method,
            path: req.path,
            status: res.statusCode,
            latencyMs: Math.round(latencyMs * 10) / 10,
            apiKeyName: callerKey(res)?.name,
            clientAborted: !res.writableFinished,
            ...fields,
          },
          "request",
        );
      });
    }
    next();
  };
}
