import type { Clock, ClockTimer } from "../../src/context/clock";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  every?: number;
  cancelled: boolean;
}

/**
 * Time that moves only when the test says so: timers run in order of due time, then of creation, so a run is the
 * same every time. Promise continuations between timers are the test's to flush (settle()).
 */
export class VirtualClock implements Clock {
  private time = 0;
  private seq = 0;
  private heap: Timer[] = [];

  now(): number {
    return this.time;
  }

  after(ms: number, fn: () => void): ClockTimer {
    return this.push({ at: this.time + Math.max(0, ms), seq: ++this.seq, fn, cancelled: false });
  }

  every(ms: number, fn: () => void): ClockTimer {
    return this.push({ at: this.time + Math.max(1, ms), seq: ++this.seq, fn, every: Math.max(1, ms), cancelled: false });
  }

  cancel(timer: ClockTimer | undefined): void {
    if (timer) (timer as unknown as Timer).cancelled = true;
  }

  /** Timers still due (cancelled ones excluded). */
  get pending(): number {
    return this.heap.filter((t) => !t.cancelled).length;
  }

  /** When the next timer is due, or undefined when none is. */
  nextAt(): number | undefined {
    this.dropCancelled();
    return this.heap[0]?.at;
  }

  /** Runs the next due timer (moving time to it); false when none is left. */
  runNext(): boolean {
    this.dropCancelled();
    const t = this.pop();
    if (!t) return false;
    this.time = Math.max(this.time, t.at);
    if (t.every !== undefined) {
      t.at = this.time + t.every;
      t.seq = ++this.seq;
      this.insert(t);
    }
    t.fn();
    return true;
  }

  /** Runs every timer due up to `this.now() + ms`, then sets the time there. */
  async advance(ms: number, settle: () => Promise<void> = flush): Promise<void> {
    const until = this.time + ms;
    await settle();
    for (let at = this.nextAt(); at !== undefined && at <= until; at = this.nextAt()) {
      this.runNext();
      await settle();
    }
    this.time = until;
  }

  private push(t: Timer): ClockTimer {
    this.insert(t);
    return t as unknown as ClockTimer;
  }

  private dropCancelled(): void {
    while (this.heap[0]?.cancelled) this.pop();
  }

  private before(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private insert(t: Timer): void {
    const h = this.heap;
    h.push(t);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): Timer | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** Lets every pending promise continuation run (nothing real is pending in a simulation, so this is exact). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
