import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ConnectionGuard, clientAddress, MAX_PIPELINED_REQUESTS } from "../../src/http/connection-guard";
import { clampToFileLimit, openFileLimit } from "../../src/http/transport";

describe("client address", () => {
  it.each([
    ["127.0.0.2", "127.0.0.2"],
    ["::ffff:10.1.2.3", "10.1.2.3"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::9", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:aaaa::1", "2001:db8:1:2::/64"],
    ["::1", "0:0:0:0::/64"],
    [undefined, "unknown"],
  ])("%s counts as %s", (remote, address) => {
    expect(clientAddress(remote)).toBe(address);
  });
});

describe("open-file limit", () => {
  it("reads the soft limit from /proc/self/limits and keeps a quarter free", () => {
    const dir = mkdtempSync(join(tmpdir(), "limits-"));
    const file = join(dir, "limits");
    writeFileSync(file, "Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n");
    expect(openFileLimit(file)).toBe(1024);
    expect(openFileLimit(file, "hard")).toBe(524288);
    expect(clampToFileLimit(8192, 1024)).toBe(768);
    expect(clampToFileLimit(8192, 1_048_576)).toBe(8192);
    expect(clampToFileLimit(8192, undefined)).toBe(8192);
    expect(openFileLimit(join(dir, "missing"))).toBeUndefined();
  });
});

/** A socket as the guard sees it: an address, `destroy()`, and a 'close' that comes later, as Node's does. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    setImmediate(() => this.emit("close"));
    return this;
  }
}

/** A response: `socket` is set when it may write (pipelined ones wait for the answers before them). */
class FakeResponse extends EventEmitter {
  constructor(public socket: FakeSocket | null) {
    super();
  }
}

function guarded(maxConnections: number, maxConnectionsPerAddress: number) {
  const server = new EventEmitter();
  const seen = { refused: [] as string[], evicted: [] as string[], stopped: [] as FakeSocket[], closed: [] as FakeSocket[] };
  const guard = new ConnectionGuard(
    { maxConnections, maxConnectionsPerAddress },
    { refused: (s) => seen.refused.push(s), evicted: (s) => seen.evicted.push(s) },
    { stopRequests: (s) => seen.stopped.push(s as never), closeAfterAnswers: (s) => seen.closed.push(s as never) },
  );
  guard.attach(server as never);
  const connect = (address: string) => {
    const s = new FakeSocket(address);
    server.emit("connection", s);
    return s;
  };
  const handled: FakeResponse[] = [];
  const request = (socket: FakeSocket, queued = false) => {
    const res = new FakeResponse(queued ? null : socket);
    if (guard.onRequest({ socket } as unknown as IncomingMessage, res as unknown as ServerResponse)) handled.push(res);
    return res;
  };
  return { guard, seen, connect, request, handled };
}

describe("connection guard", () => {
  it("an eviction at the address cap uncounts the socket at once: no second eviction at the total cap", () => {
    const { guard, seen, connect } = guarded(3, 2);
    const [a1, a2, b1] = [connect("10.0.0.1"), connect("10.0.0.1"), connect("10.0.0.2")];
    const a3 = connect("10.0.0.1"); // the address is at its cap: its oldest idle socket yields
    expect(seen.evicted).toEqual(["address"]);
    expect([a1.destroyed, a2.destroyed, b1.destroyed, a3.destroyed]).toEqual([true, false, false, false]);
    expect(guard.open).toBe(3);
  });

  it("evicted sockets are not counted again when their close arrives", async () => {
    const { guard, seen, connect } = guarded(2, 0);
    connect("10.0.0.1");
    connect("10.0.0.2");
    connect("10.0.0.3");
    connect("10.0.0.4");
    expect(seen.evicted).toEqual(["total", "total"]);
    await new Promise((r) => setImmediate(r));
    expect(guard.open).toBe(2);
    connect("10.0.0.5");
    expect(seen.refused).toEqual([]);
    expect(guard.open).toBe(2);
  });

  it("a connection is busy only while the gateway writes its answer, then evictable", () => {
    const { seen, connect, request } = guarded(1, 0);
    const s = connect("10.0.0.1");
    const res = request(s);
    connect("10.0.0.2");
    expect(seen.refused).toEqual(["total"]); // busy: the new connection is refused
    res.emit("prefinish"); // the answer is handed to the socket: only the client is waiting now
    const next = connect("10.0.0.3");
    expect(seen.evicted).toEqual(["total"]);
    expect([s.destroyed, next.destroyed]).toEqual([true, false]);
  });

  it("pipelined answers waiting behind an unread one do not keep the connection busy", () => {
    const { seen, connect, request } = guarded(1, 0);
    const s = connect("10.0.0.1");
    const first = request(s);
    const queued = [request(s, true), request(s, true)];
    first.emit("prefinish"); // written; the client never reads it, so the queued ones never get the socket
    expect(queued.every((r) => r.listenerCount("socket") === 1)).toBe(true);
    connect("10.0.0.2");
    expect(seen.evicted).toEqual(["total"]);
    expect(s.destroyed).toBe(true);
  });

  it("a queued answer makes the connection busy once it gets the socket", () => {
    const { seen, connect, request } = guarded(1, 0);
    const s = connect("10.0.0.1");
    const first = request(s);
    const second = request(s, true);
    first.emit("prefinish");
    second.socket = s;
    second.emit("socket");
    connect("10.0.0.2");
    expect(seen.refused).toEqual(["total"]);
  });

  it(`pipelining past ${MAX_PIPELINED_REQUESTS} requests ahead of their answers: those before are handled, none after, then the connection closes`, () => {
    const { seen, connect, request, handled } = guarded(10, 0);
    const s = connect("10.0.0.1");
    request(s);
    for (let i = 1; i < MAX_PIPELINED_REQUESTS; i++) request(s, true);
    expect(seen.stopped).toEqual([]);
    request(s, true);
    request(s, true);
    expect(handled).toHaveLength(MAX_PIPELINED_REQUESTS);
    expect(seen.refused).toEqual(["pipelining"]);
    expect(seen.stopped).toEqual([s]);
    expect(s.destroyed).toBe(false);
    // The answers are written one by one; the connection closes after the last of them.
    for (const res of handled.slice(0, -1)) res.emit("prefinish");
    expect(seen.closed).toEqual([]);
    handled.at(-1)!.emit("prefinish");
    expect(seen.closed).toEqual([s]);
  });
});
