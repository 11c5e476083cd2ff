import { createServer, type AddressInfo, type Server } from "node:net";

/**
 * A replica's address, kept while the model sleeps by a listener that resets every connection, so no other process
 * can take the port between a sleep and the next wake (the catalog names the address once, at start).
 */
export class ReservedPort {
  private holder: Server | undefined;
  private bound = 0;

  /** A free port, chosen by the OS and held from now on. */
  static async reserve(host: string): Promise<ReservedPort> {
    const r = new ReservedPort();
    await r.hold(host);
    return r;
  }

  get port(): number {
    return this.bound;
  }

  /** Holds the port again (the first time: any free port). */
  async hold(host: string): Promise<void> {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.bound, host, () => resolve());
    });
    this.holder = server;
    this.bound = (server.address() as AddressInfo).port;
  }

  async release(): Promise<void> {
    const server = this.holder;
    this.holder = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
