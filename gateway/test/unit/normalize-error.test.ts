import { normalizeUpstreamError, parseErrorBody } from "../../src/upstream/normalize-error";

describe("normalizing model-server errors", () => {
  it("turns vLLM's integer code into a string-or-null code and an OpenAI type", () => {
    const e = normalizeUpstreamError(400, { error: { message: "top_p must be in (0, 1]", type: "BadRequestError", param: "top_p", code: 400 } }, "m");
    expect(e.toEnvelope()).toEqual({ error: { message: "top_p must be in (0, 1]", type: "invalid_request_error", param: "top_p", code: null } });
  });

  it("reads the flat pre-0.10.1 vLLM shape", () => {
    const e = normalizeUpstreamError(400, { object: "error", message: "bad", type: "BadRequestError", param: null, code: 400 }, "m");
    expect(e.toEnvelope().error).toMatchObject({ message: "bad", type: "invalid_request_error", code: null });
  });

  it("does not blame the caller's key for an upstream 401", () => {
    const e = normalizeUpstreamError(401, { error: "Unauthorized" }, "m");
    expect(e.status).toBe(502);
    expect(e.code).toBe("upstream_auth_failed");
    expect(e.headers["x-should-retry"]).toBe("false");
  });

  it("maps a queue-full 429 to a retryable overload with Retry-After", () => {
    const e = normalizeUpstreamError(429, { error: { message: "queue full", type: "TooManyRequests", code: 429 } }, "m");
    expect(e.status).toBe(429);
    expect(e.type).toBe("overloaded_error");
    expect(e.headers["retry-after"]).toBeDefined();
  });

  it("keeps plain-text and HTML bodies as the message, bounded", () => {
    const e = normalizeUpstreamError(502, parseErrorBody("<html>" + "x".repeat(2000) + "</html>"), "m");
    expect(e.status).toBe(502);
    expect(e.message.length).toBeLessThanOrEqual(500);
    expect(e.type).toBe("server_error");
  });

  it("derives context_length_exceeded from vLLM's message", () => {
    const e = normalizeUpstreamError(400, { error: { message: "This model's maximum context length is 8192 tokens. However, you requested 9000", code: 400 } }, "m");
    expect(e.code).toBe("context_length_exceeded");
  });

  it("treats a non-error status (3xx) as a gateway failure", () => {
    expect(normalizeUpstreamError(302, "", "m").status).toBe(502);
  });

  it("recognises an unknown model answer", () => {
    const e = normalizeUpstreamError(404, { error: { message: "The model `x` does not exist.", param: "model", code: 404 } }, "m");
    expect(e.code).toBe("model_not_found");
    expect(e.param).toBe("model");
  });
});
