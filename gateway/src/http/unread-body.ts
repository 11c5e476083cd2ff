import type { IncomingMessage } from "node:http";
import { declaredLength, expectsContinue, hasBody } from "./body/read-body";

/** A client sending a body the size of the limit at a modest rate finishes within this. */
const DISCARD_MS = 3000;
/**
 * Bodies being discarded at once. Each costs a connection and a socket read buffer; without a cap, clients
 * refused by the thousand would turn the courtesy into a way of holding the gateway's connections and memory.
 */
const MAX_DISCARDING = 64;

/**
 * What happens to a body the gateway answered without reading (a refusal, an unknown path). Closing the
 * connection at once would reset it under a client still sending, which then reports EPIPE instead of the
 * answer; so a body of a size the gateway would have accepted is read and thrown away (for at most
 * DISCARD_MS, at most MAX_DISCARDING at once), after which the connection serves the client's next request.
 * A body over the limit, of unknown length, already partly read or never sent (the client waits for
 * 100-continue), or one over the discard cap, closes the connection instead.
 */
export class UnreadBodies {
  private discarding = 0;

  constructor(private readonly limitBytes: number) {}

  /** Called before an early answer is written: true if the connection must close after it. */
  closeAfterEarlyAnswer(req: IncomingMessage): boolean {
    // A request without a body (a GET, `Content-Length: 0`) leaves nothing to discard, even while Node has not
    // yet marked it complete (an answer written synchronously by the handler).
    if (req.complete || !hasBody(req)) return false;
    if (expectsContinue(req) && !req.readableDidRead) return true;
    const declared = declaredLength(req);
    return declared === undefined || declared > this.limitBytes || req.readableDidRead || this.discarding >= MAX_DISCARDING;
  }

  /** Once the answer is out ('finish'): a body still arriving is discarded within bounds, else the socket goes. */
  afterAnswer(req: IncomingMessage): void {
    if (req.complete || req.socket.destroyed) return;
    if (this.discarding >= MAX_DISCARDING) req.socket.destroy();
    else this.discardRest(req);
  }

  private discardRest(req: IncomingMessage): void {
    const socket = req.socket;
    let discarded = 0;
    this.discarding++;
    const stop = (destroy: boolean) => {
      this.discarding--;
      clearTimeout(timer);
      req.off("data", onData).off("end", done).off("close", done);
      if (destroy) socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > this.limitBytes) stop(true);
    };
    const done = () => stop(false);
    const timer = setTimeout(() => stop(true), DISCARD_MS);
    timer.unref();
    req.on("data", onData).once("end", done).once("close", done);
    req.resume();
  }
}
