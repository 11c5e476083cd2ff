import type { Logger } from "./logger";

/**
 * A budget of log lines per second for traffic nobody is accountable for (unauthenticated requests, malformed
 * HTTP): authenticated traffic is bounded by its key's limits, this is not. Lines over the budget are counted
 * and reported in one summary line per second, so the log shows that an attack happened and how large it was.
 */
export class LogSampler {
  private tokens: number;
  private suppressed = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly perSecond: number,
    private readonly log: Logger,
  ) {
    this.tokens = perSecond;
    this.timer = setInterval(() => this.tick(), 1000);
    this.timer.unref();
  }

  /** True if a line about `kind` may be written now; otherwise it is counted under `kind`. */
  allow(kind: string): boolean {
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.suppressed.set(kind, (this.suppressed.get(kind) ?? 0) + 1);
    return false;
  }

  stop(): void {
    clearInterval(this.timer);
    this.tick();
  }

  private tick(): void {
    this.tokens = this.perSecond;
    if (this.suppressed.size === 0) return;
    this.log.warn({ suppressedLines: Object.fromEntries(this.suppressed) }, "log lines suppressed (over GATEWAY_LOG_LINES_PER_SECOND)");
    this.suppressed = new Map();
  }
}
