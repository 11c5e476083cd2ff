import type { Request, Response } from "express";
import { planCompletion, promptPrng, type TextPlan } from "../completion-plan";
import { checkContextLength } from "../context-length";
import { badRequest } from "../errors";
import { nowMs } from "../latency";
import { completionLogprobs, type EchoedToken, type TokenLogprob, tokenLogprobs } from "../logprobs";
import type { ChatCompletionRequest } from "../requests/chat-request";
import { continuousUsage, includeUsage } from "../requests/chat-request";
import { type CompletionPrompt, completionMaxTokens, completionPrompts, type CompletionRequest, CompletionRequestSchema } from "../requests/completions-request";
import { parseRequest } from "../requests/validation";
import { splitIntoTokenPieces } from "../tokenizer";
import { beginInferenceRequest, maybeInjectFailure, requestIdFor, resolveTarget, type SimulatorContext, unixSeconds } from "./context";
import { faultPlan, runGeneration } from "./generation";
import { writeDone, writeEvent } from "./sse";

/** POST /v1/completions (legacy text completions), streaming and not, with vLLM's response shapes. */

/** What one prompt answers: its text pieces (one token each) and why it ended. */
interface Choice {
  prompt: CompletionPrompt;
  pieces: string[];
  finishReason: "stop" | "length";
}

/** With `logprobs`: each generated token's, and, with `echo`, the prompt's (vLLM's prompt logprobs). */
interface ChoiceLogprobs {
  generated: TokenLogprob[];
  prompt: (TokenLogprob | EchoedToken)[];
}

export function completionsHandler(ctx: SimulatorContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrivalMs = nowMs();
    beginInferenceRequest(ctx, req);
    const request = parseRequest(CompletionRequestSchema, req.body);
    if (ctx.config.kind !== "generate") throw badRequest("The model does not support Completions API");
    const { model, adapter } = await resolveTarget(ctx, request.model);
    const faults = faultPlan(ctx, req);
    if (request.suffix != null) throw badRequest("suffix is not currently supported");
    const prompts = completionPrompts(request.prompt);
    if (prompts.length === 0) throw badRequest("Either prompt or prompt_embeds must be provided and non-empty.");
    const maxTokens = completionMaxTokens(request);
    for (const prompt of prompts) checkContextLength(ctx.config.maxModelLen, prompt.tokens.length, maxTokens);
    maybeInjectFailure(ctx);

    const choices = prompts.map((prompt) => planChoice(ctx, model, request, prompt, maxTokens));
    const base = { id: `cmpl-${requestIdFor(req)}`, created: unixSeconds(), model };
    const echo = request.echo === true;
    const topN = request.logprobs;
    const logprobs = topN == null ? null : choices.map((c): ChoiceLogprobs => ({ generated: tokenLogprobs(c.pieces, topN), prompt: echo ? promptLogprobs(c.prompt, topN) : [] }));
    const stream = request.stream === true;
    const running = continuousUsage(request);
    const results = await runGeneration({
      ctx,
      req,
      res,
      arrivalMs,
      stream,
      faults,
      adapter,
      jobs: choices.map((choice, index) => ({
        promptTokens: choice.prompt.tokens,
        outputTokens: choice.pieces.length,
        writeToken: (i: number) => {
          // vLLM puts the finish reason on the last token's chunk (no separate finish chunk as in chat).
          const last = i === choice.pieces.length - 1;
          const text = (echo && i === 0 ? choice.prompt.text : "") + (choice.pieces[i] ?? "");
          const chunk = streamChunk(base, index, text, last ? choice.finishReason : null, streamLogprobs(logprobs?.[index], choice, i));
          // continuous_usage_stats: this choice's prompt and the tokens it generated so far.
          if (running) chunk.usage = { prompt_tokens: choice.prompt.tokens.length, completion_tokens: i + 1, total_tokens: choice.prompt.tokens.length + i + 1 };
          writeEvent(res, chunk);
        },
      })),
    });
    if (!results) return;

    const e2e = (nowMs() - arrivalMs) / 1000;
    for (const choice of choices) ctx.metrics.requestFinished(choice.finishReason, e2e);
    const usage = usageOf(choices);
    if (stream) {
      choices.forEach((choice, index) => {
        // Nothing generated (a stop sequence at once, or echo with max_tokens 0): the finish still needs a chunk.
        if (choice.pieces.length === 0) writeEvent(res, streamChunk(base, index, echo ? choice.prompt.text : "", choice.finishReason, streamLogprobs(logprobs?.[index], choice, 0)));
      });
      if (includeUsage(request)) writeEvent(res, { id: base.id, object: "text_completion", created: base.created, model, choices: [], usage });
      writeDone(res);
      res.end();
    } else {
      res.json({
        id: base.id,
        object: "text_completion",
        created: base.created,
        model,
        choices: choices.map((choice, index) => ({
          index,
          text: (echo ? choice.prompt.text : "") + choice.pieces.join(""),
          logprobs: logprobs ? completionLogprobs([...(logprobs[index]?.prompt ?? []), ...(logprobs[index]?.generated ?? [])], 0) : null,
          finish_reason: choice.finishReason,
          stop_reason: null,
          token_ids: null,
          prompt_logprobs: null,
          prompt_token_ids: null,
        })),
        service_tier: null,
        system_fingerprint: null,
        usage: { ...usage, prompt_tokens_details: null },
        kv_transfer_params: null,
      });
    }
    ctx.counters.completedTotal++;
  };
}

function planChoice(ctx: SimulatorContext, model: string, request: CompletionRequest, prompt: CompletionPrompt, maxTokens: number | null): Choice {
  // Echo with max_tokens 0 returns the prompt alone.
  if (maxTokens === 0) return { prompt, pieces: [], finishReason: "length" };
  // The planner speaks chat; a text prompt is a chat request without messages (no tools, no roles).
  const sampling: ChatCompletionRequest = {
    messages: [],
    max_tokens: maxTokens,
    stop: request.stop,
    temperature: request.temperature,
    seed: request.seed,
    ignore_eos: request.ignore_eos,
    response_format: request.response_format,
  };
  const plan = planCompletion({
    request: sampling,
    prng: promptPrng(model, prompt.tokens.join(" "), sampling),
    toolCalling: false,
    remainingContext: ctx.config.maxModelLen - prompt.tokens.length,
  }) as TextPlan;
  return { prompt, pieces: plan.pieces, finishReason: plan.finishReason };
}

function usageOf(choices: readonly Choice[]) {
  const prompt_tokens = choices.reduce((n, c) => n + c.prompt.tokens.length, 0);
  const completion_tokens = choices.reduce((n, c) => n + c.pieces.length, 0);
  return { prompt_tokens, total_tokens: prompt_tokens + completion_tokens, completion_tokens };
}

interface ChunkBase {
  id: string;
  created: number;
  model: string;
}

/**
 * The log probabilities a stream chunk carries: token i's (none when nothing was generated), after the echoed
 * prompt's on the first. As vLLM, offsets count from the generated text before the chunk, the echo not included.
 */
function streamLogprobs(logprobs: ChoiceLogprobs | undefined, choice: Choice, i: number) {
  if (!logprobs) return null;
  const generated = logprobs.generated.slice(i, i + 1);
  if (i === 0) return completionLogprobs([...logprobs.prompt, ...generated], 0);
  return completionLogprobs(generated, choice.pieces.slice(0, i).reduce((n, piece) => n + [...piece].length, 0));
}

/** The echoed prompt's tokens with their log probabilities; the first has none. */
function promptLogprobs(prompt: CompletionPrompt, topN: number): (TokenLogprob | EchoedToken)[] {
  // Whitespace rides on the token after it; a prompt's trailing whitespace joins its last token.
  const pieces = prompt.text === "" ? [...prompt.tokens] : splitIntoTokenPieces(prompt.text);
  if (pieces.length > 1 && (pieces[pieces.length - 1] as string).trim() === "") pieces.splice(-2, 2, (pieces[pieces.length - 2] as string) + (pieces[pieces.length - 1] as string));
  return tokenLogprobs(pieces, topN).map((p, i) => (i === 0 ? { token: p.token, logprob: null } : p));
}

/** vLLM serializes completion chunks with every field, nulls included (`exclude_unset=False`). */
function streamChunk(base: ChunkBase, index: number, text: string, finishReason: string | null, logprobs: unknown = null): { usage: Record<string, number> | null } & Record<string, unknown> {
  return {
    id: base.id,
    object: "text_completion",
    created: base.created,
    model: base.model,
    choices: [{ index, text, logprobs, finish_reason: finishReason, stop_reason: null, prompt_token_ids: null, token_ids: null }],
    usage: null,
  };
}
