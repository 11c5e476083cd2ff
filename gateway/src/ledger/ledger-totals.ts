import { hourOfObject, hourStart, parseLines, type LedgerLine } from "./format";
import { listObjects } from "./read";
import type { LedgerStore } from "./store";

/** How long objects read stay cached after their hour: the longest budget period (a month) and a margin. */
const CACHE_HOURS = 32 * 24;

/**
 * Totals of one key over a period, read from the ledger: the baseline a budget counter starts from when it is
 * created anew (a new period, a restarted store, a single replica's restart). Objects are cached by their tag, so a
 * second read of a month lists the objects and fetches only those that changed.
 */
export class LedgerTotals {
  private readonly cache = new Map<string, { etag: string; hour: number; lines: LedgerLine[] }>();

  constructor(
    private readonly store: LedgerStore,
    private readonly prefix: string,
    private readonly wallNow: () => number = Date.now,
  ) {}

  /** The key's tokens (prompt and completion) or requests in the hours [start, end). */
  async total(key: string, resource: "tokens" | "requests", start: number, end: number): Promise<number> {
    const objects = await listObjects(this.store, this.prefix, start, end);
    let sum = 0;
    for (const o of objects) {
      let hit = this.cache.get(o.key);
      if (!hit || hit.etag !== o.etag) {
        const lines = parseLines(await this.store.get(o.key), o.key);
        hit = { etag: o.etag, hour: hourOfObject(o.key) ?? start, lines };
        this.cache.set(o.key, hit);
      }
      for (const l of hit.lines) if (l.key === key) sum += resource === "tokens" ? l.prompt_tokens + l.completion_tokens : l.requests;
    }
    const oldest = hourStart(this.wallNow()) - CACHE_HOURS * 3_600_000;
    for (const [k, v] of this.cache) if (v.hour < oldest) this.cache.delete(k);
    return sum;
  }
}
