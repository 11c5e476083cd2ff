/** One model-server replica as the gateway sees it: where it is, how busy it is, whether it is ready. */
import { systemClock, type Clock } from "../context/clock";
import type { ReplicaAdapters } from "./lora/replica-adapters";

export type ReplicaState = "starting" | "ready" | "unhealthy";

/** Scraped load older than this is ignored. */
export const LOAD_STALE_MS = 5000;

export class Replica {
  inFlight = 0;
  private _state: ReplicaState = "starting";
  consecutiveFailures = 0;
  lastError: string | undefined;
  /** False for an InferencePool address: no /health of its own, so ejections expire instead. */
  activeChecks = true;
  /**
   * An InferencePool address: its ready pods, as its readiness name resolves (undefined: not known, taken as ready
   * and unbounded). The pool takes at most `perBackend` requests per ready pod.
   */
  private backends: number | undefined;
  ejectedAt = -Infinity;
  /** The model server's own load, scraped from its /metrics (vLLM gauges); stale values are ignored. */
  waiting = 0;
  kvCacheUsage = 0;
  /** Requests at the model server that are not ours (other gateway replicas), as of the last scrape. */
  externalLoad = 0;
  loadScrapedAt = -Infinity;
  /** The LoRA adapters it holds, for a model with a `lora` block (endpoints and dns modes); set by the pool. */
  adapters: ReplicaAdapters | undefined;
  /** Told of every change that may let a waiting request go, or stop one from going: readiness, load (the pool). */
  onChange: ((replica: Replica, readinessChanged: boolean) => void) | undefined;

  constructor(
    readonly modelId: string,
    /** Base URL without `/v1`. */
    readonly url: string,
    /** The gateway's cap of requests in flight to it. */
    readonly cap: number,
    private readonly clock: Clock = systemClock,
    /** An InferencePool address: requests per ready pod (the model's concurrency), when its pods are counted. */
    private readonly perBackend?: number,
  ) {}

  get state(): ReplicaState {
    return this._state;
  }

  get ready(): boolean {
    return this._state === "ready" && this.backends !== 0;
  }

  /** The cap in force: `cap`, and for a pool whose pods are counted, their number × the model's concurrency. */
  get maxConcurrency(): number {
    return this.backends === undefined || this.perBackend === undefined ? this.cap : Math.min(this.cap, this.backends * this.perBackend);
  }

  get hasCapacity(): boolean {
    return this.inFlight < this.maxConcurrency;
  }

  /** Thresholds from the model's routing settings; set by the pool. */
  maxWaiting = Number.POSITIVE_INFINITY;
  maxKvCacheUsage = Number.POSITIVE_INFINITY;

  /** The model server's signals count only while fresh (a replica that stops answering /metrics is not "idle"). */
  private get loadFresh(): boolean {
    return this.clock.now() - this.loadScrapedAt < LOAD_STALE_MS;
  }

  /** When the scraped load stops counting (saturation that came from it ends then, unless a new scrape comes). */
  get loadStaleAt(): number {
    return this.loadScrapedAt + LOAD_STALE_MS;
  }

  /** The model server reports a full queue or KV cache (while its figures are fresh). */
  get saturatedByLoad(): boolean {
    return this.loadFresh && (this.waiting > this.maxWaiting || this.kvCacheUsage > this.maxKvCacheUsage);
  }

  /** No room for another request: at the gateway's cap, or the model server's queue or KV cache is full. */
  get saturated(): boolean {
    return !this.hasCapacity || this.saturatedByLoad;
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
    this.loadScrapedAt = this.clock.now();
    this.onChange?.(this, false);
  }

  /** pool mode: how many pods the pool has ready (its readiness name's addresses). */
  setBackends(count: number): void {
    this.transition(() => (this.backends = count));
  }

  markHealthy(): void {
    this.transition(() => {
      this._state = "ready";
      this.consecutiveFailures = 0;
      this.lastError = undefined;
    });
  }

  /** Active check failed; a ready replica is only taken out after `threshold` failures in a row. */
  markCheckFailed(reason: string, threshold: number): void {
    this.transition(() => {
      this.consecutiveFailures += 1;
      this.lastError = reason;
      if (this._state !== "ready" || this.consecutiveFailures >= threshold) {
        this._state = this._state === "starting" ? "starting" : "unhealthy";
      }
    });
  }

  /** Passive ejection: a refused or reset connection is proof enough; the next good check brings it back. */
  eject(reason: string): void {
    this.transition(() => {
      this._state = "unhealthy";
      this.lastError = reason;
      this.ejectedAt = this.clock.now();
    });
  }

  /** Discovery no longer lists it: not ready until it is listed again and a health check passes. */
  retire(): void {
    this.transition(() => (this._state = "starting"));
  }

  /** Whether an ejected replica without active checks has sat out `ms` (it then comes back). */
  ejectedFor(ms: number): boolean {
    return this.clock.now() - this.ejectedAt >= ms;
  }

  /** Every change of state goes through here, so the pool hears of each one that changes readiness or capacity. */
  private transition(change: () => void): void {
    const wasReady = this.ready;
    const cap = this.maxConcurrency;
    change();
    if (wasReady !== this.ready || cap !== this.maxConcurrency) this.onChange?.(this, wasReady !== this.ready);
  }
}
