import type { NextFunction, Request, Response } from "express";
import { openContext } from "../context/request-context";
import type { Accounting } from "../observability/accounting";
import { boundStall } from "./client-stall";
import type { ProbeState } from "./probes";
import { requestIdFrom } from "./request-id";
import type { LingeringClose } from "./lingering-close";

export interface FrontOptions {
  state: ProbeState;
  lingering: LingeringClose;
  accounting: Accounting;
  /** A client that takes none of a finished answer for this long is disconnected. */
  answerStallTimeoutMs: number;
}

/**
 * The first layer every request meets, once: opens the request context (the id, the caller's if sane, echoed
 * on every response), closes the connection after the answer while draining, and hangs the end-of-answer duties
 * on the response: end the request's life ('close': request-context.ts), bound a client that stops reading a
 * finished answer and drop a body left unread ('prefinish'), and account for the request ('close': its log line
 * and metrics).
 */
export function front(opts: FrontOptions) {
  const { state, lingering, accounting, answerStallTimeoutMs } = opts;
  return (req: Request, res: Response, next: NextFunction) => {
    const ctx = openContext(res, requestIdFrom(req.headers["x-request-id"]));
    // First of the response's 'close' listeners: the client leaving aborts every wait and upstream request of the
    // request, and whatever it holds is given back, before anything else hears of the close.
    res.once("close", () => ctx.end(!res.writableFinished));
    res.setHeader("x-request-id", ctx.requestId);
    // Shutting down: serve what still arrives, but close the connection after it, so clients reconnect to a
    // replica that stays (refusing it would drop a request the load balancer already sent here).
    if (state.draining) res.setHeader("connection", "close");
    res.once("prefinish", () => {
      boundStall(res, answerStallTimeoutMs);
      lingering.afterAnswer(req, res);
    });
    const path = req.path;
    if (accounting.accounts(path)) {
      res.once("close", () => {
        // An inference handler may still be winding down a stream the client cut: account once it knows the usage.
        const endedAt = performance.now();
        if (ctx.handled) void ctx.handled.then(() => accounting.closed(req, res, ctx, path, endedAt));
        else accounting.closed(req, res, ctx, path, endedAt);
      });
    }
    next();
  };
}
