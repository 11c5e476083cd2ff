import type { IncomingMessage, ServerResponse } from "node:http";
import { clientText } from "../api/client-text";
import type { RequestContext } from "../context/request-context";
import type { LogSampler } from "./log-sampler";
import type { Logger } from "./logger";
import type { GatewayMetrics } from "./metrics";
import type { RequestTracing } from "./tracing";

/** Where each request's counts go: the usage ledger (ledger/usage-ledger.ts). */
export interface UsageRecorder {
  record(key: string, model: string, counts: { requests: number; prompt_tokens: number; completion_tokens: number; cached_tokens: number }): void;
}

/** Paths never logged nor counted: the probes (the operations listener has its own). */
const UNACCOUNTED = new Set(["/healthz", "/readyz", "/metrics"]);
const ENDPOINTS = new Set(["/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/responses", "/v1/models"]);

/** The `endpoint` label of a path: known paths as they are, parameterised ones by their pattern, else "other". */
export function endpointLabel(path: string): string {
  if (ENDPOINTS.has(path)) return path;
  if (path.startsWith("/v1/models/")) return "/v1/models/{id}";
  if (path.startsWith("/v1/responses/")) return path.endsWith("/cancel") ? "/v1/responses/{id}/cancel" : "/v1/responses/{id}";
  return "other";
}

/**
 * The last layer: when a response closes, one JSON log line and the request's metrics. The key appears by name
 * only; client-chosen strings are bounded. Lines no rate limit paid for (unauthenticated requests; a key's
 * requests its RPM did not charge, such as refusals before or by the rate limit) are sampled, per key (see
 * log-sampler.ts). Metrics label only catalog ids (anything a client made up is "unknown") and known endpoints.
 * The usage ledger gets the same counts as the line, for every request a model server answered.
 */
export class Accounting {
  constructor(
    private readonly log: Logger,
    private readonly sampler: LogSampler,
    private readonly metrics: GatewayMetrics,
    private readonly tracing?: RequestTracing,
    private readonly ledger?: UsageRecorder,
  ) {}

  /** Whether the request at `path` is accounted at all (probes are not). */
  accounts(path: string): boolean {
    return !UNACCOUNTED.has(path);
  }

  closed(req: IncomingMessage, res: ServerResponse, ctx: RequestContext, path: string, endedAt = performance.now()): void {
    const finished = res.writableFinished;
    const durationMs = endedAt - ctx.started;
    if (path.startsWith("/v1/")) this.count(res, ctx, path, finished, durationMs);
    this.writeLine(req, res, ctx, path, finished, durationMs);
    if (ctx.span) this.tracing?.end(res, ctx, endedAt);
  }

  private count(res: ServerResponse, ctx: RequestContext, path: string, finished: boolean, durationMs: number): void {
    const fields = ctx.log;
    const model = ctx.modelId ?? (fields.model ? "unknown" : "");
    const endpoint = endpointLabel(path);
    const key = ctx.key?.name ?? "";
    this.metrics.requests.series(model, endpoint, finished ? String(res.statusCode) : "499", key).inc();
    if (ctx.modelId && endpoint !== "/v1/models") {
      this.metrics.duration.series(model, endpoint, fields.stream === true ? "true" : "false").observe(durationMs / 1000);
      if (fields.promptTokens) this.metrics.tokens.series(model, key, "prompt").inc(fields.promptTokens);
      if (fields.completionTokens) this.metrics.tokens.series(model, key, "completion").inc(fields.completionTokens);
    }
    // The ledger counts what the log line says, once per request that a model server answered.
    if (this.ledger && ctx.reachedModel && ctx.modelId && key) {
      this.ledger.record(key, ctx.modelId, {
        requests: 1,
        prompt_tokens: fields.promptTokens ?? 0,
        completion_tokens: fields.completionTokens ?? 0,
        cached_tokens: fields.cachedTokens ?? 0,
      });
    }
  }

  private writeLine(req: IncomingMessage, res: ServerResponse, ctx: RequestContext, path: string, finished: boolean, durationMs: number): void {
    const key = ctx.key;
    if (!ctx.charged) {
      const allowed = key ? this.sampler.allow(`key '${key.name}': requests not charged to its rate limit`, `key:${key.name}`) : this.sampler.allow("unauthenticated requests");
      if (!allowed) return;
    }
    const fields = ctx.log;
    this.log.info(
      {
        requestId: ctx.requestId,
        method: clientText(req.method ?? "", 32),
        path: clientText(path),
        // A client that left before any answer gets none: 499, as in the metrics.
        status: res.headersSent ? res.statusCode : 499,
        latencyMs: Math.round(durationMs * 10) / 10,
        apiKeyName: key?.name,
        clientAborted: !finished || fields.clientStalled === true,
        ...fields,
      },
      "request",
    );
  }
}
