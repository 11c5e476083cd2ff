import type { CatalogModel } from "../config/catalog";
import { Replica } from "./replica";

export type AcquireResult = { ok: true; replica: Replica } | { ok: false; reason: "not_ready" | "saturated" };

/**
 * The replicas of one model and the choice among them: the ready replica with the fewest requests in
 * flight below its cap; ties go round-robin so equal replicas share load evenly.
 */
export class ModelPool {
  readonly replicas: Replica[];
  private cursor = 0;

  constructor(readonly model: CatalogModel) {
    this.replicas = model.upstream.endpoints.map(
      (e) => new Replica(model.id, e.url.replace(/\/+$/, ""), e.maxConcurrency ?? model.maxConcurrency),
    );
  }

  get isReady(): boolean {
    return this.replicas.some((r) => r.ready);
  }

  /** The model name the model server expects in `model`. */
  get upstreamModel(): string {
    return this.model.upstreamModel ?? this.model.id;
  }

  acquire(exclude?: ReadonlySet<Replica>): AcquireResult {
    const n = this.replicas.length;
    let best: Replica | undefined;
    let anyReady = false;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.cursor + i) % n]!;
      if (!r.ready || exclude?.has(r)) continue;
      anyReady = true;
      if (r.hasCapacity && (!best || r.inFlight < best.inFlight)) best = r;
    }
    if (!best) return { ok: false, reason: anyReady ? "saturated" : "not_ready" };
    this.cursor = (this.cursor + 1) % n;
    best.inFlight += 1;
    return { ok: true, replica: best };
  }

  release(replica: Replica): void {
    replica.inFlight = Math.max(0, replica.inFlight - 1);
  }
}
