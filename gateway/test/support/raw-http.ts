import { connect, type Socket } from "node:net";

/** One response read off a raw socket: status, lower-cased headers and a content-length body. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Reads the next response (headers and a content-length body) from a raw socket; bytes after it stay for the
 * next call, so pipelined answers can be read one by one.
 */
export function readResponse(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let raw = (socket as Socket & { leftover?: string }).leftover ?? "";
    const tryParse = () => {
      const end = raw.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const [statusLine = "", ...lines] = raw.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers["content-length"] ?? 0);
      if (raw.length - end - 4 < length) return false;
      (socket as Socket & { leftover?: string }).leftover = raw.slice(end + 4 + length);
      socket.off("data", onData).off("close", onClose);
      resolve({ status: Number(statusLine.slice(9, 12)), headers, body: raw.slice(end + 4, end + 4 + length) });
      return true;
    };
    const onData = (d: Buffer) => {
      raw += d.toString("latin1");
      tryParse();
    };
    const onClose = () => reject(new Error(`closed before a response: ${raw.slice(0, 200)}`));
    if (tryParse()) return;
    socket.on("data", onData).once("close", onClose);
  });
}

/** A connected raw socket to 127.0.0.1:`port` (from `localAddress`, if given). */
export function rawConnect(port: number, localAddress?: string, opts: { allowHalfOpen?: boolean } = {}): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress, allowHalfOpen: opts.allowHalfOpen });
    socket.once("connect", () => resolve(socket)).once("error", reject);
  });
}

/** Resolves true once the socket is closed by the other side, false if it is still open after `ms`. */
export function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Every response the socket gets until the other side closes it, in order. */
export async function readUntilClosed(socket: Socket): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  for (;;) {
    try {
      answers.push(await readResponse(socket));
    } catch {
      return answers;
    }
  }
}
