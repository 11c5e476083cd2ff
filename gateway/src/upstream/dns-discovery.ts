import { promises as dns } from "node:dns";
import type { ModelPool } from "./model-pool";
import type { Logger } from "../observability/logger";

export type Resolver = (host: string) => Promise<string[]>;

/** The name does not exist, or has no address: for a headless Service, no ready pod. */
const NO_ADDRESS_CODES = new Set(["ENOTFOUND", "ENODATA"]);

/**
 * IPv4 and IPv6 addresses of a name; a headless Service answers with one record per ready pod. Names like
 * "localhost" live in /etc/hosts, not DNS: those come from the system lookup. When that finds nothing either, the DNS
 * server's own answer is the error (its NXDOMAIN, not the lookup's view of it).
 */
export const systemResolver: Resolver = async (host) => {
  const [v4, v6] = await Promise.allSettled([dns.resolve4(host), dns.resolve6(host)]);
  const out = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
  if (out.length > 0) return out;
  try {
    return (await dns.lookup(host, { all: true })).map((a) => a.address);
  } catch (err) {
    const answered = [v4, v6].find((r): r is PromiseRejectedResult => r.status === "rejected");
    throw answered?.reason ?? err;
  }
};

/** Whether a lookup failure says the name has no address (as opposed to DNS itself failing). */
export function isNoAddress(err: unknown): boolean {
  return NO_ADDRESS_CODES.has((err as { code?: string }).code ?? "");
}

/**
 * Keeps a model's view of its pods equal to what DNS says. dns mode: the replicas are the addresses the name resolves
 * to. pool mode with a readiness name: the pool counts as ready while that name has an address. Kubernetes publishes
 * only ready pods under a headless Service and answers NXDOMAIN when there is none, so a name that does not resolve
 * (or resolves to nothing) empties the set at once (the model is then unlisted and answers 503) and the next answer
 * refills it. Any other failure (a timeout, a refused query) keeps the last known set: a DNS blip must not empty a
 * healthy model, and health checks still guard each address.
 */
export class DnsDiscovery {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: ModelPool,
    private readonly log: Logger,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /** The name to watch and how often, or undefined when this model has none. */
  private target(): { host: string; refreshIntervalMs: number } | undefined {
    const up = this.pool.model.upstream;
    if (up.mode === "dns") return up;
    if (up.mode === "pool" && up.readiness) return up.readiness;
    return undefined;
  }

  private async addresses(host: string): Promise<string[] | undefined> {
    try {
      return [...new Set(await this.resolve(host))].sort();
    } catch (err) {
      if (isNoAddress(err)) return [];
      this.log.warn({ model: this.pool.model.id, host, err: (err as Error).message }, "DNS lookup failed; keeping last replica set");
      return undefined;
    }
  }

  async refresh(): Promise<void> {
    const target = this.target();
    if (!target) return;
    const addresses = await this.addresses(target.host);
    if (addresses === undefined) return;
    const up = this.pool.model.upstream;
    if (up.mode === "dns") {
      const urls = addresses.map((a) => `${up.scheme}://${a.includes(":") ? `[${a}]` : a}:${up.port}`);
      const before = this.pool.replicas.map((r) => r.url).join(",");
      this.pool.setReplicaUrls(urls);
      if (before !== urls.join(",")) this.log.info({ model: this.pool.model.id, replicas: urls }, urls.length === 0 ? "no ready replica: the name has no address" : "replica set changed");
    } else {
      const ready = addresses.length > 0;
      const before = this.pool.isReady;
      this.pool.setBackends(addresses.length);
      if (before !== this.pool.isReady) this.log.info({ model: this.pool.model.id, readyPods: addresses.length }, ready ? "pool has a ready pod" : "pool has no ready pod");
    }
  }

  async start(): Promise<void> {
    const target = this.target();
    if (!target) return;
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), target.refreshIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
