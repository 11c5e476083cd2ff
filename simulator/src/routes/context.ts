import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import type { SimulatorConfig } from "../config";
import type { InferenceEngine } from "../engine";
import { VllmError, injectedError, modelNotFound } from "../errors";
import type { Adapter, LoraAdapters } from "../lora";
import type { SimulatorMetrics } from "../metrics";
import type { StatCounters } from "../stats";

/** What the route handlers share: one per simulator instance. */
export interface SimulatorContext {
  config: SimulatorConfig;
  engine: InferenceEngine;
  metrics: SimulatorMetrics;
  counters: StatCounters;
  adapters: LoraAdapters;
  isReady(): boolean;
}

/** What a request's `model` names: the name to echo, and the LoRA adapter if it names one. */
export interface Target {
  model: string;
  adapter?: Adapter;
}

/**
 * vLLM accepts a missing or empty `model` (base model) and echoes the requested alias back; a registered LoRA
 * adapter's name is served by that adapter (with runtime updating, once a load of that name under way is over, as
 * vLLM's `resolve_lora` waits for the name's lock); any other name not served is a 404.
 */
export async function resolveTarget(ctx: SimulatorContext, requested: string | null | undefined): Promise<Target> {
  const { models, lora } = ctx.config;
  if (!requested) return { model: models[0] as string };
  if (models.includes(requested)) return { model: requested };
  const adapter = ctx.adapters.get(requested) ?? (lora.runtimeUpdating ? await ctx.adapters.resolve(requested) : undefined);
  if (!adapter) throw modelNotFound(requested);
  return { model: requested, adapter };
}

/** vLLM derives response ids from an incoming X-Request-Id, else a random uuid hex. */
export function requestIdFor(req: Request): string {
  const header = req.get("x-request-id");
  return header && header.length > 0 ? header : randomUUID().replace(/-/g, "");
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * Bookkeeping and the faults that apply before the body is even looked at: not ready yet, and the
 * `X-Return-Error: <status>` header (llm-d sim's deterministic failure injection).
 */
export function beginInferenceRequest(ctx: SimulatorContext, req: Request): void {
  ctx.counters.requestsTotal++;
  ctx.counters.lastRequestHeaders = { ...req.headers };
  ctx.counters.lastRequestBody = req.body as unknown;
  if (!ctx.isReady()) throw new VllmError(503, "The server is not ready yet: the model is still loading.");
  const forced = req.get("x-return-error");
  if (forced !== undefined) {
    const status = Number(forced);
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new VllmError(400, `X-Return-Error must be an HTTP error status (400-599), got "${forced}".`);
    }
    ctx.counters.failedTotal++;
    throw injectedError(status);
  }
}

/** Random failures at `failureRate`, applied to otherwise valid requests. */
export function maybeInjectFailure(ctx: SimulatorContext): void {
  if (ctx.config.failureRate > 0 && Math.random() < ctx.config.failureRate) {
    ctx.counters.failedTotal++;
    throw injectedError(ctx.config.failureStatus);
  }
}

function tokenCountHeader(req: Request, name: string): number | undefined {
  const header = req.get(name);
  if (header === undefined) return undefined;
  const n = Number(header);
  if (!Number.isInteger(n) || n < 0) throw new VllmError(400, `${name} must be a non-negative integer, got "${header}".`);
  return n;
}

/** Token count after which to cut the connection for this request: header `X-Drop-After-Tokens` or config. */
export function dropAfterTokens(ctx: SimulatorContext, req: Request): number | undefined {
  return tokenCountHeader(req, "x-drop-after-tokens") ?? ctx.config.dropStreamAfterTokens;
}

/**
 * Token count after which generation fails with an engine error (`X-Stream-Error-After-Tokens`): streams
 * then carry vLLM's in-band error event followed by [DONE]; non-streaming requests get a 500.
 */
export function errorAfterTokens(req: Request): number | undefined {
  return tokenCountHeader(req, "x-stream-error-after-tokens");
}

/** An AbortSignal that fires when the client goes away before the response has finished. */
export function clientGoneSignal(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort(new Error("client disconnected"));
  });
  return controller.signal;
}
