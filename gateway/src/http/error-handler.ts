import type { NextFunction, Request, Response } from "express";
import { ApiError, errors } from "../api/errors";
import { maybeContextOf } from "../context/request-context";
import type { Logger } from "../observability/logger";
import { ClientGone } from "../context/client-gone";
import { bodyStillArriving } from "./lingering-close";
import { SSE_DONE, sseErrorEvent } from "../api/sse-events";

/** Errors of client input raised outside the gateway's own code, mapped to envelopes. */
function fromFramework(err: unknown): ApiError | undefined {
  // Express's router decodes path parameters and throws URIError on malformed percent-encoding.
  if (err instanceof URIError) return errors.invalidPath();
  return undefined;
}

/** The last middleware: whatever went wrong leaves as the envelope, with the right status and headers. */
export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof ClientGone) {
      // Nobody is left to answer; the request line records the abort.
      if (!res.destroyed) res.destroy();
      return;
    }
    const apiErr = err instanceof ApiError ? err : (fromFramework(err) ?? errors.internal());
    const ctx = maybeContextOf(res);
    if (apiErr.status === 500 && !(err instanceof ApiError)) log.error({ err, requestId: ctx?.requestId }, "unhandled error");
    if (ctx) ctx.log.errorCode = apiErr.code;

    if (res.headersSent) {
      // A stream already started: the status is gone, so the error travels in the SSE body (as vLLM does).
      if (!res.writableEnded && !res.destroyed && String(res.getHeader("content-type")).startsWith("text/event-stream")) {
        res.write(sseErrorEvent(apiErr));
        res.write(SSE_DONE);
        res.end();
      } else if (!res.writableEnded) res.destroy();
      return;
    }
    if (res.destroyed) return;
    res.status(apiErr.status);
    for (const [k, v] of Object.entries(apiErr.headers)) res.setHeader(k, v);
    // An early answer (the body not read): the connection closes once the rest of the body is dropped (lingering-close.ts).
    if (bodyStillArriving(req)) res.setHeader("connection", "close");
    res.json(apiErr.toEnvelope());
  };
}
