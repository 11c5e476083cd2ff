import type { CatalogModel } from "../config/catalog";
import { Replica } from "./replica";

export type AcquireResult = { ok: true; replica: Replica } | { ok: false; reason: "not_ready" | "saturated" };

/**
 * The replicas of one model and the choice among them: the ready replica with the fewest requests in
 * flight below its cap; ties go round-robin so equal replicas share load evenly.
 */
export class ModelPool {
  private list: Replica[] = [];
  private cursor = 0;

  constructor(readonly model: CatalogModel) {
    const up = model.upstream;
    if (up.mode === "endpoints") {
      this.list = up.endpoints.map((e) => this.newReplica(e.url, e.maxConcurrency));
    } else if (up.mode === "pool") {
      // The pool's own endpoint picker does readiness; from here it is one always-checked-passively address.
      const pool = this.newReplica(up.url, up.maxConcurrency ?? Number.MAX_SAFE_INTEGER);
      pool.activeChecks = false;
      pool.markHealthy();
      this.list = [pool];
    }
    // dns: filled by DnsDiscovery through setReplicaUrls().
  }

  get replicas(): readonly Replica[] {
    return this.list;
  }

  get isReady(): boolean {
    return this.list.some((r) => r.ready);
  }

  /** The model name the model server expects in `model`. */
  get upstreamModel(): string {
    return this.model.upstreamModel ?? this.model.id;
  }

  /** Reconciles discovered addresses: known replicas keep their state and in-flight counts. */
  setReplicaUrls(urls: readonly string[]): void {
    const byUrl = new Map(this.list.map((r) => [r.url, r]));
    this.list = urls.map((u) => byUrl.get(trimSlash(u)) ?? this.newReplica(u));
  }

  acquire(exclude?: ReadonlySet<Replica>): AcquireResult {
    const n = this.list.length;
    let best: Replica | undefined;
    let anyReady = false;
    for (let i = 0; i < n; i++) {
      const r = this.list[(this.cursor + i) % n]!;
      if (!r.ready || exclude?.has(r)) continue;
      anyReady = true;
      if (r.hasCapacity && (!best || r.inFlight < best.inFlight)) best = r;
    }
    if (!best) return { ok: false, reason: anyReady ? "saturated" : "not_ready" };
    this.cursor = (this.cursor + 1) % Math.max(1, n);
    best.inFlight += 1;
    return { ok: true, replica: best };
  }

  release(replica: Replica): void {
    replica.inFlight = Math.max(0, replica.inFlight - 1);
  }

  private newReplica(url: string, maxConcurrency?: number): Replica {
    return new Replica(this.model.id, trimSlash(url), maxConcurrency ?? this.model.maxConcurrency);
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
