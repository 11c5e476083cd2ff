/**
 * A hostile client as a process of its own (its sockets count against its own open-file limit, not the test
 * runner's). Started by `spawnHostileClients()`; driven over IPC:
 *
 *   parent → {kind: "uploads" | "requests" | "idle", ...}   start an attack (connections are then held)
 *   child  → {type: "ready", fileLimit}                      once, at start
 *   child  → {type: "report", ...AttackReport}              after each attack's connections are settled
 *   parent → {kind: "release"}                               close everything and exit
 *
 * `uploads`: connections from one address, each a POST declaring `size` bytes with a valid key, then sending
 * all but the last byte and stalling. `requests`: connections from one address, each sending one whole request
 * (a long stream, a large answer), optionally reading nothing of the answer after its first bytes. `idle`:
 * connections that never send a byte.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { openFileLimit } from "../../gateway/src/http/transport";
import { spawnWithFileLimit } from "./processes";

export type AttackCommand =
  | { kind: "uploads"; port: number; localAddress: string; key: string; count: number; size: number; window: number }
  | { kind: "requests"; port: number; localAddress: string; key: string; count: number; path: string; body: string; window: number; stopReading: boolean }
  | { kind: "idle"; port: number; localAddresses: string[]; count: number; window: number }
  | { kind: "release" };

export interface AttackReport {
  opened: number;
  connectErrors: number;
  /** Response status lines received, by status. */
  statuses: Record<string, number>;
  /** Error codes of the envelopes received, by code. */
  codes: Record<string, number>;
  closedByServer: number;
  stillOpen: number;
}

export type AttackMessage = { type: "ready"; fileLimit: number | undefined } | ({ type: "report" } & AttackReport);

const sockets = new Set<Socket>();
const send = (m: AttackMessage) => process.send?.(m);

function newReport(): AttackReport {
  return { opened: 0, connectErrors: 0, statuses: {}, codes: {}, closedByServer: 0, stillOpen: 0 };
}

/** Opens `count` connections, at most `window` connecting at once; `start` runs on each once connected. */
async function openMany(count: number, window: number, address: (i: number) => string, port: number, report: AttackReport, start: (s: Socket) => void): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await new Promise<void>((resolve) => {
        const s = connect({ port, host: "127.0.0.1", localAddress: address(i) });
        let connected = false;
        let answer = "";
        s.setNoDelay(true);
        s.on("connect", () => {
          connected = true;
          report.opened++;
          sockets.add(s);
          start(s);
          resolve();
        });
        s.on("data", (d: Buffer) => {
          if (answer.length < 4096) answer += d.toString("latin1");
        });
        s.on("error", () => undefined);
        s.on("close", () => {
          sockets.delete(s);
          if (!connected) {
            report.connectErrors++;
            return resolve();
          }
          if (!released) report.closedByServer++;
          const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
          if (status) report.statuses[status] = (report.statuses[status] ?? 0) + 1;
          const code = /"code":"([a-z_]+)"/.exec(answer)?.[1];
          if (code) report.codes[code] = (report.codes[code] ?? 0) + 1;
        });
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
}

let released = false;
const CHUNK = Buffer.alloc(64 * 1024, 0x20); // whitespace: valid inside any JSON, so only size and time matter

async function uploads(cmd: Extract<AttackCommand, { kind: "uploads" }>): Promise<AttackReport> {
  const report = newReport();
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${cmd.key}\r\nContent-Type: application/json\r\nContent-Length: ${cmd.size}\r\n\r\n`;
  await openMany(cmd.count, cmd.window, () => cmd.localAddress, cmd.port, report, (s) => {
    s.write(head);
    let left = cmd.size - 1;
    const pump = () => {
      while (left > 0 && !s.destroyed) {
        const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
        left -= piece.length;
        if (!s.write(piece)) return;
      }
    };
    s.on("drain", pump);
    pump();
  });
  return settle(report);
}

async function requests(cmd: Extract<AttackCommand, { kind: "requests" }>): Promise<AttackReport> {
  const report = newReport();
  const request = `POST ${cmd.path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${cmd.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(cmd.body)}\r\n\r\n${cmd.body}`;
  await openMany(cmd.count, cmd.window, () => cmd.localAddress, cmd.port, report, (s) => {
    s.write(request);
    // The status line and the first bytes, then nothing: the answer waits on the gateway's side.
    if (cmd.stopReading) s.once("data", () => s.pause());
  });
  return settle(report);
}

async function idle(cmd: Extract<AttackCommand, { kind: "idle" }>): Promise<AttackReport> {
  const report = newReport();
  const per = Math.ceil(cmd.count / cmd.localAddresses.length);
  await openMany(cmd.count, cmd.window, (i) => cmd.localAddresses[Math.floor(i / per) % cmd.localAddresses.length]!, cmd.port, report, () => undefined);
  return settle(report);
}

/**
 * Lets refusals and evictions arrive before counting what is still open: until no connection has closed for a
 * second (at most 30 s), so a gateway slowed by a loaded machine is waited for rather than counted as holding.
 */
async function settle(report: AttackReport): Promise<AttackReport> {
  const deadline = Date.now() + 30_000;
  let open = sockets.size;
  let quietSince = Date.now();
  while (Date.now() - quietSince < 1000 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    if (sockets.size !== open) [open, quietSince] = [sockets.size, Date.now()];
  }
  report.stillOpen = sockets.size;
  return report;
}

if (require.main === module) {
  process.on("message", (cmd: AttackCommand) => {
    if (cmd.kind === "release") {
      released = true;
      for (const s of sockets) s.destroy();
      setTimeout(() => process.exit(0), 100);
      return;
    }
    void (cmd.kind === "uploads" ? uploads(cmd) : cmd.kind === "requests" ? requests(cmd) : idle(cmd)).then((r) => send({ type: "report", ...r }));
  });
  send({ type: "ready", fileLimit: openFileLimit() });
}

/** Descriptors a child keeps for itself (stdio, IPC, the runtime). */
const SPARE_FDS = 64;

/** One attacking process, its open-file limit raised as far as the machine allows. */
export class HostileClient {
  private constructor(
    readonly proc: ChildProcess,
    /** Connections this process can hold at once. */
    readonly capacity: number,
  ) {}

  static async start(wantedFiles = 65_536): Promise<HostileClient> {
    const proc = spawnWithFileLimit(wantedFiles, process.execPath, ["--import", "tsx", join(__dirname, "hostile-client.ts")], {
      cwd: join(__dirname, "..", ".."),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const [ready] = (await once(proc, "message")) as [AttackMessage];
    const limit = ready.type === "ready" ? (ready.fileLimit ?? 1024) : 1024;
    return new HostileClient(proc, Math.max(1, limit - SPARE_FDS));
  }

  /** Starts an attack; resolves once its connections are open (or refused) and settled. */
  async attack(cmd: Exclude<AttackCommand, { kind: "release" }>): Promise<AttackReport> {
    const reply = once(this.proc, "message") as Promise<[AttackMessage]>;
    this.proc.send(cmd);
    const [msg] = await reply;
    if (msg.type !== "report") throw new Error("hostile client: unexpected message");
    const { type: _type, ...report } = msg;
    return report;
  }

  async release(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = once(this.proc, "exit");
    this.proc.send({ kind: "release" } satisfies AttackCommand);
    await exited;
  }
}

/** Sums reports of several processes. */
export function mergeReports(reports: readonly AttackReport[]): AttackReport {
  const out: AttackReport = { opened: 0, connectErrors: 0, statuses: {}, codes: {}, closedByServer: 0, stillOpen: 0 };
  for (const r of reports) {
    out.opened += r.opened;
    out.connectErrors += r.connectErrors;
    out.closedByServer += r.closedByServer;
    out.stillOpen += r.stillOpen;
    for (const [k, v] of Object.entries(r.statuses)) out.statuses[k] = (out.statuses[k] ?? 0) + v;
    for (const [k, v] of Object.entries(r.codes)) out.codes[k] = (out.codes[k] ?? 0) + v;
  }
  return out;
}

/** Processes an attack may spread over before it should rather fail: each is a Node runtime of its own. */
const MAX_PROCESSES = 16;

/** Descriptors a process needs to hold `connections` sockets at once (stdio, IPC and the runtime on top). */
export function filesFor(connections: number): number {
  return connections + SPARE_FDS;
}

/** Descriptors one attacking process needs so that `count` connections fit in MAX_PROCESSES of them. */
export function filesPerProcessFor(count: number): number {
  return filesFor(Math.ceil(count / MAX_PROCESSES));
}

/**
 * Fails at once, saying what to change, when this machine's hard open-file limit is under `needed`: a flood that
 * cannot be opened would otherwise fail later as a wrong count, far from its cause.
 */
export function requireFileLimit(needed: number, why: string): void {
  const hard = openFileLimit("/proc/self/limits", "hard");
  if (hard !== undefined && hard < needed) {
    throw new Error(
      `The hard open-file limit here is ${hard}; ${why} needs at least ${needed}. Raise it: \`ulimit -Hn ${needed}\` as root, LimitNOFILE= for a systemd unit, \`docker run --ulimit nofile=65536:65536\`.`,
    );
  }
}

/**
 * `count` idle connections from `addresses` (one address per ~1,000 connections keeps each under the
 * ephemeral-port range), spread over as many processes as their open-file limits require: a process takes as many
 * connections as it can hold, continuing an address where the previous process stopped.
 */
export async function idleFlood(port: number, count: number, addresses: readonly string[]): Promise<{ clients: HostileClient[]; report: AttackReport }> {
  const clients: HostileClient[] = [];
  const reports: Promise<AttackReport>[] = [];
  const perAddress = Math.ceil(count / addresses.length);
  const addressOf = (i: number) => addresses[Math.min(addresses.length - 1, Math.floor(i / perAddress))]!;
  let assigned = 0;
  while (assigned < count) {
    if (clients.length >= MAX_PROCESSES) throw new Error(`idleFlood: ${count} connections need more than ${MAX_PROCESSES} processes here (see requireFileLimit)`);
    const client = await HostileClient.start();
    clients.push(client);
    const from = assigned;
    const n = Math.min(count - assigned, client.capacity);
    assigned += n;
    // The connections of this process, as addresses: runs of the same address, in order.
    const mine = Array.from({ length: n }, (_, k) => addressOf(from + k));
    reports.push(client.attack({ kind: "idle", port, localAddresses: mine, count: n, window: 256 }));
  }
  return { clients, report: mergeReports(await Promise.all(reports)) };
}
