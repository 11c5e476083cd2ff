import { clientText } from "./client-text";

/**
 * The OpenAI error envelope and the gateway's catalogue of errors.
 * Every error leaves the gateway as {"error":{"message","type","param","code"}} with `code` a string or null:
 * openai-node only reads `body.error`, and typed clients break on integer codes (see openai-wire.md §6).
 */

export interface ErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export interface ErrorEnvelope {
  error: ErrorBody;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    /** Extra response headers, e.g. Retry-After or x-should-retry. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** The connection cannot carry another request (framing lost, or the client is too slow): close it after this. */
const CLOSE = { connection: "close" } as const;

/** A request over a size limit: sending it again unchanged cannot succeed, so the SDKs must not retry. */
function overLimit(status: number, subjectAndVerb: string, limitBytes: number, code: string, headers: Record<string, string> = {}): ApiError {
  return new ApiError(status, `${subjectAndVerb} the limit of ${limitBytes} bytes.`, "invalid_request_error", code, null, { ...headers, "x-should-retry": "false" });
}

/** Seconds, as both headers the SDKs read: retry-after-ms wins in openai-node, retry-after everywhere else. */
export function retryAfterHeaders(seconds: number): Record<string, string> {
  const s = Math.max(0, seconds);
  return { "retry-after": String(Math.ceil(s)), "retry-after-ms": String(Math.round(s * 1000)) };
}

export const errors = {
  invalidApiKey: () =>
    new ApiError(
      401,
      "Incorrect or missing API key. Send it as 'Authorization: Bearer <API_KEY>'.",
      "invalid_request_error",
      "invalid_api_key",
    ),

  modelNotFound: (model: string) =>
    new ApiError(
      404,
      `The model \`${clientText(model)}\` does not exist or you do not have access to it.`,
      "invalid_request_error",
      "model_not_found",
      "model",
    ),

  invalidRequest: (message: string, param: string | null = null, code: string | null = null) =>
    new ApiError(400, message, "invalid_request_error", code, param),

  malformedJson: (detail = "") =>
    new ApiError(
      400,
      `We could not parse the JSON body of your request${detail ? ` (${detail})` : ""}. Send valid JSON with 'Content-Type: application/json'.`,
      "invalid_request_error",
      "invalid_json",
    ),

  jsonTooDeep: (maxDepth: number) =>
    new ApiError(400, `The JSON body nests deeper than ${maxDepth} levels of objects and arrays.`, "invalid_request_error", "json_too_deep"),

  jsonTooComplex: (maxContainers: number) =>
    new ApiError(400, `The JSON body holds more than ${maxContainers} objects and arrays.`, "invalid_request_error", "json_too_complex"),

  unsupportedContentEncoding: (encoding: string) =>
    new ApiError(
      415,
      `Unsupported Content-Encoding '${clientText(encoding, 64)}'. Send the body uncompressed or with one of gzip, deflate, br.`,
      "invalid_request_error",
      "unsupported_content_encoding",
      null,
      { "x-should-retry": "false" },
    ),

  unsupportedCharset: (charset: string) =>
    new ApiError(
      415,
      `Unsupported charset '${clientText(charset, 64)}'. Send the body as UTF-8.`,
      "invalid_request_error",
      "unsupported_charset",
      null,
      { "x-should-retry": "false" },
    ),

  corruptContentEncoding: (encoding: string) =>
    new ApiError(400, `The request body is not valid ${encoding} data.`, "invalid_request_error", "invalid_content_encoding"),

  requestTimeout: (what: string) =>
    new ApiError(408, `The ${what} did not arrive in time.`, "invalid_request_error", "request_timeout", null, CLOSE),

  headersTooLarge: (limitBytes: number) => overLimit(431, "Request headers exceed", limitBytes, "request_header_fields_too_large", CLOSE),

  malformedHttp: () =>
    new ApiError(400, "The request is not valid HTTP/1.1.", "invalid_request_error", "invalid_http", null, CLOSE),

  expectationFailed: () =>
    new ApiError(417, "Only 'Expect: 100-continue' is supported.", "invalid_request_error", "expectation_failed", null, CLOSE),

  invalidPath: () =>
    new ApiError(400, "The request path is not valid percent-encoded UTF-8.", "invalid_request_error", "invalid_path"),

  /** The key's share of body or answer memory is in use (`what`: "request bodies", "unread answers"). */
  inflightBytesExceeded: (keyName: string, limitBytes: number, what = "request bodies") =>
    new ApiError(
      429,
      `Key '${keyName}' has ${limitBytes} bytes of ${what} in flight already. Retry when earlier requests have finished.`,
      "requests",
      "inflight_bytes_exceeded",
      null,
      retryAfterHeaders(1),
    ),

  /** The gateway's body memory was full and this upload, of the key holding the most, made room for another key. */
  uploadPreempted: () =>
    new ApiError(
      503,
      "The gateway needed the memory this upload held for another client's request; send it again. Retry after 1s.",
      "service_unavailable_error",
      "gateway_overloaded",
      null,
      { ...retryAfterHeaders(1), ...CLOSE },
    ),

  /** The key has its share of the gateway's requests in progress already. */
  tooManyInFlight: (keyName: string, limit: number) =>
    new ApiError(
      429,
      `Key '${keyName}' has ${limit} requests in progress already. Retry when earlier requests have finished.`,
      "requests",
      "concurrency_limit_exceeded",
      null,
      retryAfterHeaders(1),
    ),

  /** The key has its `maxConcurrent` requests in progress, across all gateway replicas. */
  keyConcurrencyLimited: (keyName: string, limit: number, headers: Record<string, string>) =>
    new ApiError(
      429,
      `Concurrency limit reached for key '${keyName}': Limit ${limit} requests in progress. Retry when earlier requests have finished.`,
      "requests",
      "concurrency_limit_exceeded",
      null,
      headers,
    ),

  /** The shared rate-limit store does not answer and the gateway is configured to fail closed. */
  limitsUnavailable: () =>
    new ApiError(
      503,
      "The gateway cannot check this key's rate limits right now (its rate-limit store is unreachable). Retry after 1s.",
      "service_unavailable_error",
      "rate_limit_store_unavailable",
      null,
      retryAfterHeaders(1),
    ),

  /** A key's budget counter must be rebuilt from the usage ledger, and the ledger cannot be read. */
  budgetUnavailable: (keyName: string, detail: string) =>
    new ApiError(
      503,
      `The gateway cannot check key '${keyName}''s budget right now: its count must be read from the usage ledger, which failed (${detail.slice(0, 200)}). Retry after 5s.`,
      "service_unavailable_error",
      "budget_state_unavailable",
      null,
      retryAfterHeaders(5),
    ),

  /** A gateway-wide bound is reached (`what`: "request body memory", "answer memory", "requests in progress"). */
  gatewayOverloaded: (what = "request body memory") =>
    new ApiError(
      503,
      `The gateway is at its limit of ${what}. Retry after 1s.`,
      "service_unavailable_error",
      "gateway_overloaded",
      null,
      retryAfterHeaders(1),
    ),

  bodyTooLarge: (limitBytes: number) => overLimit(413, "Request body exceeds", limitBytes, "request_too_large"),

  unknownUrl: (method: string, path: string) =>
    new ApiError(404, `Invalid URL (${clientText(method, 32)} ${clientText(path)})`, "invalid_request_error", "unknown_url"),

  wrongCategory: (model: string, endpoint: string) =>
    new ApiError(
      400,
      `The model \`${model}\` does not support ${endpoint}.`,
      "invalid_request_error",
      "model_not_supported",
      "model",
    ),

  saturated: (model: string, retryAfterSeconds: number) =>
    new ApiError(
      429,
      `All replicas of model \`${model}\` are at capacity. Retry after ${retryAfterSeconds}s.`,
      "overloaded_error",
      "model_saturated",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  /** model_saturated of a model waking from zero: no replica is at capacity, its hold queue is full. */
  wakeSaturated: (model: string, retryAfterSeconds: number) =>
    new ApiError(
      429,
      `Model \`${model}\` is starting from zero replicas and already holds as many waiting requests as it may. Retry after ${retryAfterSeconds}s.`,
      "overloaded_error",
      "model_saturated",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  /** A LoRA adapter could not be loaded on the replica its request was routed to (the log line says why). */
  adapterLoadFailed: (adapter: string, model: string, retryAfterSeconds: number) =>
    new ApiError(
      503,
      `The adapter \`${adapter}\` could not be loaded on a replica of \`${model}\`. Retry after ${retryAfterSeconds}s.`,
      "service_unavailable_error",
      "adapter_load_failed",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  notReady: (model: string, retryAfterSeconds: number) =>
    new ApiError(
      503,
      `Model \`${model}\` has no ready replica (still starting or unhealthy). Retry after ${retryAfterSeconds}s.`,
      "service_unavailable_error",
      "model_not_ready",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  /**
   * The replicas tried could not be connected to before the request went: they refused or closed the connection
   * (stopping, restarting), or did not answer; none is left to try, or the retry budget ran out.
   */
  replicasUnreachable: (model: string, o: { tried: number; refused: boolean; why: "none left" | "budget"; pool: boolean }, retryAfterSeconds: number) =>
    new ApiError(
      503,
      o.pool
        ? `Model \`${model}\`: its inference gateway ${o.refused ? "refused the connection" : "could not be reached"}. Retry after ${retryAfterSeconds}s.`
        : `Model \`${model}\`: ${o.tried === 1 ? "a replica" : `${o.tried} replicas in turn`} ${o.refused ? "refused the connection (shutting down or restarting)" : "could not be reached"}, ${o.why === "budget" ? "and no other was tried within the retry budget" : "and no other replica is ready"}. Retry after ${retryAfterSeconds}s.`,
      "service_unavailable_error",
      "model_not_ready",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  /** The connection failed after the request went: the model server may have it, so it is not sent again. */
  connectionLost: (model: string, retryAfterSeconds: number) =>
    new ApiError(
      503,
      `Model \`${model}\`: the replica closed the connection before it answered; the request was not sent again, as it may have been received. Retry after ${retryAfterSeconds}s.`,
      "service_unavailable_error",
      "model_not_ready",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  /** A per-key RPM or TPM refusal, in OpenAI's words; `headers` carries x-ratelimit-* and Retry-After. */
  rateLimited: (keyName: string, which: "requests" | "tokens", limit: number | undefined, resetIn: string, headers: Record<string, string>) =>
    new ApiError(
      429,
      `Rate limit reached for key '${keyName}' on ${which} per min (${which === "requests" ? "RPM" : "TPM"}): Limit ${limit}. Please try again in ${resetIn}.`,
      which,
      "rate_limit_exceeded",
      null,
      headers,
    ),

  /**
   * A key's day or month budget is spent: OpenAI's quota refusal (type `insufficient_quota`), which the SDKs must not
   * retry; Retry-After and x-budget-reset say when the period resets.
   */
  budgetExceeded: (keyName: string, resource: "tokens" | "requests", limit: number, period: "day" | "month", label: string, resetAt: Date, waitSeconds: number) =>
    new ApiError(
      429,
      `Key '${keyName}' has used its budget of ${limit.toLocaleString("en-US")} ${resource} for the ${period} ${label} (UTC). It resets at ${resetAt.toISOString()}.`,
      "insufficient_quota",
      "budget_exceeded",
      null,
      { ...retryAfterHeaders(waitSeconds), "x-should-retry": "false", "x-budget-reset": resetAt.toISOString() },
    ),

  upstreamTimeout: (model: string) =>
    new ApiError(504, `Model \`${model}\` did not respond in time.`, "timeout_error", "upstream_timeout"),

  upstreamFailed: (model: string, detail: string) =>
    new ApiError(502, `Model \`${model}\` failed: ${detail}`, "server_error", "upstream_error"),

  /** After a stream started: the model server went silent for longer than the idle timeout between tokens. */
  streamIdle: (model: string) =>
    new ApiError(504, `Model \`${model}\`: the model server stopped sending tokens (idle timeout).`, "timeout_error", "upstream_timeout"),

  /** After a stream started: the model server broke off (closed, or ended without [DONE]). */
  streamInterrupted: (model: string, detail: string) =>
    new ApiError(502, `Model \`${model}\`: ${detail}.`, "server_error", "upstream_stream_interrupted"),

  /** An id the gateway did not mint, or another key's stored response (one answer for both: ids are not revealed). */
  responseNotFound: (id: string, param = "response_id") =>
    new ApiError(404, `Response with id '${clientText(id, 128)}' not found.`, "invalid_request_error", "response_not_found", param),

  /** The replica that stored the response is no longer among the model's replicas: what it stored went with it. */
  responseReplicaGone: (id: string, param = "response_id") =>
    new ApiError(
      404,
      `Response '${clientText(id, 128)}' was stored by a model server replica that is gone (stopped, replaced or scaled down); what it stored is lost. Send the conversation again as input, without previous_response_id.`,
      "invalid_request_error",
      "response_replica_gone",
      param,
      { "x-should-retry": "false" },
    ),

  /** The replica that stored the response is known but not ready (failing health checks): it may come back. */
  responseReplicaUnavailable: (id: string, retryAfterSeconds: number) =>
    new ApiError(
      503,
      `The model server replica that stores response '${clientText(id, 128)}' is not ready. Retry after ${retryAfterSeconds}s.`,
      "service_unavailable_error",
      "response_replica_unavailable",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  /** A follow-up names another model than the one that stored the response (a replica serves one model). */
  responseModelMismatch: (id: string, model: string) =>
    new ApiError(
      400,
      `Response '${clientText(id, 128)}' was made by model \`${model}\`; continue it with that model.`,
      "invalid_request_error",
      "response_model_mismatch",
      "previous_response_id",
    ),

  /** DELETE of a stored response: vLLM cannot delete one (it answers 405 there), so neither can the gateway. */
  responseNotDeletable: () =>
    new ApiError(
      405,
      "Stored responses cannot be deleted: vLLM serves no DELETE for /v1/responses/{id}. A stored response stays in its replica's memory until it is evicted; send `store: false` to keep a response from being stored.",
      "invalid_request_error",
      "method_not_allowed",
      null,
      { allow: "GET" },
    ),

  internal: () =>
    new ApiError(500, "The server had an error while processing your request.", "server_error", "internal_error"),
};
