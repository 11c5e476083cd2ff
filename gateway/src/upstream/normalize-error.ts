import { ApiError, retryAfterHeaders } from "../api/errors";

/**
 * Turns a model server's error, in whatever shape it arrives, into the gateway's envelope.
 * vLLM >= 0.10.1 sends {"error":{...,"code":<int>}}, older builds a flat {"object":"error",...},
 * its API-key middleware {"error":"Unauthorized"}, proxies plain text or HTML.
 */

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  404: "invalid_request_error",
  413: "invalid_request_error",
  422: "invalid_request_error",
  429: "overloaded_error",
  503: "service_unavailable_error",
  504: "timeout_error",
};

function typeFor(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "server_error" : "invalid_request_error");
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

/** Pulls message/param/code out of any known error body shape. */
export function extractUpstreamError(body: unknown): { message?: string; param?: string; code?: string } {
  const root = asRecord(body);
  if (!root) return { message: str(body) };
  const nested = asRecord(root.error);
  const src = nested ?? root;
  const message =
    str(src.message) ?? str(root.error) ?? str(root.detail) ?? (Array.isArray(root.detail) ? JSON.stringify(root.detail) : undefined);
  return { message, param: str(src.param), code: str(src.code) };
}

/** Best-effort parse of an error body: JSON when it is JSON, else the text (trimmed, bounded). */
export function parseErrorBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.trim().slice(0, 500);
  }
}

export function normalizeUpstreamError(status: number, body: unknown, model: string): ApiError {
  const { message, param, code } = extractUpstreamError(body);
  const msg = message ?? `Model server answered with status ${status}.`;

  // The client's key was valid (we checked it); an upstream 401/403 is our misconfiguration, not theirs.
  // Surfacing it as 401 would make SDKs report the caller's key as wrong.
  if (status === 401 || status === 403) {
    return new ApiError(502, `Model \`${model}\` rejected the gateway's credentials.`, "server_error", "upstream_auth_failed", null, {
      "x-should-retry": "false",
    });
  }
  if (status === 404 && (param === "model" || /model/i.test(msg))) {
    return new ApiError(404, msg, "invalid_request_error", "model_not_found", "model");
  }
  // vLLM has no 429 (a full engine queues; the gateway decides saturation from its own signals, model-pool.ts). One
  // comes from an InferencePool's endpoint picker shedding load in pool mode, or a proxy: it means the same to clients.
  if (status === 429) {
    return new ApiError(429, msg, "overloaded_error", code ?? "model_saturated", param ?? null, retryAfterHeaders(1));
  }
  if (status === 503) {
    return new ApiError(503, msg, "service_unavailable_error", code ?? "model_not_ready", param ?? null, retryAfterHeaders(2));
  }
  const derivedCode = code ?? (/maximum context length/i.test(msg) ? "context_length_exceeded" : null);
  // Statuses outside 4xx/5xx (e.g. a 3xx from a misrouted proxy) are a gateway-side failure for the client.
  const outStatus = status >= 400 && status <= 599 ? status : 502;
  return new ApiError(outStatus, msg, typeFor(outStatus), derivedCode, param ?? null);
}
