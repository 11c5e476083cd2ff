import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, Response } from "express";
import { declaredLength, expectsContinue } from "./body/read-body";

/**
 * What happens to a body the gateway answered without reading (a refusal, an unknown path, a body cut off at
 * a limit). Discarding a small rest keeps the connection for the client's next request; anything larger, of
 * unknown length, or never sent (the client still waits for 100-continue) closes the connection instead,
 * because reading it would spend the gateway's bandwidth and time on a request it already refused.
 */

/** Discarded at most, after the answer, before the connection is closed instead. */
const DISCARD_BYTES = 64 * 1024;
/** The rest of a small body normally follows within a round trip; a client slower than this is cut off. */
const DISCARD_MS = 2000;

/** Called before an early answer is written: should the connection close after it? */
export function closeAfterEarlyAnswer(req: IncomingMessage): boolean {
  if (req.complete) return false;
  if (expectsContinue(req) && !req.readableDidRead) return true;
  const declared = declaredLength(req);
  return declared === undefined || declared > DISCARD_BYTES || req.readableDidRead;
}

/** Middleware: once the answer is out, a body still arriving is discarded within bounds, else the socket goes. */
export function boundUnreadBodies() {
  return (req: Request, res: Response, next: NextFunction) => {
    res.once("finish", () => {
      if (!req.complete && !req.socket.destroyed) discardRest(req);
    });
    next();
  };
}

function discardRest(req: IncomingMessage): void {
  const socket = req.socket;
  let discarded = 0;
  const stop = (destroy: boolean) => {
    clearTimeout(timer);
    req.off("data", onData).off("end", done).off("close", done);
    if (destroy) socket.destroy();
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_BYTES) stop(true);
  };
  const done = () => stop(false);
  const timer = setTimeout(() => stop(true), DISCARD_MS);
  timer.unref();
  req.on("data", onData).once("end", done).once("close", done);
  req.resume();
}
