import { STATUS_CODES, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { type ApiError, errors } from "../api/errors";
import { requestIdFrom } from "./request-id";

/** What Node's HTTP parser and timers report, mapped to the envelope a client can read. */
export function clientErrorFor(code: string | undefined, maxHeaderBytes: number, bodyLimitBytes: number): ApiError | undefined {
  switch (code) {
    case "ECONNRESET":
    case "EPIPE":
    case "ETIMEDOUT":
    case "ERR_STREAM_DESTROYED":
      return undefined; // the client is gone: nobody to answer
    case "HPE_HEADER_OVERFLOW":
      return errors.headersTooLarge(maxHeaderBytes);
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return errors.bodyTooLarge(bodyLimitBytes);
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "HPE_HEADERS_TIMEOUT":
      return errors.requestTimeout("request");
    default:
      return errors.malformedHttp();
  }
}

/**
 * An error as status, headers and body, for answers written outside Express (its error handler renders the same
 * envelope through `res.json`).
 */
export function errorAnswer(err: ApiError, requestId: string): { status: number; headers: Record<string, string>; body: string } {
  const body = JSON.stringify(err.toEnvelope());
  return {
    status: err.status,
    headers: { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)), "x-request-id": requestId, ...err.headers },
    body,
  };
}

/** The whole HTTP/1.1 response for an error the parser hit before Express saw a request. */
export function rawErrorResponse(err: ApiError): string {
  const { status, headers, body } = errorAnswer(err, requestIdFrom(undefined));
  const lines = Object.entries({ ...headers, connection: "close" }).map(([k, v]) => `${k}: ${v}`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n${lines.join("\r\n")}\r\n\r\n${body}`;
}

export interface ClientErrorOptions {
  maxHeaderBytes: number;
  bodyLimitBytes: number;
  /** The response in progress on a socket, if any: once its headers are out, nothing more can be said. */
  responseOf(socket: Socket): ServerResponse | undefined;
  /** True for a socket already closing by the gateway's choice (lingering): its errors are left to that. */
  owned(socket: Socket): boolean;
  /** One report per error, already mapped (`undefined`: the client left). */
  report(code: string, answered: ApiError | undefined): void;
}

/**
 * Replaces Node's default `clientError` behaviour (a bare status line) with the envelope, and stays silent for
 * clients that simply went away. The connection is always closed: after a framing error nothing on it can be
 * trusted.
 */
export function clientErrorHandler(opts: ClientErrorOptions) {
  return (err: Error & { code?: string }, socket: Socket) => {
    // A body cut short at the end of a lingering close, say: the client already has its answer.
    if (opts.owned(socket)) return;
    const answer = clientErrorFor(err.code, opts.maxHeaderBytes, opts.bodyLimitBytes);
    opts.report(err.code ?? "unknown", answer);
    const res = opts.responseOf(socket);
    if (answer && socket.writable && !res?.headersSent) socket.end(rawErrorResponse(answer));
    socket.destroySoon();
  };
}
