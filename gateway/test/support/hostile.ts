import { connect } from "node:net";
import { z } from "zod";
import { rssBoundBytes } from "../../src/config/memory-bound";
import { settingsFromEnv, SETTINGS_ENV, type GatewaySettings } from "../../src/config/settings";
import { MAX_LOG_LINE_BYTES } from "../../src/observability/logger";
import { normalClient, startGatewayProcess, type GatewayProcess, type GatewayProcessOptions } from "../../../scripts/lib/gateway-process";

/**
 * `describe` for the hostile suites: they bind 127.0.0.x source addresses (one per simulated client), which only
 * Linux routes to loopback out of the box, and read the gateway's memory from /proc. Elsewhere the suite is
 * skipped with that reason as the test's name.
 */
export function hostileDescribe(name: string, fn: () => void): void {
  if (process.platform === "linux") describe(name, fn);
  else describe(name, () => it.skip(`needs Linux (binds 127.0.0.x source addresses, reads /proc); this is ${process.platform}`, () => undefined));
}

/** The exact OpenAI error envelope: these four keys, nothing else. */
export const EnvelopeSchema = z.strictObject({
  error: z.strictObject({ message: z.string().min(1), type: z.string().min(1), param: z.string().nullable(), code: z.string().nullable() }),
});

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The gateway closed the connection after answering. */
  closed: boolean;
  /** Milliseconds from connecting to the complete answer (or the close). */
  ms: number;
}

export type Part = string | Buffer | { pauseMs: number };

/**
 * One exchange on a raw socket: writes `parts` (pausing where asked, stopping once the gateway answers or
 * closes), reads the first response, then waits briefly to see whether the connection is closed.
 */
export function exchange(port: number, parts: Part[], opts: { localAddress?: string; timeoutMs?: number } = {}): Promise<RawResponse | { status: 0; closed: true; ms: number; raw: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ port, host: "127.0.0.1", localAddress: opts.localAddress });
    let raw = Buffer.alloc(0);
    let parsed: RawResponse | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parsed ? { ...parsed, closed } : { status: 0, closed: true, ms: Date.now() - started, raw: raw.toString("latin1") });
    };
    const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 10_000);
    const parse = (atClose: boolean) => {
      const text = raw.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
      if (status === 100) {
        raw = raw.subarray(end + 4);
        return parse(atClose);
      }
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers["content-length"] ?? NaN);
      const body = raw.subarray(Buffer.byteLength(text.slice(0, end + 4), "latin1"));
      // Without a length the body ends with the connection.
      if (Number.isFinite(length) ? body.length < length : !atClose) return;
      parsed = { status, headers, body: body.toString("utf8"), closed: false, ms: Date.now() - started };
      // Closed by the gateway within a moment, or kept for another request?
      setTimeout(() => finish(false), 300);
    };
    socket.on("data", (d: Buffer) => {
      raw = Buffer.concat([raw, d]);
      if (!parsed) parse(false);
    });
    socket.on("close", () => {
      if (!parsed) parse(true);
      finish(true);
    });
    socket.on("error", () => undefined);
    socket.on("connect", async () => {
      for (const part of parts) {
        if (done || parsed || socket.destroyed) return;
        if (typeof part === "object" && "pauseMs" in part) await new Promise((r) => setTimeout(r, part.pauseMs));
        else socket.write(part);
      }
    });
  });
}

/** What a client that sends its whole body read back: the first response, if any, and the error that ended it, if any. */
export interface UploadResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The socket error the client got (EPIPE, ECONNRESET), if any. */
  error?: string;
}

/**
 * A client that sends `head` then `size` bytes of body as fast as the socket takes them, without waiting for an
 * answer (as HTTP clients do), and reads whatever comes back meanwhile; resolves once the connection is closed.
 * `allowHalfOpen`: keep sending after the gateway's FIN (Node's sockets end their side when they get one).
 */
export function uploadWhole(port: number, head: string, size: number, opts: { allowHalfOpen?: boolean; localAddress?: string } = {}): Promise<UploadResult> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: opts.localAddress, allowHalfOpen: opts.allowHalfOpen ?? false });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let raw = Buffer.alloc(0);
    let error: string | undefined;
    socket.on("data", (d: Buffer) => (raw = Buffer.concat([raw, d])));
    socket.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on("close", () => {
      const text = raw.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const [statusLine = "", ...lines] = (end < 0 ? "" : text.slice(0, end)).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(":")).trim().toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
      const length = Number(headers["content-length"] ?? 0);
      const body = end < 0 ? "" : raw.subarray(end + 4, end + 4 + length).toString("utf8");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body, error });
    });
    socket.on("connect", () => {
      socket.write(head);
      let left = size;
      const pump = () => {
        while (left > 0 && socket.writable) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!socket.write(piece)) return;
        }
        // All sent: the client now waits for the gateway to close.
      };
      socket.on("drain", pump);
      pump();
    });
  });
}

/** A POST with headers as given (key, length) and nothing else; the body follows in later parts. */
export function postHead(path: string, headers: Record<string, string | number>): string {
  return `POST ${path} HTTP/1.1\r\nHost: gateway\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n")}\r\n\r\n`;
}

/** Asserts a response is the exact envelope with this status and code, as JSON, with a request id. */
export function expectEnvelope(res: { status: number; headers?: Record<string, string>; body?: string }, status: number, code: string | null): z.infer<typeof EnvelopeSchema>["error"] {
  expect({ status: res.status, code: res.body ? tryCode(res.body) : undefined }).toEqual({ status, code });
  expect(res.headers?.["content-type"]).toMatch(/^application\/json/);
  expect(res.headers?.["x-request-id"]).toBeTruthy();
  return EnvelopeSchema.parse(JSON.parse(res.body!)).error;
}

function tryCode(body: string): string | null | undefined {
  try {
    return (JSON.parse(body) as { error?: { code?: string | null } }).error?.code;
  } catch {
    return undefined;
  }
}

/** The production gateway with these settings (env names from SETTINGS_ENV) and its memory bound. */
export async function startHostileTarget(options: GatewayProcessOptions = {}): Promise<{ gw: GatewayProcess; settings: GatewaySettings; boundBytes: number }> {
  const gw = await startGatewayProcess({ keyNames: ["client", "attacker", "attacker2"], ...options });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.settings ?? {})) env[SETTINGS_ENV[k as keyof GatewaySettings]] = String(v);
  const settings = settingsFromEnv(env);
  return { gw, settings, boundBytes: rssBoundBytes(settings) };
}

/**
 * After an attack: a normal client on another address is served at once, the gateway's peak RSS is under the
 * documented bound for its limits, and its log holds no 500, no "unhandled error" and no line over the cap.
 */
export async function expectStillHealthy(gw: GatewayProcess, boundBytes: number): Promise<void> {
  const client = normalClient(gw.url, gw.keys.client!, "127.0.0.2");
  let r = await client.chat();
  // A health probe that timed out while the attack loaded the machine takes the one simulated replica out for a
  // probe interval or two: that is the model's readiness, not the gateway's, and a client retries it.
  for (let tries = 0; tries < 20 && codeOf(r.text) === "model_not_ready"; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    r = await client.chat();
  }
  await client.close();
  expect({ status: r.status, ok: r.ok, code: codeOf(r.text) }).toEqual({ status: 200, ok: true, code: undefined });
  expect(gw.proc.exitCode).toBeNull();
  expect(gw.memory().peak).toBeLessThan(boundBytes);
  await new Promise((resolve) => setTimeout(resolve, 400)); // the gateway flushes its log every 250 ms
  expectCleanLogs(gw);
}

const codeOf = (text: string) => /"code":"([a-z_]+)"/.exec(text)?.[1];

export function expectCleanLogs(gw: GatewayProcess): void {
  for (const line of gw.rawLogs()) expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES);
  const logs = gw.logs();
  expect(logs.filter((l) => "unparseable" in l)).toEqual([]);
  expect(logs.filter((l) => (l.level as number) >= 50 || l.msg === "unhandled error" || l.status === 500)).toEqual([]);
}
