/** One model-server replica as the gateway sees it: where it is, how busy it is, whether it is ready. */

export type ReplicaState = "starting" | "ready" | "unhealthy";

export class Replica {
  inFlight = 0;
  state: ReplicaState = "starting";
  consecutiveFailures = 0;
  lastError: string | undefined;
  /** False for an InferencePool address: no /health of its own, so ejections expire instead. */
  activeChecks = true;
  ejectedAt = 0;

  constructor(
    readonly modelId: string,
    /** Base URL without `/v1`. */
    readonly url: string,
    readonly maxConcurrency: number,
  ) {}

  get ready(): boolean {
    return this.state === "ready";
  }

  get hasCapacity(): boolean {
    return this.inFlight < this.maxConcurrency;
  }

  /** No room for another request right now. */
  get saturated(): boolean {
    return !this.hasCapacity;
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
