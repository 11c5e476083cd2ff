import type { Request, Response } from "express";
import { renderChatPrompt } from "../chat-prompt";
import { type CompletionPlan, planCompletion, plannedTokenCount, plannedTokens, promptPrng } from "../completion-plan";
import { badRequest } from "../errors";
import { nowMs } from "../latency";
import { chatLogprobs, type TokenLogprob, tokenLogprobs } from "../logprobs";
import { ChatCompletionRequestSchema, continuousUsage, includeUsage, requestedMaxTokens } from "../requests/chat-request";
import { parseRequest } from "../requests/validation";
import { tokenize } from "../tokenizer";
import { checkContextLength } from "../context-length";
import { beginInferenceRequest, maybeInjectFailure, requestIdFor, resolveTarget, type SimulatorContext, unixSeconds } from "./context";
import { faultPlan, runGeneration } from "./generation";
import { writeDone, writeEvent } from "./sse";

/** POST /v1/chat/completions, streaming and not, with vLLM's response shapes. */

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
    const { model, adapter } = await resolveTarget(ctx, request.model);
    const faults = faultPlan(ctx, req);

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
    const logprobs = request.logprobs === true ? tokenLogprobs(plannedTokens(plan), request.top_logprobs ?? 0) : null;
    const usage: Usage = { prompt_tokens: promptTokens.length, completion_tokens: outputTokens, total_tokens: promptTokens.length + outputTokens };
    const base = { id: `chatcmpl-${requestIdFor(req)}`, created: unixSeconds(), model };

    const stream = request.stream === true;
    // continuous_usage_stats: the usage after `n` generated tokens, on every chunk.
    const running = continuousUsage(request) ? (n: number): Usage => ({ prompt_tokens: promptTokens.length, completion_tokens: n, total_tokens: promptTokens.length + n }) : undefined;
    const results = await runGeneration({
      ctx,
      req,
      res,
      arrivalMs,
      stream,
      faults,
      adapter,
      jobs: [{ promptTokens, outputTokens, writeToken: (i) => writeTokenChunk(res, base, plan, i, logprobs, running) }],
    });
    if (!results) return;

    ctx.metrics.requestFinished(plan.finishReason === "length" ? "length" : "stop", (nowMs() - arrivalMs) / 1000);
    if (stream) {
      writeEvent(res, withUsage(chunk(base, [{ index: 0, delta: {}, logprobs: null, finish_reason: plan.finishReason, stop_reason: null }]), running?.(outputTokens)));
      if (includeUsage(request)) writeEvent(res, { ...chunk(base, []), usage });
      writeDone(res);
      res.end();
    } else {
      res.json(completionBody(base, plan, logprobs, usage));
    }
    ctx.counters.completedTotal++;
  };
}

interface ChunkBase {
  id: string;
  created: number;
  model: string;
}

function chunk(base: ChunkBase, choices: unknown[]) {
  return { id: base.id, object: "chat.completion.chunk", created: base.created, model: base.model, choices };
}

/** A chunk with vLLM's continuous usage (its last member, as vLLM serializes it), when asked for. */
function withUsage<T extends object>(c: T, usage: Usage | undefined): T | (T & { usage: Usage }) {
  return usage ? { ...c, usage } : c;
}

/** Token i of the plan as a stream chunk, with its log probabilities if asked; the first is preceded by vLLM's role chunk. */
function writeTokenChunk(res: Response, base: ChunkBase, plan: CompletionPlan, i: number, logprobs: TokenLogprob[] | null, running?: (n: number) => Usage): void {
  if (i === 0) writeEvent(res, withUsage(chunk(base, [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]), running?.(0)));
  let delta: Record<string, unknown>;
  if (plan.mode === "text") {
    delta = { content: plan.pieces[i] ?? "" };
  } else if (i === 0) {
    delta = { tool_calls: [{ index: 0, id: plan.id, type: "function", function: { name: plan.name } }] };
  } else {
    delta = { tool_calls: [{ index: 0, function: { arguments: plan.argumentPieces[i - 1] ?? "" } }] };
  }
  const position = logprobs?.[i];
  writeEvent(res, withUsage(chunk(base, [{ index: 0, delta, logprobs: position ? chatLogprobs([position]) : null, finish_reason: null }]), running?.(i + 1)));
}

function completionBody(base: ChunkBase, plan: CompletionPlan, logprobs: TokenLogprob[] | null, usage: Usage) {
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
    choices: [{ index: 0, message, logprobs: logprobs ? chatLogprobs(logprobs) : null, finish_reason: plan.finishReason, stop_reason: null }],
    service_tier: null,
    system_fingerprint: null,
    usage: { ...usage, prompt_tokens_details: null },
    prompt_logprobs: null,
    kv_transfer_params: null,
  };
}
