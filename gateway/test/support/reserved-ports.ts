import { ReservedPort } from "../../../local/reserved-port";

/**
 * Loopback ports where a replica may start later. A reserved port is held by a listener that resets every
 * connection (no replica there) until take() lets it go for the replica about to listen on it: a port merely looked
 * up and let go can be taken meanwhile, by another suite's server or as the source port of some outgoing
 * connection, and the replica then fails with EADDRINUSE. Call releaseAll() in afterAll.
 */
export function reservedPorts() {
  const reserved: ReservedPort[] = [];
  return {
    async reserve(): Promise<number> {
      const r = await ReservedPort.reserve("127.0.0.1");
      reserved.push(r);
      return r.port;
    },
    async take(port: number): Promise<number> {
      await reserved.find((r) => r.port === port)?.release();
      return port;
    },
    async releaseAll(): Promise<void> {
      await Promise.all(reserved.map((r) => r.release()));
    },
  };
}
