import { once } from "node:events";
import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on loopback that holds back what the target sends by `replyDelayMs` (each chunk, in order), e.g.
 * between a gateway and Redis: every command's reply then arrives that much later, so whatever the gateway does
 * while it awaits the store (a client leaving, say) surely happens inside that wait. What the client sends goes
 * through at once. `replyDelayMs` may be changed at any time; it applies to chunks arriving from then on.
 */
export interface SlowTcpProxy {
  url(scheme: string): string;
  port: number;
  replyDelayMs: number;
  /** Connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startSlowTcpProxy(target: { host?: string; port: number }, replyDelayMs: number): Promise<SlowTcpProxy> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    connections++;
    const upstream = connect({ host: target.host ?? "127.0.0.1", port: target.port });
    sockets.add(client).add(upstream);
    // A reset on either side ends both: no socket is left without an 'error' listener.
    const teardown = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", teardown).on("close", () => (sockets.delete(client), upstream.destroy()));
    upstream.on("error", teardown);
    client.on("data", (d: Buffer) => upstream.write(d));
    // Replies leave in order, each no earlier than `replyDelayMs` after it arrived (nor before the one ahead of it).
    let last = 0;
    let pending = 0;
    let upstreamClosed = false;
    upstream.on("data", (d: Buffer) => {
      const at = Math.max(Date.now() + proxy.replyDelayMs, last);
      last = at;
      pending++;
      setTimeout(() => {
        pending--;
        if (!client.destroyed) client.write(d);
        if (pending === 0 && upstreamClosed) client.destroy();
      }, at - Date.now());
    });
    upstream.on("close", () => {
      sockets.delete(upstream);
      upstreamClosed = true;
      if (pending === 0) client.destroy();
    });
  });
  server.on("error", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  const proxy: SlowTcpProxy = {
    url: (scheme) => `${scheme}://127.0.0.1:${port}`,
    port,
    replyDelayMs,
    get connections() {
      return connections;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
