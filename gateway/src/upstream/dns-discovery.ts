import { promises as dns } from "node:dns";
import type { ModelPool } from "./model-pool";
import type { Logger } from "../observability/logger";

export type Resolver = (host: string) => Promise<string[]>;

/** IPv4 and IPv6 addresses of a name; a headless Service answers with one record per ready pod. */
export const systemResolver: Resolver = async (host) => {
  const [v4, v6] = await Promise.allSettled([dns.resolve4(host), dns.resolve6(host)]);
  const out = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
  if (out.length > 0) return out;
  // Names like "localhost" live in /etc/hosts, not DNS.
  return (await dns.lookup(host, { all: true })).map((a) => a.address);
};

/**
 * Keeps a dns-mode pool's replicas equal to the addresses its name resolves to. A failed lookup keeps the
 * last known set (a DNS blip must not empty a healthy model); health checks still guard each address.
 */
export class DnsDiscovery {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: ModelPool,
    private readonly log: Logger,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  async refresh(): Promise<void> {
    const up = this.pool.model.upstream;
    if (up.mode !== "dns") return;
    try {
      const addresses = [...new Set(await this.resolve(up.host))].sort();
      const urls = addresses.map((a) => `${up.scheme}://${a.includes(":") ? `[${a}]` : a}:${up.port}`);
      const before = this.pool.replicas.map((r) => r.url).join(",");
      this.pool.setReplicaUrls(urls);
      if (before !== urls.join(",")) this.log.info({ model: this.pool.model.id, replicas: urls }, "replica set changed");
    } catch (err) {
      this.log.warn({ model: this.pool.model.id, host: up.host, err: (err as Error).message }, "DNS lookup failed; keeping last replica set");
    }
  }

  async start(): Promise<void> {
    const up = this.pool.model.upstream;
    if (up.mode !== "dns") return;
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), up.refreshIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
