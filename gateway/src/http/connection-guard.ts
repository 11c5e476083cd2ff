import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { isIPv6, type Socket } from "node:net";

export interface ConnectionLimits {
  /** All client connections together. */
  maxConnections: number;
  /** Connections from one client address (IPv6: one /64); 0 = no per-address cap. */
  maxConnectionsPerAddress: number;
}

export interface ConnectionEvents {
  /** A new connection was closed at once: every connection at the cap was busy. */
  refused(scope: "total" | "address"): void;
  /** An idle connection was closed to make room for a new one. */
  evicted(scope: "total" | "address"): void;
}

interface AddressEntry {
  count: number;
  /** Idle sockets of this address, oldest first (a Set iterates in insertion order). */
  idle: Set<Socket>;
}

/**
 * The address a connection counts against. IPv4-mapped IPv6 is IPv4; an IPv6 client owns a whole /64 as a
 * rule, so its connections count together.
 */
export function clientAddress(remote: string | undefined): string {
  if (!remote) return "unknown";
  if (remote.startsWith("::ffff:") && remote.includes(".")) return remote.slice(7);
  if (!isIPv6(remote)) return remote;
  const [head = "", tail = ""] = remote.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = remote.includes("::") ? [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

/**
 * Caps open connections, in total and per client address, without letting idle ones lock clients out: at a cap
 * the oldest idle connection (of that address, or overall) is closed to make room, and only when every
 * connection is busy with a request is the new one refused. So a flood of idle sockets, however large, costs a
 * bounded number of descriptors and about 10 KiB each, and never keeps a new client from being served.
 * "Idle" includes a connection that has not completed its first request's headers (bounded by the headers
 * timeout anyway).
 */
export class ConnectionGuard {
  private total = 0;
  /** Every idle socket, oldest first. */
  private readonly idle = new Set<Socket>();
  private readonly byAddress = new Map<string, AddressEntry>();
  /** Requests in flight per socket (more than one only when a client pipelines). */
  private readonly busy = new WeakMap<Socket, number>();
  private readonly entries = new WeakMap<Socket, AddressEntry>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly events: ConnectionEvents = { refused: () => undefined, evicted: () => undefined },
  ) {}

  get open(): number {
    return this.total;
  }

  /** Counts connections of `server`; requests are reported through `onRequest` (also for 100-continue ones). */
  attach(server: Server): void {
    server.on("connection", (socket: Socket) => this.onConnection(socket));
  }

  private onConnection(socket: Socket): void {
    const address = clientAddress(socket.remoteAddress);
    let entry = this.byAddress.get(address);
    const perAddress = this.limits.maxConnectionsPerAddress;
    if (perAddress > 0 && entry && entry.count >= perAddress && !this.evictFrom(entry.idle, "address")) {
      this.events.refused("address");
      socket.destroy();
      return;
    }
    if (this.total >= this.limits.maxConnections && !this.evictFrom(this.idle, "total")) {
      this.events.refused("total");
      socket.destroy();
      return;
    }
    if (!entry) this.byAddress.set(address, (entry = { count: 0, idle: new Set() }));
    entry.count++;
    this.total++;
    this.markIdle(socket, entry);
    socket.once("close", () => {
      this.total--;
      entry.count--;
      entry.idle.delete(socket);
      this.idle.delete(socket);
      if (entry.count === 0) this.byAddress.delete(address);
    });
    this.entries.set(socket, entry);
  }

  /** A request arrived on a connection: it is busy, not to be evicted, until the response closes. */
  onRequest(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const entry = this.entries.get(socket);
    if (!entry) return;
    this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
    entry.idle.delete(socket);
    this.idle.delete(socket);
    res.once("close", () => {
      const left = (this.busy.get(socket) ?? 1) - 1;
      this.busy.set(socket, left);
      if (left === 0 && !socket.destroyed) this.markIdle(socket, entry);
    });
  }

  private markIdle(socket: Socket, entry: AddressEntry): void {
    entry.idle.add(socket);
    this.idle.add(socket);
  }

  /** Closes the oldest idle socket of `idle`, if there is one. */
  private evictFrom(idle: Set<Socket>, scope: "total" | "address"): boolean {
    const oldest = idle.values().next();
    if (oldest.done) return false;
    const socket = oldest.value;
    this.entries.get(socket)?.idle.delete(socket);
    this.idle.delete(socket);
    socket.destroy();
    this.events.evicted(scope);
    return true;
  }
}
