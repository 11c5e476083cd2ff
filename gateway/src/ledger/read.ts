import { hourOfObject, hoursPrefix, parseLines, type LedgerLine } from "./format";
import type { LedgerObject, LedgerStore } from "./store";

/** The listing prefixes that cover the hours [from, to): one per UTC month, so a listing never walks the whole ledger. */
export function monthPrefixes(prefix: string, fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  const d = new Date(fromMs);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth();
  while (Date.UTC(y, m, 1) < toMs) {
    out.push(hoursPrefix(prefix, `${y}-${String(m + 1).padStart(2, "0")}`));
    if (++m === 12) {
      m = 0;
      y++;
    }
  }
  return out;
}

/** The ledger objects of the hours [from, to). */
export async function listObjects(store: LedgerStore, prefix: string, fromMs: number, toMs: number): Promise<LedgerObject[]> {
  const out: LedgerObject[] = [];
  for (const p of monthPrefixes(prefix, fromMs, toMs)) {
    for (const o of await store.list(p)) {
      const hour = hourOfObject(o.key);
      if (hour !== undefined && hour >= fromMs && hour < toMs) out.push(o);
    }
  }
  return out;
}

/** Every ledger line of the hours [from, to), read `concurrency` objects at a time. */
export async function readLines(store: LedgerStore, prefix: string, fromMs: number, toMs: number, concurrency = 16): Promise<LedgerLine[]> {
  const objects = await listObjects(store, prefix, fromMs, toMs);
  const out: LedgerLine[][] = new Array(objects.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < objects.length; i = next++) out[i] = parseLines(await store.get(objects[i]!.key), objects[i]!.key);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, objects.length) }, worker));
  return out.flat();
}
