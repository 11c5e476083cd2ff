import type { NextFunction, Request, Response } from "express";
import { callerKey } from "../auth/middleware";
import { requestLog } from "../http/request-log";
import type { ModelRegistry } from "../upstream/registry";
import type { GatewayMetrics } from "./metrics";

const ENDPOINTS = new Set(["/v1/chat/completions", "/v1/embeddings", "/v1/models"]);

/** Counts every /v1 request and times inference requests when the response closes. */
export function httpMetrics(metrics: GatewayMetrics, registry: ModelRegistry) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith("/v1/")) return next();
    const started = process.hrtime.bigint();
    res.on("close", () => {
      const fields = requestLog(res);
      // Only catalog ids become label values; anything a client made up is "unknown".
      const model = fields.model && registry.get(fields.model) ? fields.model : fields.model ? "unknown" : "";
      const endpoint = ENDPOINTS.has(req.path) ? req.path : req.path.startsWith("/v1/models/") ? "/v1/models/{id}" : "other";
      const key = callerKey(res)?.name ?? "";
      const status = res.writableFinished ? String(res.statusCode) : "499";
      metrics.requests.inc({ model, endpoint, status, key });
      if (model && model !== "unknown" && endpoint !== "/v1/models") {
        metrics.duration.observe({ model, endpoint, stream: String(fields.stream === true) }, Number(process.hrtime.bigint() - started) / 1e9);
        if (fields.promptTokens) metrics.tokens.inc({ model, key, type: "prompt" }, fields.promptTokens);
        if (fields.completionTokens) metrics.tokens.inc({ model, key, type: "completion" }, fields.completionTokens);
      }
    });
    next();
  };
}
