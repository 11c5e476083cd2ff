import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { GatewaySettings } from "../config/settings";
import { expectsContinue, hasBody } from "./body/read-body";

export type LingerLimits = Pick<GatewaySettings, "lingerTimeMs" | "lingerBytes" | "maxLingeringConnections">;

/**
 * How a lingering connection ended: the body arrived whole (`body_ended`), the client closed or half-closed
 * (`client_closed`), or a bound cut it (`byte_limit`, `time_limit`); `over_cap`: it could not linger at all.
 */
export type LingerOutcome = "body_ended" | "client_closed" | "byte_limit" | "time_limit" | "over_cap";

export interface LingerEvents {
  /** Connections lingering now, after each change. */
  lingering(count: number): void;
  ended(outcome: LingerOutcome): void;
}

/** True when an answer written now leaves a request body unread that the client may still be sending. */
export function bodyStillArriving(req: IncomingMessage): boolean {
  return !req.complete && hasBody(req);
}

/**
 * Lingering close: how a connection ends while its client may still be sending. Closing a socket with bytes
 * arriving makes the kernel answer them with a reset, and a client still writing its body then reports EPIPE or
 * ECONNRESET without reading the answer it was sent (undici, Node's http client, Python's http.client; the OpenAI
 * SDK then re-uploads). So, as nginx's lingering close does, the gateway sends its FIN after the answer, reads and
 * drops what still arrives, counting bytes and holding none, and closes once the client is done, or at the first
 * bound: `lingerBytes`, `lingerTimeMs`. At most `maxLingeringConnections` linger at once; beyond that a connection
 * closes at once, as without lingering.
 *
 * Two cases:
 * - An answer given before the request's body was read (a refusal: 401, 413, 415, 429, 503): the error handler
 *   marks it `connection: close`; the rest of the body is read through Node's parser, which knows where it ends,
 *   and then the socket closes gracefully. An answer that keeps the connection (a handler that ignores a body)
 *   drops the body the same way and serves the next request after it.
 * - Pipelining past the cap (connection-guard.ts): the requests accepted are answered, then the socket closes,
 *   and what the client sends meanwhile is never parsed.
 *
 * A socket closing in either way takes no more requests: one parsed on it afterwards never reaches a handler.
 */
export class LingeringClose {
  private count = 0;
  /** Sockets that take no more requests. */
  private readonly closing = new WeakSet<Socket>();
  /** Sockets reading and dropping now. */
  private readonly active = new WeakSet<Socket>();

  constructor(
    private readonly limits: LingerLimits,
    private readonly events: LingerEvents = { lingering: () => undefined, ended: () => undefined },
  ) {}

  /** Connections lingering now. */
  get lingering(): number {
    return this.count;
  }

  /** False once the socket is closing: a request parsed on it must not reach a handler. */
  accepts(socket: Socket): boolean {
    return !this.closing.has(socket);
  }

  /** True while the socket is closing or lingering: what Node's parser reports on it (a body cut short) concerns nobody. */
  owns(socket: Socket): boolean {
    return this.closing.has(socket) || this.active.has(socket);
  }

  /**
   * Once an answer is handed to the socket ('prefinish', before Node's own end-of-answer work on 'finish'): a body
   * still arriving is read and dropped, within the bounds.
   */
  afterAnswer(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    if (!bodyStillArriving(req) || socket.destroyed || this.active.has(socket)) return;
    const closes = String(res.getHeader("connection")).toLowerCase() === "close";
    if (closes) this.closing.add(socket);
    // A client waiting for "100 Continue" that never got it sends nothing: Node's close is clean.
    if (expectsContinue(req) && !req.readableDidRead) return;
    if (this.count >= this.limits.maxLingeringConnections) {
      this.events.ended("over_cap");
      // An answer that closes is closed by Node; one that keeps the connection would wait on a body nobody reads.
      if (!closes) res.once("finish", () => socket.destroy());
      return;
    }
    this.dropBody(req, socket);
  }

  /** Pipelining past the cap: nothing more is parsed or read on `socket` until closeAfterAnswers(). */
  stopRequests(socket: Socket): void {
    this.closing.add(socket);
    // A 'data' listener takes the socket's bytes from Node's HTTP parser (its listener is removed first), so what
    // the client sends from now on is never parsed; and nothing is read until the answers are out.
    socket.removeAllListeners("data");
    socket.on("data", () => undefined);
    socket.pause();
  }

  /** The accepted answers are written: a FIN after them, then what the client still sends is dropped until it closes. */
  closeAfterAnswers(socket: Socket): void {
    if (socket.destroyed) return;
    if (this.count >= this.limits.maxLingeringConnections) {
      this.events.ended("over_cap");
      socket.destroySoon();
      return;
    }
    const linger = this.begin(socket, (outcome) => {
      socket.off("data", onData).off("end", onClientEnd);
      if (socket.destroyed) return;
      if (outcome === "client_closed") socket.destroySoon();
      else socket.destroy();
    });
    const onData = (chunk: Buffer) => linger.dropped(chunk.length);
    const onClientEnd = () => linger.stop("client_closed");
    socket.on("data", onData).once("end", onClientEnd);
    socket.end();
    socket.resume();
  }

  /** Reads the rest of `req`'s body through Node's parser, dropping it, then closes if the answer closes. */
  private dropBody(req: IncomingMessage, socket: Socket): void {
    let closeAsked = false;
    // Node ends an answer that closes the connection with destroySoon() on 'finish': a FIN, then the socket
    // destroyed, which with the body still arriving resets it. Here the FIN goes; the destroy waits for the body.
    socket.destroySoon = () => {
      closeAsked = true;
      this.closing.add(socket);
      socket.end();
    };
    const linger = this.begin(socket, (outcome) => {
      req.off("data", onData).off("end", onBodyEnd);
      socket.off("end", onClientEnd);
      Reflect.deleteProperty(socket, "destroySoon"); // the prototype's again
      if (socket.destroyed) return;
      if (outcome === "byte_limit" || outcome === "time_limit") socket.destroy();
      else if (closeAsked || outcome === "client_closed") socket.destroySoon();
      // A body that ended before the answer was flushed: Node closes (or keeps) the connection as the answer says.
    });
    const onData = (chunk: Buffer) => linger.dropped(chunk.length);
    const onBodyEnd = () => linger.stop("body_ended");
    const onClientEnd = () => linger.stop("client_closed");
    req.on("data", onData).once("end", onBodyEnd);
    socket.once("end", onClientEnd);
    // Before 'finish', so Node does not dump the body itself (unbounded but for requestTimeoutMs).
    req.resume();
  }

  /** Counts a lingering socket in, with its bounds; `done` runs once, with the outcome. */
  private begin(socket: Socket, done: (outcome: LingerOutcome) => void): { dropped(bytes: number): void; stop(outcome: LingerOutcome): void } {
    this.active.add(socket);
    this.events.lingering(++this.count);
    let bytes = 0;
    let stopped = false;
    const stop = (outcome: LingerOutcome) => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      socket.off("close", onClose);
      this.active.delete(socket);
      this.events.lingering(--this.count);
      this.events.ended(outcome);
      done(outcome);
    };
    const onClose = () => stop("client_closed");
    const timer = setTimeout(() => stop("time_limit"), this.limits.lingerTimeMs);
    timer.unref();
    socket.once("close", onClose);
    return {
      dropped: (n) => {
        bytes += n;
        if (bytes > this.limits.lingerBytes) stop("byte_limit");
      },
      stop,
    };
  }
}
