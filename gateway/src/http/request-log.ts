import type { NextFunction, Request, Response } from "express";
import { clientText } from "../api/client-text";
import type { LogSampler } from "../observability/log-sampler";
import type { Logger } from "../observability/logger";
import { requestIdFrom } from "./request-id";
import { callerKey } from "../auth/middleware";

/** Fields of the one log line written per request; handlers fill in what they learn. */
export interface RequestLogFields {
  /** As the client sent it: set through clientText(), bounded and escaped. */
  model?: string;
  /** The alias the client asked for, when `model` was reached through one. */
  alias?: string;
  stream?: boolean;
  replica?: string;
  attempts?: number;
  promptTokens?: number;
  completionTokens?: number;
  errorCode?: string | null;
  streamError?: string;
  /** The client stopped reading and was disconnected after the stall timeout. */
  clientStalled?: boolean;
}

export function requestLog(res: Response): RequestLogFields {
  return res.locals.log as RequestLogFields;
}

/** Admission passed the key's rate limit: the request counts against its RPM, and so does its log line. */
export function chargeToRateLimit(res: Response): void {
  res.locals.charged = true;
}

function chargedToRateLimit(res: Response): boolean {
  return res.locals.charged === true;
}

const UNLOGGED = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Assigns the request id (the caller's, if sane, else a new one), echoes it on every response, and writes one
 * JSON line when the response closes. The key appears by name only; probe paths are not logged; client-chosen
 * strings are bounded. Lines no rate limit paid for (unauthenticated requests; a key's requests its RPM did not
 * charge, such as refusals before or by the rate limit) are sampled, per key (see log-sampler.ts).
 */
export function requestLogging(log: Logger, sampler: LogSampler) {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    const started = process.hrtime.bigint();
    res.locals.requestId = requestId;
    res.locals.log = {} satisfies RequestLogFields;
    res.setHeader("x-request-id", requestId);
    if (!UNLOGGED.has(req.path)) {
      res.on("close", () => {
        const key = callerKey(res);
        if (!chargedToRateLimit(res)) {
          const allowed = key ? sampler.allow(`key '${key.name}': requests not charged to its rate limit`, `key:${key.name}`) : sampler.allow("unauthenticated requests");
          if (!allowed) return;
        }
        const fields = requestLog(res);
        const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
        log.info(
          {
            requestId,
            method: clientText(req.method, 32),
            path: clientText(req.path),
            // A client that left before any answer gets none: 499, as in the metrics.
            status: res.headersSent ? res.statusCode : 499,
            latencyMs: Math.round(latencyMs * 10) / 10,
            apiKeyName: key?.name,
            clientAborted: !res.writableFinished || fields.clientStalled === true,
            ...fields,
          },
          "request",
        );
      });
    }
    next();
  };
}
