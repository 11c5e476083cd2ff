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
      `The model \`${model}\` does not exist or you do not have access to it.`,
      "invalid_request_error",
      "model_not_found",
      "model",
    ),

  invalidRequest: (message: string, param: string | null = null, code: string | null = null) =>
    new ApiError(400, message, "invalid_request_error", code, param),

  malformedJson: () =>
    new ApiError(
      400,
      "We could not parse the JSON body of your request. Send valid JSON with 'Content-Type: application/json'.",
      "invalid_request_error",
      "invalid_json",
    ),

  bodyTooLarge: (limitBytes: number) =>
    new ApiError(
      413,
      `Request body exceeds the limit of ${limitBytes} bytes.`,
      "invalid_request_error",
      "request_too_large",
      null,
      { "x-should-retry": "false" },
    ),

  unknownUrl: (method: string, path: string) =>
    new ApiError(404, `Invalid URL (${method} ${path})`, "invalid_request_error", "unknown_url"),

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

  notReady: (model: string, retryAfterSeconds: number) =>
    new ApiError(
      503,
      `Model \`${model}\` has no ready replica (still starting or unhealthy). Retry after ${retryAfterSeconds}s.`,
      "service_unavailable_error",
      "model_not_ready",
      null,
      retryAfterHeaders(retryAfterSeconds),
    ),

  upstreamTimeout: (model: string) =>
    new ApiError(504, `Model \`${model}\` did not respond in time.`, "timeout_error", "upstream_timeout"),

  upstreamFailed: (model: string, detail: string) =>
    new ApiError(502, `Model \`${model}\` failed: ${detail}`, "server_error", "upstream_error"),

  internal: () =>
    new ApiError(500, "The server had an error while processing your request.", "server_error", "internal_error"),
};
