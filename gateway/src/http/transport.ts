import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { errors, type ApiError } from "../api/errors";
import type { GatewaySettings } from "../config/settings";
import { clientErrorHandler, errorAnswer } from "./client-error";
import { ConnectionGuard, type ConnectionEvents } from "./connection-guard";
import type { LingeringClose } from "./lingering-close";
import { requestIdFrom } from "./request-id";

export type TransportLimits = Pick<
  GatewaySettings,
  "maxConnections" | "maxConnectionsPerAddress" | "maxHeaderBytes" | "headersTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs" | "bodyLimitBytes"
>;

export interface TransportEvents extends ConnectionEvents {
  /** Node reported a client error (malformed HTTP, a timeout, a reset); `answered` is what the client got. */
  clientError(code: string, answered: ApiError | undefined): void;
}

export interface Transport {
  server: Server;
  guard: ConnectionGuard;
  /** maxConnections after clamping to the process's open-file limit. */
  maxConnections: number;
}

/** The soft (or hard) open-file limit of this process (Linux), or undefined where it cannot be read. */
export function openFileLimit(limitsFile = "/proc/self/limits", which: "soft" | "hard" = "soft"): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync(limitsFile, "utf8"));
    const value = m?.[which === "soft" ? 1 : 2];
    return value && value !== "unlimited" ? Number(value) : undefined;
  } catch {
    return undefined;
  }
}

/** A quarter of the descriptors stays free for model-server connections, the keys file and logs. */
export function clampToFileLimit(maxConnections: number, fileLimit: number | undefined): number {
  return fileLimit === undefined ? maxConnections : Math.max(1, Math.min(maxConnections, Math.floor(fileLimit * 0.75)));
}

/**
 * The HTTP server with every transport limit in place: header size and time, whole-request time, keep-alive
 * idle time, connection caps, envelopes for what Node's parser refuses, and 100-continue answered only once
 * the request is admitted (see admission.ts: a refused client never sends its body). A connection closing while
 * its client may still be sending (after an early answer, or pipelined past the cap) closes through `lingering`,
 * and no request parsed on it after that reaches `app`.
 */
export function createTransport(app: RequestListener, limits: TransportLimits, events: TransportEvents, lingering: LingeringClose): Transport {
  const responses = new WeakMap<Socket, ServerResponse>();
  const dispatch = (req: IncomingMessage, res: ServerResponse) => {
    if (!lingering.accepts(req.socket) || !guard.onRequest(req, res)) return;
    responses.set(req.socket, res);
    res.once("close", () => {
      if (responses.get(req.socket) === res) responses.delete(req.socket);
    });
    app(req, res);
  };
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks both timeouts on this period (30 s by default, which would stretch a 10 s limit to 40 s).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    dispatch,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;

  const maxConnections = clampToFileLimit(limits.maxConnections, openFileLimit());
  const guard = new ConnectionGuard({ maxConnections, maxConnectionsPerAddress: Math.min(limits.maxConnectionsPerAddress, maxConnections) }, events, lingering);
  guard.attach(server);
  // With a listener here Node does not send "100 Continue" by itself: the body reader does, after admission.
  server.on("checkContinue", (req, res) => server.emit("request", req, res));
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    const { status, headers, body } = errorAnswer(errors.expectationFailed(), requestIdFrom(req.headers["x-request-id"]));
    res.writeHead(status, headers).end(body);
  });
  server.on(
    "clientError",
    clientErrorHandler({
      maxHeaderBytes: limits.maxHeaderBytes,
      bodyLimitBytes: limits.bodyLimitBytes,
      responseOf: (socket) => responses.get(socket),
      owned: (socket) => lingering.owns(socket),
      report: (code, answered) => events.clientError(code, answered),
    }),
  );
  return { server, guard, maxConnections };
}
