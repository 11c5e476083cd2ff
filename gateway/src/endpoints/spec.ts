import type { z } from "zod";
import type { ApiError } from "../api/errors";
import type { ModelCategory } from "../config/catalog";
import type { Usage } from "../context/limit-ticket";
import type { TextFix } from "./form-fixes";

/**
 * Which usage a streaming client asked for: none (false), the final usage chunk (true), or also the running usage
 * on every chunk (vLLM's `continuous_usage_stats`).
 */
export type UsageWanted = boolean | "every chunk";

/** Token counts as the model servers report them: one shape, the one the limits settle on. */
export type { Usage };

/** What the request path needs of every endpoint's request, whatever else its body holds. */
export interface EndpointRequest {
  model: string;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; continuous_usage_stats?: boolean } | null;
}

/** What the relay learns from one SSE data payload of the endpoint's stream (its JSON already parsed when it had to be). */
export interface StreamEventFacts {
  /** The payload carries generated output: a token for time-to-first-token and inter-token timing. */
  token: boolean;
  /** The payload only carries usage the client did not ask for: not sent on. */
  drop: boolean;
  usage?: Usage;
  /** The payload to send instead of the model server's (a member cut out of it without a parse). */
  send?: string;
  /** `parsed` was changed (fields stripped): it is sent re-serialized instead of the model server's bytes. */
  rewritten?: boolean;
  /** The last event of a complete stream, for streams that end without `[DONE]` (the Responses API). */
  final?: boolean;
  /** The stream failed in band: the model server's own error event (passed on as it came). */
  error?: string;
}

/**
 * One endpoint of the API, everything that is its own: path, the category of model that serves it, its schema,
 * how its body is rewritten for the model server, what the prefix routing hashes, how its answers report usage
 * and which of its stream events are tokens. The request path (admission, routing, sending, relaying,
 * accounting) is the same for every endpoint: a new endpoint is a new spec in `endpoints/index.ts`, not an
 * edit of the relay.
 */
export interface EndpointSpec<R extends EndpointRequest = EndpointRequest> {
  /** Exact path, routed as such. */
  readonly path: string;
  /** In error messages: "`model` serves <what>". */
  readonly what: string;
  readonly category: ModelCategory;
  readonly schema: z.ZodType<R>;
  /** Whether the request asks for an event stream. */
  streams(request: R): boolean;
  /**
   * The text a model server's prefix cache sees first (for prefix-aware routing): at least its first `maxChars`
   * when there are that many, more is not needed; "" when none.
   */
  promptText(request: R, maxChars: number): string;
  /**
   * Members of the body to replace before it goes upstream (key -> JSON text), beyond `model`. Streams always
   * ask for the usage chunk (token limits and metrics need it); the relay drops it again when the client did not.
   */
  upstreamMembers(request: R, repeated: ReadonlySet<string>): Record<string, string>;
  /** Whether the client asked for the usage-only chunk of a stream itself. */
  clientWantsUsage(request: R): UsageWanted;
  /** `usage` of a whole (non-streamed) answer. */
  usageOf(answer: Record<string, unknown>): Usage | undefined;
  /**
   * Facts of one stream payload. `parsed` is the payload's JSON when the relay had to parse it (model rewrite,
   * errors, usage), else undefined: most token chunks go through as they came, unparsed.
   */
  streamEvent(data: string, parsed: Record<string, unknown> | undefined, clientWantsUsage: UsageWanted): StreamEventFacts;
  /** Whether a payload must be parsed for `streamEvent` (it may carry usage, or something to strip or to see). */
  mayCarryUsage(data: string): boolean;
  /** Puts a whole (non-streamed) answer in the published schema's form, on its text (form-fixes.ts). */
  readonly answerFixes?: readonly TextFix[];
  /** Cleans a whole (non-streamed) answer in place before it is sent; true when it changed (it is re-serialized). */
  cleanAnswer?(answer: Record<string, unknown>): boolean;
  /**
   * Where a stream payload names the model, for the rewrite to the catalog id: whether this payload does (so only
   * those are parsed), and the rewrite. Default: every payload, its top-level `model` (chat, completions chunks).
   */
  streamModel?: { carries(data: string): boolean; rename(payload: Record<string, unknown>, modelId: string): void };
  /**
   * How a stream the model server broke off ends for the client, given the error and the events sent so far.
   * Default: an error event in the envelope, then `data: [DONE]` (chat, completions).
   */
  streamBroken?(err: ApiError, eventsSent: number): string;
  /** Set when the endpoint's answers are stored at the model server (the Responses API): ids are minted by the gateway. */
  readonly storesResponses?: boolean;
  /** The stored response a request continues (`previous_response_id`), which pins it to that response's replica. */
  continues?(request: R): string | undefined;
}

export function asUsage(v: unknown): Usage | undefined {
  return v && typeof v === "object" ? (v as Usage) : undefined;
}

/** Top-level members every endpoint's routing acts on: rewritten when a client repeats them. */
export const ACTED_ON: ReadonlySet<string> = new Set(["model", "stream", "stream_options", "previous_response_id"]);
