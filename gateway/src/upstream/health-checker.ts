import { request, type Dispatcher } from "undici";
import type { Replica } from "./replica";
import type { Logger } from "../observability/logger";
import { errorCode } from "./send";

export interface HealthCheckOptions {
  intervalMs: number;
  timeoutMs: number;
  unhealthyThreshold: number;
}

/**
 * Active readiness: GET /health on every replica (vLLM answers 200 once the engine is up, 503 when it cannot serve).
 * A 503 or a refused connection takes a ready replica out at once; other failures after `unhealthyThreshold` in a row.
 */
export class HealthChecker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private firstRound: Promise<void> | undefined;

  constructor(
    private readonly replicas: () => readonly Replica[],
    private readonly dispatcher: Dispatcher,
    private readonly options: HealthCheckOptions,
    private readonly log: Logger,
  ) {}

  /** Starts the loop; resolves after the first round so a fresh gateway does not answer 503 needlessly. */
  start(): Promise<void> {
    if (!this.firstRound) {
      this.firstRound = this.checkAll();
      this.timer = setInterval(() => void this.checkAll(), this.options.intervalMs);
      this.timer.unref();
    }
    return this.firstRound;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round over all replicas; overlapping rounds are skipped rather than stacked. */
  checkAll(): Promise<void> {
    if (this.running) return this.running;
    this.running = Promise.all(this.replicas().map((r) => this.check(r))).then(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async check(replica: Replica): Promise<void> {
    const wasReady = replica.ready;
    if (!replica.activeChecks) {
      // Passive-only replicas come back after one interval of ejection.
      if (!replica.ready && replica.ejectedFor(this.options.intervalMs)) replica.markHealthy();
      this.logTransition(replica, wasReady);
      return;
    }
    try {
      const res = await request(`${replica.url}/health`, {
        dispatcher: this.dispatcher,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await res.body.dump();
      if (res.statusCode === 200) replica.markHealthy();
      // 503: the server says it cannot serve (vLLM's engine dead, or its drain under --shutdown-timeout): out at once.
      else replica.markCheckFailed(`health status ${res.statusCode}`, res.statusCode === 503 ? 1 : this.options.unhealthyThreshold);
    } catch (err) {
      // A refused connection is a server that stopped listening; a timeout may be a busy one, and gets the threshold.
      replica.markCheckFailed((err as Error).message, errorCode(err) === "ECONNREFUSED" ? 1 : this.options.unhealthyThreshold);
    }
    this.logTransition(replica, wasReady);
  }

  private logTransition(replica: Replica, wasReady: boolean): void {
    if (wasReady !== replica.ready) {
      this.log.info(
        { model: replica.modelId, replica: replica.url, ready: replica.ready, reason: replica.lastError },
        replica.ready ? "replica ready" : "replica not ready",
      );
    }
  }
}
