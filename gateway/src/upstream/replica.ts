/** One model-server replica as the gateway sees it: where it is, how busy it is, whether it is ready. */
import type { ReplicaAdapters } from "./lora/replica-adapters";

export type ReplicaState = "starting" | "ready" | "unhealthy";

/** Scraped load older than this is ignored. */
const LOAD_STALE_MS = 5000;

export class Replica {
  inFlight = 0;
  state: ReplicaState = "starting";
  consecutiveFailures = 0;
  lastError: string | undefined;
  /** False for an InferencePool address: no /health of its own, so ejections expire instead. */
  activeChecks = true;
  /** An InferencePool address: whether the pool has a ready pod behind it (its readiness name resolves). */
  backendsReady = true;
  ejectedAt = 0;
  /** The model server's own load, scraped from its /metrics (vLLM gauges); stale values are ignored. */
  waiting = 0;
  kvCacheUsage = 0;
  /** Requests at the model server that are not ours (other gateway replicas), as of the last scrape. */
  externalLoad = 0;
  loadScrapedAt = 0;
  /** The LoRA adapters it holds, for a model with a `lora` block (endpoints and dns modes); set by the pool. */
  adapters: ReplicaAdapters | undefined;

  constructor(
    readonly modelId: string,
    /** Base URL without `/v1`. */
    readonly url: string,
    readonly maxConcurrency: number,
  ) {}

  get ready(): boolean {
    return this.state === "ready" && this.backendsReady;
  }

  get hasCapacity(): boolean {
    return this.inFlight < this.maxConcurrency;
  }

  /** Thresholds from the model's routing settings; set by the pool. */
  maxWaiting = Number.POSITIVE_INFINITY;
  maxKvCacheUsage = Number.POSITIVE_INFINITY;

  /** The model server's signals count only while fresh (a replica that stops answering /metrics is not "idle"). */
  private get loadFresh(): boolean {
    return Date.now() - this.loadScrapedAt < LOAD_STALE_MS;
  }

  /** No room for another request: at the gateway's cap, or the model server's queue or KV cache is full. */
  get saturated(): boolean {
    if (!this.hasCapacity) return true;
    return this.loadFresh && (this.waiting > this.maxWaiting || this.kvCacheUsage > this.maxKvCacheUsage);
  }

  /**
   * Load used to compare replicas: our own in-flight count, exact and current, plus what other gateway
   * replicas have at that server (its running + waiting minus ours, at the last scrape). Using the scraped
   * total directly would steer by a picture up to a second old, and herd requests at high rates.
   */
  get load(): number {
    return this.inFlight + (this.loadFresh ? this.externalLoad : 0);
  }

  recordLoad(waiting: number, kvCacheUsage: number, running = 0): void {
    this.waiting = waiting;
    this.externalLoad = Math.max(0, running + waiting - this.inFlight);
    this.kvCacheUsage = kvCacheUsage;
    this.loadScrapedAt = Date.now();
  }

  markHealthy(): void {
    this.state = "ready";
    this.consecutiveFailures = 0;
    this.lastError = undefined;
  }

  /** Active check failed; a ready replica is only taken out after `threshold` failures in a row. */
  markCheckFailed(reason: string, threshold: number): void {
    this.consecutiveFailures += 1;
    this.lastError = reason;
    if (this.state !== "ready" || this.consecutiveFailures >= threshold) {
      this.state = this.state === "starting" ? "starting" : "unhealthy";
    }
  }

  /** Passive ejection: a refused or reset connection is proof enough; the next good check brings it back. */
  eject(reason: string): void {
    this.state = "unhealthy";
    this.lastError = reason;
    this.ejectedAt = Date.now();
  }
}
