/** A timer a clock set; only that clock can cancel it. */
export type ClockTimer = { readonly __clockTimer: unique symbol };

/**
 * Where the gateway's control core reads time and sets timers: queues, deadlines, replicas' load, adapters, the
 * limiter. Production runs on the system's clock; the deterministic simulation (gateway/test/sim/) on a virtual one,
 * so every wait and lease can be replayed from a seed. Nothing in the core calls a global timer itself.
 */
export interface Clock {
  /** Milliseconds, monotonic (not a date). */
  now(): number;
  /** Runs `fn` once after `ms`. Never keeps the process alive. */
  after(ms: number, fn: () => void): ClockTimer;
  /** Runs `fn` every `ms`. Never keeps the process alive. */
  every(ms: number, fn: () => void): ClockTimer;
  /** Cancels a timer of this clock (no-op for undefined or one that already ran). */
  cancel(timer: ClockTimer | undefined): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after: (ms, fn) => setTimeout(fn, ms).unref() as unknown as ClockTimer,
  every: (ms, fn) => setInterval(fn, ms).unref() as unknown as ClockTimer,
  cancel: (timer) => clearTimeout(timer as unknown as NodeJS.Timeout),
};
