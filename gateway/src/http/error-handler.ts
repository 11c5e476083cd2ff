import type { NextFunction, Request, Response } from "express";
import { ApiError, errors } from "../api/errors";
import type { Logger } from "../observability/logger";
import { requestLog } from "./request-log";
import { SSE_DONE, sseErrorEvent } from "../upstream/forward";

/** body-parser's error types, mapped to envelopes. */
function fromBodyParser(err: { type?: string; status?: number; limit?: number; message?: string }): ApiError | undefined {
  switch (err.type) {
    case "entity.too.large":
      return errors.bodyTooLarge(err.limit ?? 0);
    case "entity.parse.failed":
      return errors.malformedJson();
    case "encoding.unsupported":
    case "charset.unsupported":
      return new ApiError(415, err.message ?? "Unsupported body encoding.", "invalid_request_error", "unsupported_encoding");
    case "request.size.invalid":
    case "stream.encoding.set":
    case "request.aborted":
      return errors.invalidRequest(err.message ?? "The request body could not be read.");
    default:
      return undefined;
  }
}

/** The last middleware: whatever went wrong leaves as the envelope, with the right status and headers. */
export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let apiErr: ApiError;
    if (err instanceof ApiError) apiErr = err;
    else {
      apiErr = fromBodyParser(err as Record<string, never>) ?? errors.internal();
      if (apiErr.status === 500) log.error({ err, requestId: res.locals.requestId, path: req.path }, "unhandled error");
    }
    const fields = res.locals.log ? requestLog(res) : undefined;
    if (fields) fields.errorCode = apiErr.code;

    if (res.headersSent) {
      // A stream already started: the status is gone, so the error travels in the SSE body (as vLLM does).
      if (!res.writableEnded && !res.destroyed && String(res.getHeader("content-type")).startsWith("text/event-stream")) {
        res.write(sseErrorEvent(apiErr));
        res.write(SSE_DONE);
        res.end();
      } else if (!res.writableEnded) res.destroy();
      return;
    }
    res.status(apiErr.status);
    for (const [k, v] of Object.entries(apiErr.headers)) res.setHeader(k, v);
    res.json(apiErr.toEnvelope());
  };
}
