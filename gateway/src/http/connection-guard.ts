import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { isIPv6, type Socket } from "node:net";

export interface ConnectionLimits {
  /** All client connections together. */
  maxConnections: number;
  /** Connections from one client address (IPv6: one /64); 0 = no per-address cap. */
  maxConnectionsPerAddress: number;
}

/**
 * Requests a client may pipeline on one connection ahead of their answers. Clients that pipeline at all (undici
 * with `pipelining`) keep a handful in flight; a client that sends hundreds and reads none would make the
 * gateway hold a queue of answers it cannot deliver.
 */
export const MAX_PIPELINED_REQUESTS = 16;

export interface ConnectionEvents {
  /**
   * A connection was refused: a new one closed at once when every connection at the cap (`total`, `address`)
   * was busy, or one that pipelined more than MAX_PIPELINED_REQUESTS requests ahead of their answers, closed
   * after the answers to those before.
   */
  refused(scope: "total" | "address" | "pipelining"): void;
  /** An idle connection was closed to make room for a new one. */
  evicted(scope: "total" | "address"): void;
}

interface AddressEntry {
  address: string;
  count: number;
  /** Idle sockets of this address, oldest first (a Set iterates in insertion order). */
  idle: Set<Socket>;
}

interface SocketState {
  entry: AddressEntry;
  /** Requests received whose answer the gateway has not finished writing (more than one when pipelining). */
  pending: number;
  /** Pipelined past the cap: no more requests; closed once the pending answers are written. */
  closing: boolean;
}

/** How a connection pipelining past the cap is closed (lingering-close.ts). */
export interface PipelineCloser {
  /** From now on nothing more on `socket` is parsed into a request. */
  stopRequests(socket: Socket): void;
  /** Its accepted requests are answered: close it. */
  closeAfterAnswers(socket: Socket): void;
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
 * connection is busy is the new one refused. So a flood of idle sockets, however large, costs a bounded number
 * of descriptors and about 10 KiB each, and never keeps a new client from being served.
 *
 * "Busy" means the gateway is still working on the answer the connection is sending: from the request until
 * the whole answer is handed to the socket ('prefinish'). After that only the client is waiting (to read it,
 * or to send its next request), so the connection counts as idle, including one that has not completed its
 * first request's headers (bounded by the headers timeout anyway). A client that never reads its answers
 * therefore cannot pin slots. A connection pipelining more than MAX_PIPELINED_REQUESTS requests gets the
 * answers to the requests before the one past the cap, in order, and is then closed; the rest are never handled.
 */
export class ConnectionGuard {
  private total = 0;
  /** Every idle socket, oldest first. */
  private readonly idle = new Set<Socket>();
  private readonly byAddress = new Map<string, AddressEntry>();
  private readonly states = new WeakMap<Socket, SocketState>();
  /** Sockets already uncounted when they were evicted: their 'close' comes later and must not count again. */
  private readonly evicted = new WeakSet<Socket>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly events: ConnectionEvents,
    private readonly pipelines: PipelineCloser,
  ) {}

  get open(): number {
    return this.total;
  }

  /** Counts connections of `server`; requests are reported through `onRequest` (also for 100-continue ones). */
  attach(server: Pick<Server, "on">): void {
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
    // The eviction above may have emptied (and dropped) the address's entry.
    entry = this.byAddress.get(address);
    if (!entry) this.byAddress.set(address, (entry = { address, count: 0, idle: new Set() }));
    entry.count++;
    this.total++;
    const state: SocketState = { entry, pending: 0, closing: false };
    this.states.set(socket, state);
    this.markIdle(socket, entry);
    socket.once("close", () => {
      if (!this.evicted.has(socket)) this.forget(socket, entry);
    });
  }

  /**
   * A request arrived on a connection: busy while the gateway writes its answer. False when it must not be
   * handled: it came past the pipelining cap, or after it.
   */
  onRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    const state = this.states.get(socket);
    if (!state) return true;
    if (state.closing) return false;
    if (state.pending >= MAX_PIPELINED_REQUESTS) {
      state.closing = true;
      this.events.refused("pipelining");
      this.pipelines.stopRequests(socket);
      return false;
    }
    state.pending++;
    // A pipelined request's answer waits for the ones before it; it gets the socket ('socket') when they are
    // written, and only then is the connection busy with it.
    if (res.socket) this.markBusy(socket, state.entry);
    else res.once("socket", () => this.markBusy(socket, state.entry));
    res.once("prefinish", () => {
      state.pending--;
      if (socket.destroyed) return;
      this.markIdle(socket, state.entry);
      // The last accepted answer is handed to the socket, after all those before it.
      if (state.closing && state.pending === 0) this.pipelines.closeAfterAnswers(socket);
    });
    return true;
  }

  private markBusy(socket: Socket, entry: AddressEntry): void {
    entry.idle.delete(socket);
    this.idle.delete(socket);
  }

  private markIdle(socket: Socket, entry: AddressEntry): void {
    // Re-adding moves nothing: delete first, so the order stays "longest idle first".
    this.markBusy(socket, entry);
    entry.idle.add(socket);
    this.idle.add(socket);
  }

  private forget(socket: Socket, entry: AddressEntry): void {
    this.total--;
    entry.count--;
    this.markBusy(socket, entry);
    if (entry.count === 0 && this.byAddress.get(entry.address) === entry) this.byAddress.delete(entry.address);
  }

  /** Closes the oldest idle socket of `idle`, if there is one, and stops counting it at once. */
  private evictFrom(idle: Set<Socket>, scope: "total" | "address"): boolean {
    const oldest = idle.values().next();
    if (oldest.done) return false;
    const socket = oldest.value;
    const state = this.states.get(socket);
    this.evicted.add(socket);
    if (state) this.forget(socket, state.entry);
    socket.destroy();
    this.events.evicted(scope);
    return true;
  }
}
