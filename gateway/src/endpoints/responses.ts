import { ResponsesRequestSchema, type ResponsesRequest } from "../api/generation-schemas";
import type { ApiError } from "../api/errors";
import { applyFixes, nullToEmptyList } from "./form-fixes";
import { normalizeEvent, normalizeResponse } from "./responses-form";
import type { EndpointRequest, EndpointSpec, Usage } from "./spec";

/** Responses usage (`input_tokens`, `output_tokens`) as the gateway counts it. */
export function responsesUsage(v: unknown): Usage | undefined {
  if (!v || typeof v !== "object") return undefined;
  const u = v as { input_tokens?: unknown; output_tokens?: unknown; total_tokens?: unknown; input_tokens_details?: { cached_tokens?: unknown } | null };
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : undefined);
  const cached = num(u.input_tokens_details?.cached_tokens);
  return {
    prompt_tokens: num(u.input_tokens),
    completion_tokens: num(u.output_tokens),
    total_tokens: num(u.total_tokens),
    ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
}

const LOGPROBS_LIST = nullToEmptyList("logprobs");

/** Events that end a Responses stream: there is no `[DONE]`. */
const FINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

/** The Responses API's own error event (OpenAI's shape), numbered after the events already sent. */
export function responsesErrorEvent(err: ApiError, sequence: number): string {
  const data = { type: "error", sequence_number: sequence, code: err.code, message: err.message, param: err.param };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * `POST /v1/responses`, forwarded to vLLM's own Responses API. The gateway chooses the response id (vLLM's
 * `request_id` body field; see responses/response-ids.ts) so follow-ups can find the replica that stores it,
 * and a request with `previous_response_id` is pinned to that replica. Its stream is named events numbered by
 * `sequence_number`, ending with `response.completed` (or `error`), which carries the usage.
 */
export const responses: EndpointSpec<ResponsesRequest & EndpointRequest> = {
  path: "/v1/responses",
  what: "the Responses API",
  category: "generative",
  schema: ResponsesRequestSchema as EndpointSpec<ResponsesRequest & EndpointRequest>["schema"],
  storesResponses: true,
  streams: (r) => r.stream === true,
  promptText: (r) => (r.instructions ?? "") + (typeof r.input === "string" ? r.input : JSON.stringify(r.input)),
  upstreamMembers(r, repeated) {
    // What the gateway decided on (JSON.parse's last value) is what the model server gets.
    const replace: Record<string, string> = {};
    if (repeated.has("stream")) replace.stream = JSON.stringify(r.stream ?? null);
    if (repeated.has("previous_response_id")) replace.previous_response_id = JSON.stringify(r.previous_response_id ?? null);
    return replace;
  },
  clientWantsUsage: () => false,
  continues: (r) => r.previous_response_id ?? undefined,
  usageOf: (answer) => responsesUsage(answer.usage),
  cleanAnswer: (answer) => normalizeResponse(answer),
  // Only the events that carry the response object name its model (`response.model`); deltas do not.
  streamModel: {
    carries: (data) => data.includes('"response":{'),
    rename: (payload, modelId) => {
      const response = payload.response;
      if (response && typeof response === "object") (response as Record<string, unknown>).model = modelId;
    },
  },
  // Events carrying the response object (created, in_progress, completed, …) and error events are looked into.
  mayCarryUsage: (data) => data.includes('"response":{') || data.includes('"type":"error"'),
  streamEvent(data, parsed) {
    const token = data.includes('_text.delta"') || data.includes('_arguments.delta"');
    if (!parsed) {
      // Every `logprobs` of a Responses event is a list in the schema: a null one is fixed on the text, unparsed.
      const fixed = applyFixes(data, LOGPROBS_LIST);
      return { token, drop: false, send: fixed === data ? undefined : fixed };
    }
    const type = typeof parsed.type === "string" ? parsed.type : "";
    const response = parsed.response as Record<string, unknown> | undefined;
    return {
      token,
      drop: false,
      usage: type === "response.completed" || type === "response.incomplete" ? responsesUsage(response?.usage) : undefined,
      rewritten: normalizeEvent(parsed),
      final: FINAL_EVENTS.has(type),
      error: type === "error" ? String(parsed.message ?? "the model server's stream failed") : undefined,
    };
  },
  streamBroken: responsesErrorEvent,
};
