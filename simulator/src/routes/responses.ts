import type { Request, Response } from "express";
import { renderChatPrompt } from "../chat-prompt";
import { planCompletion, plannedTokenCount, promptPrng } from "../completion-plan";
import { badRequest, VllmError } from "../errors";
import { nowMs } from "../latency";
import { ResponsesRequestSchema } from "../requests/responses-request";
import { parseRequest } from "../requests/validation";
import { newResponseId, outputItems, plannedItem, responseObject, statusOf, usageOf } from "../response-object";
import type { ResponseStore, StoredResponse } from "../response-store";
import { asChatRequest, chatTools, conversationOf } from "../responses-input";
import { tokenize } from "../tokenizer";
import { beginInferenceRequest, maybeInjectFailure, resolveTarget, type SimulatorContext, unixSeconds } from "./context";
import { faultPlan, runGeneration } from "./generation";
import { ResponseEventStream } from "./responses-stream";

/**
 * The Responses API as vLLM serves it: `POST /v1/responses` (JSON, or the event stream), `GET
 * /v1/responses/{id}` and `POST /v1/responses/{id}/cancel` on this replica's stored responses, with vLLM's
 * errors for ids it does not hold.
 */

/** vLLM answers every Responses route of a model without a generate runner this way. */
const notSupported = (): VllmError => badRequest("The model does not support Responses API");

/** vLLM's `_make_not_found_error`: what a replica says about an id it does not hold (never stored, evicted, or another replica's). */
export const responseNotFound = (id: string): VllmError => new VllmError(404, `Response with id '${id}' not found.`, "response_id", "invalid_request_error");

export function createResponseHandler(ctx: SimulatorContext, store: ResponseStore) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrivalMs = nowMs();
    beginInferenceRequest(ctx, req);
    const request = parseRequest(ResponsesRequestSchema, req.body);
    if (ctx.config.kind !== "generate") throw notSupported();
    const { model, adapter } = await resolveTarget(ctx, request.model);
    const faults = faultPlan(ctx, req);
    let previous: StoredResponse | undefined;
    if (request.previous_response_id != null) {
      previous = store.get(request.previous_response_id);
      if (previous === undefined) throw responseNotFound(request.previous_response_id);
    }

    const messages = conversationOf(request, previous);
    const prompt = renderChatPrompt(messages, chatTools(request));
    const promptTokens = tokenize(prompt);
    checkPromptLength(ctx.config.maxModelLen, promptTokens.length);
    maybeInjectFailure(ctx);

    // vLLM caps max_output_tokens at what the context window leaves rather than refusing it.
    const room = ctx.config.maxModelLen - promptTokens.length;
    const maxOutputTokens = Math.min(request.max_output_tokens ?? room, room);
    const chatRequest = asChatRequest(request, messages, maxOutputTokens);
    const plan = planCompletion({ request: chatRequest, prng: promptPrng(model, prompt, chatRequest), toolCalling: ctx.config.toolCalling, remainingContext: room });
    const item = plannedItem(plan);
    const frame = { id: request.request_id ?? newResponseId(), createdAt: unixSeconds(), model, request, maxOutputTokens };
    const stream = request.stream === true;
    const events = stream ? new ResponseEventStream(res, item) : null;

    const results = await runGeneration({
      ctx,
      req,
      res,
      arrivalMs,
      stream,
      faults,
      adapter,
      jobs: [{ promptTokens, outputTokens: plannedTokenCount(plan), writeToken: (i) => events?.token(i) }],
      onStreamStart: () => events?.open(responseObject(frame, "in_progress", [], null)),
    });
    if (!results) return;

    ctx.metrics.requestFinished(plan.finishReason === "length" ? "length" : "stop", (nowMs() - arrivalMs) / 1000);
    const usage = usageOf(promptTokens.length, results[0]?.cachedTokens ?? 0, plannedTokenCount(plan));
    const response = responseObject(frame, statusOf(plan), outputItems(item), usage);
    // Stored before the client sees it, so a follow-up sent the moment it arrives finds it (`store` defaults to true).
    if (request.store !== false) store.put(response.id, { response, messages });
    if (events) {
      events.complete(response);
      res.end();
    } else {
      res.json(response);
    }
    ctx.counters.completedTotal++;
  };
}

/** vLLM's Responses check (`_validate_generator_input`), worded unlike chat's. */
function checkPromptLength(maxModelLen: number, promptTokens: number): void {
  if (promptTokens >= maxModelLen) {
    throw new VllmError(
      400,
      `The engine prompt length ${promptTokens} exceeds the max_model_len ${maxModelLen}. Please reduce prompt.`,
      "input",
      "invalid_request_error",
    );
  }
}

/** GET /v1/responses/{id}: the stored response, as it was sent. */
export function retrieveResponseHandler(ctx: SimulatorContext, store: ResponseStore) {
  return (req: Request, res: Response): void => {
    if (ctx.config.kind !== "generate") throw notSupported();
    const id = String(req.params.id);
    const stored = store.get(id);
    if (stored === undefined) throw responseNotFound(id);
    // Replaying events is for background responses, which the simulator does not run.
    if (req.query.stream === "true") throw new VllmError(400, `Unknown response_id: ${id}`, "response_id");
    res.json(stored.response);
  };
}

/** POST /v1/responses/{id}/cancel: only background responses can be cancelled, so a stored one is refused. */
export function cancelResponseHandler(ctx: SimulatorContext, store: ResponseStore) {
  return (req: Request, _res: Response): void => {
    if (ctx.config.kind !== "generate") throw notSupported();
    const id = String(req.params.id);
    if (store.get(id) === undefined) throw responseNotFound(id);
    throw new VllmError(400, "Cannot cancel a synchronous response.", "response_id", "invalid_request_error");
  };
}

/** vLLM registers no DELETE for responses: Starlette answers 405 for a path that exists with other methods. */
export function deleteResponseHandler() {
  return (_req: Request, res: Response): void => {
    res.setHeader("allow", "GET");
    throw new VllmError(405, "Method Not Allowed");
  };
}
