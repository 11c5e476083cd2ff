import { monitorEventLoopDelay } from "node:perf_hooks";
import { Gauge, type Registry } from "prom-client";

/** How often the event loop is sampled (a timer of this period): a stall shorter than this may go unseen. */
export const EVENT_LOOP_SAMPLE_MS = 10;
/**
 * Shortest window the gauges describe. A scrape at least this long after the last rotation closes the window
 * and starts the next, so every delay lands in some window and a one-minute scrape sees each minute once.
 */
export const EVENT_LOOP_MIN_WINDOW_MS = 30_000;

/**
 * The event loop's delay: how late a timer of EVENT_LOOP_SAMPLE_MS fires, beyond its period (perf_hooks'
 * monitorEventLoopDelay). Every request the process holds waits at least that long, whatever causes it: a
 * garbage collection, a long synchronous task, a CPU throttled by its limit. Exported as the p99 and the maximum
 * of the window that the last scrape closed. Windows are closed by scrapes (not by a timer of their own), so
 * nothing falls between two windows.
 */
export class EventLoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });

  constructor(registry: Registry, minWindowMs = EVENT_LOOP_MIN_WINDOW_MS) {
    this.histogram.enable();
    // Recorded values are the time between two timer callbacks: the period plus the delay.
    const delay = (ns: number) => Math.max(0, ns / 1e6 - EVENT_LOOP_SAMPLE_MS) / 1000;
    const histogram = this.histogram;
    let windowStart = performance.now();
    let last = { p99: 0, max: 0 };
    const rotate = () => {
      const now = performance.now();
      if (now - windowStart < minWindowMs) return last;
      if (histogram.count > 0) last = { p99: delay(histogram.percentile(99)), max: delay(histogram.max) };
      histogram.reset();
      windowStart = now;
      return last;
    };
    new Gauge({
      name: "gateway_event_loop_delay_p99_seconds",
      help: `The event loop's delay beyond its ${EVENT_LOOP_SAMPLE_MS} ms sampling period, 99th percentile over the last window of at least ${EVENT_LOOP_MIN_WINDOW_MS / 1000} s (closed by a scrape): what garbage collection, long tasks or CPU throttling add to every request.`,
      registers: [registry],
      collect() {
        this.set(rotate().p99);
      },
    });
    new Gauge({
      name: "gateway_event_loop_delay_max_seconds",
      help: "The event loop's longest delay over the same window: the longest stall.",
      registers: [registry],
      collect() {
        this.set(rotate().max);
      },
    });
  }

  /** Stops sampling (the gateway is shutting down). */
  stop(): void {
    this.histogram.disable();
  }
}
