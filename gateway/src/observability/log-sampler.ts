import type { Logger } from "./logger";

/** The budget shared by everything nobody is accountable for: unauthenticated requests, malformed HTTP. */
export const ANONYMOUS = "anonymous";

/**
 * Budgets of log lines per second for traffic no rate limit pays for: one shared by unauthenticated requests and
 * malformed HTTP, and one per API key for its requests that its RPM did not charge (refused before or by the rate
 * limit, unknown paths, model listings). Requests a key's RPM charged are bounded by it and always logged. Lines
 * over a budget are counted and reported in one summary line per second, so the log shows that a flood happened,
 * from whom, and how large it was. There are as many budgets as configured keys, plus one.
 */
export class LogSampler {
  private spent = new Map<string, number>();
  private suppressed = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly perSecond: number,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => this.tick(), 1000);
    this.timer.unref();
  }

  /**
   * True if a line about `kind` may be written now from `budget` (ANONYMOUS, or `key:<name>`); otherwise it is
   * counted under `kind`.
   */
  allow(kind: string, budget: string = ANONYMOUS): boolean {
    const spent = this.spent.get(budget) ?? 0;
    if (spent < this.perSecond) {
      this.spent.set(budget, spent + 1);
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
    this.spent = new Map();
    if (this.suppressed.size === 0) return;
    this.log.warn({ suppressedLines: Object.fromEntries(this.suppressed) }, "log lines suppressed (over GATEWAY_LOG_LINES_PER_SECOND)");
    this.suppressed = new Map();
  }
}
