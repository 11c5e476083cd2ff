import { randomUUID } from "node:crypto";
import { combineHashes, createPrng, hashString, randomSeed, type Prng } from "./prng";
import { type ChatCompletionRequest, requestedMaxTokens, stopSequences } from "./requests/chat-request";
import { generateTextPieces, truncateAtStop } from "./text-generator";
import { splitIntoTokenPieces } from "./tokenizer";
import { structuredOutputText } from "./structured-output";
import { generateToolArguments } from "./tool-calls";

/**
 * Decides, before any time is spent, what the model will answer: the token pieces and finish reason.
 * The engine then pays the latency for each piece as it is streamed.
 */

export type FinishReason = "stop" | "length" | "tool_calls";

export interface TextPlan {
  mode: "text";
  /** One token per piece; concatenated they form the content. */
  pieces: string[];
  finishReason: "stop" | "length";
}

export interface ToolCallPlan {
  mode: "tool_call";
  id: string;
  name: string;
  /** The `arguments` JSON, one token per piece (possibly cut short by max_tokens). */
  argumentPieces: string[];
  finishReason: FinishReason;
}

export type CompletionPlan = TextPlan | ToolCallPlan;

/** Tokens the plan produces (the function name of a tool call counts as one token). */
export function plannedTokenCount(plan: CompletionPlan): number {
  return plan.mode === "text" ? plan.pieces.length : 1 + plan.argumentPieces.length;
}

/** The text of each token the plan produces, in order (a tool call's first is its function name). */
export function plannedTokens(plan: CompletionPlan): string[] {
  return plan.mode === "text" ? plan.pieces : [plan.name, ...plan.argumentPieces];
}

/**
 * Greedy (temperature 0) or seeded requests are deterministic: the PRNG seed derives from the model and
 * the rendered prompt (plus the seed), so the same request gives the same answer on every replica.
 */
export function promptPrng(model: string, prompt: string, request: ChatCompletionRequest): Prng {
  const base = hashString(`${model}\u0000${prompt}`);
  if (request.seed != null && request.seed !== -1) return createPrng(combineHashes(base, hashString(String(request.seed))));
  if (request.temperature === 0) return createPrng(base);
  return createPrng(randomSeed());
}

export interface PlanInput {
  request: ChatCompletionRequest;
  prng: Prng;
  /** Whether this model was started with tool calling (vLLM `--enable-auto-tool-choice`). */
  toolCalling: boolean;
  /** max_model_len minus the prompt's tokens. */
  remainingContext: number;
}

export function planCompletion({ request, prng, toolCalling, remainingContext }: PlanInput): CompletionPlan {
  const maxTokens = requestedMaxTokens(request);
  const limit = Math.min(maxTokens ?? Number.POSITIVE_INFINITY, remainingContext);
  const tool = chooseTool(request, toolCalling, prng);
  if (tool) {
    const named = typeof request.tool_choice === "object" && request.tool_choice !== null;
    let argumentPieces = splitIntoTokenPieces(generateToolArguments(tool.function.parameters, prng));
    let finishReason: FinishReason = named ? "stop" : "tool_calls";
    if (1 + argumentPieces.length > limit) {
      argumentPieces = argumentPieces.slice(0, Math.max(0, limit - 1));
      finishReason = "length";
    }
    // vLLM's tool-call ids: "chatcmpl-tool-" + 32 hex chars.
    return { mode: "tool_call", id: `chatcmpl-tool-${randomUUID().replace(/-/g, "")}`, name: tool.function.name, argumentPieces, finishReason };
  }
  // Under response_format the answer is the JSON text; a limit below its length cuts it (invalid JSON, `length`).
  const structured = structuredOutputText(request.response_format, prng);
  if (structured !== null) {
    const all = splitIntoTokenPieces(structured);
    const cut = all.length > limit;
    const { pieces, stopped } = truncateAtStop(cut ? all.slice(0, limit) : all, stopSequences(request));
    return { mode: "text", pieces, finishReason: cut && !stopped ? "length" : "stop" };
  }
  // The "natural" answer length stands in for the model emitting EOS; ignore_eos runs to the limit.
  const natural = request.ignore_eos === true && Number.isFinite(limit) ? limit : prng.int(16, 64);
  const count = Math.min(natural, limit);
  const generated = generateTextPieces(prng, count);
  const { pieces, stopped } = truncateAtStop(generated, stopSequences(request));
  const finishReason = stopped || (natural <= limit && request.ignore_eos !== true) ? "stop" : "length";
  return { mode: "text", pieces, finishReason };
}

/**
 * A tool-capable model calls a tool when tools are offered, unless told not to (`tool_choice: "none"`) or
 * it has just been given a tool result (then it answers in text, so agent loops terminate).
 */
function chooseTool(request: ChatCompletionRequest, toolCalling: boolean, prng: Prng) {
  const tools = request.tools;
  if (!toolCalling || !tools || tools.length === 0) return null;
  const choice = request.tool_choice ?? "auto";
  if (choice === "none") return null;
  if (typeof choice === "object") return tools.find((t) => t.function.name === choice.function.name) ?? null;
  const lastRole = request.messages[request.messages.length - 1]?.role;
  if (choice === "auto" && lastRole === "tool") return null;
  return prng.pick(tools);
}
