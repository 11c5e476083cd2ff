import { randomBytes } from "node:crypto";
import type { Clock, ClockTimer } from "../context/clock";
import type { Logger } from "../observability/logger";
import { addCounts, emptyCounts, hourLabel, hourStart, objectKey, replicaName, serializeLines, type LedgerCounts, type LedgerLine } from "./format";
import type { LedgerStore } from "./store";

export interface LedgerEvents {
  /** One attempt to write an object: `ok`, and when (epoch ms). */
  written(ok: boolean, atMs: number): void;
  /** Objects whose latest counts are not written yet. */
  pending(objects: number): void;
}

export interface UsageLedgerOptions {
  /** Where in the store the objects go (ends with `/`, or empty). */
  prefix: string;
  /** This process's name in the ledger: the pod's name; a random part is added. */
  podName: string;
  flushMs: number;
  /** Timers (the flush loop). */
  clock: Clock;
  /** The wall clock, epoch ms: which hour a request is counted in. */
  wallNow: () => number;
  log: Logger;
  events?: LedgerEvents;
}

const byKeyAndModel = (a: LedgerLine, b: LedgerLine) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0);

/** One replica-hour: its lines by key and model, and whether it changed since it was last written. */
interface Hour {
  readonly lines: Map<string, LedgerLine>;
  /** Bumped by every record; the object is clean once a write of the latest version succeeded. */
  version: number;
  written: number;
}

/**
 * Counts requests and tokens per key, model and UTC hour in memory and writes each hour's running totals to the
 * store as one object per process (format.ts), every `flushMs` while it changes. A write replaces the object, so
 * retrying one is harmless; an hour leaves memory once it is over and its last counts are written. A failed write
 * keeps the counts and is retried at the next flush, so a store outage loses nothing while the process lives.
 * What a SIGKILL loses is what was counted since the last successful write: at most `flushMs` while the store answers.
 */
export class UsageLedger {
  readonly replica: string;
  private readonly hours = new Map<number, Hour>();
  private readonly timer: ClockTimer;
  private flushing: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly options: UsageLedgerOptions,
  ) {
    this.replica = replicaName(options.podName, randomBytes(4).toString("hex"));
    this.timer = options.clock.every(options.flushMs, () => void this.flush());
  }

  /** Adds one request's counts to its key's and model's line of the current hour. */
  record(key: string, model: string, counts: LedgerCounts): void {
    const at = hourStart(this.options.wallNow());
    let hour = this.hours.get(at);
    if (!hour) {
      hour = { lines: new Map(), version: 0, written: 0 };
      this.hours.set(at, hour);
    }
    const id = `${key}\u0000${model}`;
    let line = hour.lines.get(id);
    if (!line) {
      line = { hour: hourLabel(at), key, model, replica: this.replica, ...emptyCounts() };
      hour.lines.set(id, line);
    }
    addCounts(line, counts);
    hour.version++;
  }

  /** Writes every hour that changed since its last write (one flush at a time); never throws. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeChanged());
    return this.flushing;
  }

  private async writeChanged(): Promise<void> {
    const current = hourStart(this.options.wallNow());
    for (const [at, hour] of [...this.hours]) {
      if (hour.version !== hour.written) {
        const version = hour.version;
        // Serialized now: records that arrive during the write bump the version and are written next time.
        const body = serializeLines([...hour.lines.values()].sort(byKeyAndModel));
        try {
          await this.store.put(objectKey(this.options.prefix, at, this.replica), body);
          hour.written = version;
          this.options.events?.written(true, this.options.wallNow());
          if (this.failing) this.options.log.info({ store: this.store.describe }, "usage ledger: writing again");
          this.failing = false;
        } catch (err) {
          this.options.events?.written(false, this.options.wallNow());
          if (!this.failing) this.options.log.error({ err: (err as Error).message, store: this.store.describe }, "usage ledger: write failed; counts are kept and written again at the next flush");
          this.failing = true;
          break;
        }
      }
      if (at < current && hour.version === hour.written) this.hours.delete(at);
    }
    this.options.events?.pending([...this.hours.values()].filter((h) => h.version !== h.written).length);
  }

  /**
   * Stops the loop and writes what is left (the last flush of a graceful stop), giving up after `timeoutMs`: the pod's
   * termination grace keeps a margin for it (infra/gateway/constants.ts), and a hung store must not outlast it.
   */
  async close(timeoutMs: number): Promise<void> {
    this.options.clock.cancel(this.timer);
    let timer: ClockTimer | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (timer = this.options.clock.after(timeoutMs, resolve)))]);
    this.options.clock.cancel(timer);
  }

  /** Counts not yet written, per key (for tests and the shutdown log). */
  get unwrittenHours(): number {
    return [...this.hours.values()].filter((h) => h.version !== h.written).length;
  }
}
