import { randomUUID } from "node:crypto";
import type { CompletionPlan } from "./completion-plan";
import type { ResponsesRequest } from "./requests/responses-request";

/**
 * The Responses API objects in vLLM's shapes (`ResponsesResponse.from_request`, `_make_response_output_items`):
 * the response, its output items (a message, or a function call), and its usage. Ids are vLLM's: `resp_`,
 * `msg_` and `fc_` followed by 32 random hex digits, so they are unique across replicas.
 */

/** 32 random hex digits, vLLM's `random_uuid()`. */
export function randomHex(): string {
  return randomUUID().replace(/-/g, "");
}

export function newResponseId(): string {
  return `resp_${randomHex()}`;
}

export interface OutputText {
  type: "output_text";
  text: string;
  annotations: unknown[];
  logprobs: unknown[] | null;
}

export interface OutputMessage {
  id: string;
  type: "message";
  role: "assistant";
  status: "in_progress" | "completed" | "incomplete";
  content: OutputText[];
}

export interface FunctionCallItem {
  id: string;
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed" | "incomplete";
}

export type ResponseOutputItem = OutputMessage | FunctionCallItem;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; input_tokens_per_turn: number[]; cached_tokens_per_turn: number[] };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number; tool_output_tokens: number; output_tokens_per_turn: number[]; tool_output_tokens_per_turn: number[] };
  total_tokens: number;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete";

/** A response object; its fields are vLLM's `ResponsesResponse`, all present (null when unset). */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  output: ResponseOutputItem[];
  usage: ResponseUsage | null;
  [field: string]: unknown;
}

/** The one output item a plan produces, with the ids it keeps from the first stream event to the stored response. */
export interface PlannedItem {
  plan: CompletionPlan;
  itemId: string;
}

export function plannedItem(plan: CompletionPlan): PlannedItem {
  return { plan, itemId: plan.mode === "text" ? `msg_${randomHex()}` : `fc_${randomHex()}` };
}

/** The finished output: no message item when the text is empty (vLLM adds none), else one message or call. */
export function outputItems({ plan, itemId }: PlannedItem): ResponseOutputItem[] {
  if (plan.mode === "text") {
    const text = plan.pieces.join("");
    if (text === "") return [];
    return [{ id: itemId, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [], logprobs: null }] }];
  }
  return [{ id: itemId, type: "function_call", call_id: plan.id, name: plan.name, arguments: plan.argumentPieces.join(""), status: "completed" }];
}

/** `incomplete` when the output hit max_output_tokens (or the context window), as vLLM reports a `length` finish. */
export function statusOf(plan: CompletionPlan): ResponseStatus {
  return plan.finishReason === "length" ? "incomplete" : "completed";
}

export function usageOf(inputTokens: number, cachedTokens: number, outputTokens: number): ResponseUsage {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cachedTokens, input_tokens_per_turn: [], cached_tokens_per_turn: [] },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0, tool_output_tokens: 0, output_tokens_per_turn: [], tool_output_tokens_per_turn: [] },
    total_tokens: inputTokens + outputTokens,
  };
}

export interface ResponseFrame {
  id: string;
  createdAt: number;
  model: string;
  request: ResponsesRequest;
  /** The effective limit: max_output_tokens capped by what the context window leaves. */
  maxOutputTokens: number;
}

/** The response object around an output, echoing the request's settings as vLLM's `from_request` does. */
export function responseObject(frame: ResponseFrame, status: ResponseStatus, output: ResponseOutputItem[], usage: ResponseUsage | null): ResponseObject {
  const { request } = frame;
  return {
    id: frame.id,
    created_at: frame.createdAt,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: request.instructions ?? null,
    metadata: request.metadata ?? null,
    model: frame.model,
    object: "response",
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? 1,
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    background: false,
    max_output_tokens: frame.maxOutputTokens,
    max_tool_calls: request.max_tool_calls ?? null,
    previous_response_id: request.previous_response_id ?? null,
    prompt: null,
    reasoning: request.reasoning ?? null,
    service_tier: request.service_tier ?? "auto",
    status,
    text: request.text ?? null,
    top_logprobs: null,
    truncation: request.truncation ?? "disabled",
    usage,
    user: request.user ?? null,
    input_messages: null,
    output_messages: null,
  };
}
