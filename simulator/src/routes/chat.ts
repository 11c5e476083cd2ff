import type { Request, Response } from "express";
import { renderChatPrompt } from "../chat-prompt";
import { type CompletionPlan, planCompletion, plannedTokenCount, promptPrng } from "../completion-plan";
import { badRequest, VllmError } from "../errors";
import { nowMs } from "../latency";
import { ChatCompletionRequestSchema, includeUsage, requestedMaxTokens } from "../requests/chat-request";
import { parseRequest } from "../requests/validation";
import { tokenize } from "../tokenizer";
import {
  beginInferenceRequest,
  clientGoneSignal,
  dropAfterTokens,
  errorAfterTokens,
  maybeInjectFailure,
  requestIdFor,
  resolveModel,
  type SimulatorContext,
  unixSeconds,
} from "./context";
import { startEventStream, writeDone, writeEvent } from "./sse";

/** POST /v1/chat/completions, streaming and not, with vLLM's response shapes. */

/** Thrown from the token callback after the socket was destroyed on purpose. */
class StreamDropped extends Error {}

/** Thrown from the token callback to simulate an engine failure mid-generation. */
class InjectedEngineError extends VllmError {
  constructor() {
    super(500, "Simulated engine failure during generation (X-Stream-Error-After-Tokens).");
  }
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function chatCompletionsHandler(ctx: SimulatorContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrivalMs = nowMs();
    beginInferenceRequest(ctx, req);
    const request = parseRequest(ChatCompletionRequestSchema, req.body);
    if (ctx.config.kind !== "generate") throw badRequest("The model does not support Chat Completions API");
    const model = resolveModel(ctx.config, request.model);
    const dropAfter = dropAfterTokens(ctx, req);
    const errorAfter = errorAfterTokens(req);

    const prompt = renderChatPrompt(request.messages, request.tools);
    const promptTokens = tokenize(prompt);
    checkContextLength(ctx.config.maxModelLen, promptTokens.length, requestedMaxTokens(request));
    maybeInjectFailure(ctx);

    const plan = planCompletion({
      request,
      prng: promptPrng(model, prompt, request),
      toolCalling: ctx.config.toolCalling,
      remainingContext: ctx.config.maxModelLen - promptTokens.length,
    });
    const outputTokens = plannedTokenCount(plan);
    const usage: Usage = { prompt_tokens: promptTokens.length, completion_tokens: outputTokens, total_tokens: promptTokens.length + outputTokens };
    const base = { id: `chatcmpl-${requestIdFor(req)}`, created: unixSeconds(), model };

    const signal = clientGoneSignal(res);
    const admission = ctx.engine.admit(signal); // throws QueueFullError -> 429 while we can still send a status
    admission.catch(() => undefined); // handled where awaited; avoid an unhandled rejection if we bail out first
    const stream = request.stream === true;
    if (stream) startEventStream(res);

    let dropped = false;
    const drop = (): never => {
      dropped = true;
      // destroySoon flushes the chunks already written, then destroys: the client sees exactly N tokens.
      (res.socket ?? req.socket).destroySoon();
      throw new StreamDropped();
    };
    const onToken = (i: number): void => {
      if (dropAfter !== undefined && i >= dropAfter) drop();
      if (errorAfter !== undefined && i >= errorAfter) throw new InjectedEngineError();
      if (stream) writeTokenChunk(res, base, plan, i);
      if (dropAfter !== undefined && i + 1 >= dropAfter) drop();
    };

    try {
      await ctx.engine.run(admission, { promptTokens, outputTokens, useCache: true, signal, arrivalMs, onToken });
    } catch (err) {
      if (dropped) {
        ctx.counters.failedTotal++;
        return;
      }
      if (err instanceof InjectedEngineError) {
        // Rethrown: the error handler answers 500, or, mid-stream, sends the error event and [DONE].
        ctx.counters.failedTotal++;
        ctx.metrics.requestFinished("abort", (nowMs() - arrivalMs) / 1000);
      }
      if (signal.aborted) {
        ctx.counters.cancelledTotal++;
        ctx.metrics.requestFinished("abort", (nowMs() - arrivalMs) / 1000);
        return;
      }
      throw err;
    }

    ctx.metrics.requestFinished(plan.finishReason === "length" ? "length" : "stop", (nowMs() - arrivalMs) / 1000);
    if (stream) {
      writeEvent(res, chunk(base, [{ index: 0, delta: {}, logprobs: null, finish_reason: plan.finishReason, stop_reason: null }]));
      if (includeUsage(request)) writeEvent(res, { ...chunk(base, []), usage });
      writeDone(res);
      res.end();
    } else {
      res.json(completionBody(base, plan, usage));
    }
    ctx.counters.completedTotal++;
  };
}

/** vLLM's `_validate_input` checks, with its wording and `param`s. */
function checkContextLength(maxModelLen: number, promptTokens: number, maxTokens: number | null): void {
  if (promptTokens >= maxModelLen) {
    throw new VllmError(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
      "input_tokens",
    );
  }
  if (maxTokens !== null && promptTokens + maxTokens > maxModelLen) {
    throw new VllmError(
      400,
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${maxModelLen} tokens and your request has ${promptTokens} input tokens (${maxTokens} > ${maxModelLen} - ${promptTokens}).`,
      "max_tokens",
    );
  }
}

interface ChunkBase {
  id: string;
  created: number;
  model: string;
}

function chunk(base: ChunkBase, choices: unknown[]) {
  return { id: base.id, object: "chat.completion.chunk", created: base.created, model: base.model, choices };
}

/** Token i of the plan as a stream chunk; the first token is preceded by vLLM's role chunk. */
function writeTokenChunk(res: Response, base: ChunkBase, plan: CompletionPlan, i: number): void {
  if (i === 0) writeEvent(res, chunk(base, [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]));
  let delta: Record<string, unknown>;
  if (plan.mode === "text") {
    delta = { content: plan.pieces[i] ?? "" };
  } else if (i === 0) {
    delta = { tool_calls: [{ index: 0, id: plan.id, type: "function", function: { name: plan.name } }] };
  } else {
    delta = { tool_calls: [{ index: 0, function: { arguments: plan.argumentPieces[i - 1] ?? "" } }] };
  }
  writeEvent(res, chunk(base, [{ index: 0, delta, logprobs: null, finish_reason: null }]));
}

function completionBody(base: ChunkBase, plan: CompletionPlan, usage: Usage) {
  const message =
    plan.mode === "text"
      ? { role: "assistant", content: plan.pieces.join(""), refusal: null, annotations: null, audio: null, function_call: null, reasoning_content: null }
      : {
          role: "assistant",
          content: null,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [{ id: plan.id, type: "function", function: { name: plan.name, arguments: plan.argumentPieces.join("") } }],
          reasoning_content: null,
        };
  return {
    id: base.id,
    object: "chat.completion",
    created: base.created,
    model: base.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: plan.finishReason, stop_reason: null }],
    service_tier: null,
    system_fingerprint: null,
    usage: { ...usage, prompt_tokens_details: null },
    prompt_logprobs: null,
    kv_transfer_params: null,
  };
}
