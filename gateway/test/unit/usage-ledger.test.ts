import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLines, objectKey, type LedgerCounts } from "../../src/ledger/format";
import { DirLedgerStore, type LedgerStore } from "../../src/ledger/store";
import { UsageLedger } from "../../src/ledger/usage-ledger";
import { createLogger } from "../../src/observability/logger";
import { VirtualClock } from "../sim/virtual-clock";

/**
 * The ledger writer on a virtual clock over a real directory store: running totals per key, model and hour, one
 * object per process and hour rewritten whole; a failed write keeps its counts for the next flush; an hour leaves
 * memory once it is over and written; a write under way does not swallow what arrives meanwhile.
 */
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 29, 7, 0, 0);
const one = (prompt: number, completion: number, cached = 0): LedgerCounts => ({ requests: 1, prompt_tokens: prompt, completion_tokens: completion, cached_tokens: cached });

function setup(store?: (dir: string) => LedgerStore) {
  const dir = mkdtempSync(join(tmpdir(), "ledger-unit-"));
  const clock = new VirtualClock();
  const events = { ok: 0, failed: 0, pending: -1 };
  const s = store ? store(dir) : new DirLedgerStore(dir);
  const ledger = new UsageLedger(s, {
    prefix: "ledger/",
    podName: "gw-0",
    flushMs: 10_000,
    clock,
    wallNow: () => T0 + clock.now(),
    log: createLogger("silent"),
    events: { written: (ok) => void (ok ? events.ok++ : events.failed++), pending: (n) => void (events.pending = n) },
  });
  const read = async (hourMs: number) => parseLines(await new DirLedgerStore(dir).get(objectKey("ledger/", hourMs, ledger.replica)), "object");
  // The store does real I/O: after the clock's timers ran, the flush they started is awaited.
  const tick = async (ms: number) => {
    await clock.advance(ms);
    await ledger.flush();
  };
  return { dir, clock, tick, ledger, events, read, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("UsageLedger", () => {
  it("writes each hour's running totals per key and model, and lets an hour go once it is over and written", async () => {
    const { tick, ledger, events, read, cleanup } = setup();
    try {
      ledger.record("team-a", "qwen3-8b", one(10, 5, 4));
      ledger.record("team-a", "qwen3-8b", one(20, 7));
      ledger.record("team-b", "bge", one(3, 0));
      await tick(10_000);
      expect(await read(T0)).toEqual([
        { hour: "2026-11-29T07:00:00Z", key: "team-a", model: "qwen3-8b", replica: ledger.replica, requests: 2, prompt_tokens: 30, completion_tokens: 12, cached_tokens: 4 },
        { hour: "2026-11-29T07:00:00Z", key: "team-b", model: "bge", replica: ledger.replica, requests: 1, prompt_tokens: 3, completion_tokens: 0, cached_tokens: 0 },
      ]);
      // Nothing changed: nothing written.
      await tick(10_000);
      expect(events.ok).toBe(1);
      // The next hour: a new object; the first, already written, leaves memory.
      await tick(HOUR);
      ledger.record("team-a", "qwen3-8b", one(1, 1));
      await tick(10_000);
      expect((await read(T0 + HOUR))[0]).toMatchObject({ hour: "2026-11-29T08:00:00Z", requests: 1 });
      expect((await read(T0))[0]!.requests).toBe(2);
      expect(ledger.unwrittenHours).toBe(0);
      expect(events.pending).toBe(0);
      // A replica's name is its pod's and a part of its own.
      expect(ledger.replica).toMatch(/^gw-0-[0-9a-f]{8}$/);
    } finally {
      cleanup();
    }
  });

  it("keeps the counts of a failed write and writes them once the store answers again", async () => {
    const { dir, tick, ledger, events, read, cleanup } = setup();
    try {
      // A file where the hour's directory must go: every write fails until it is removed.
      mkdirSync(join(dir, "ledger", "v1"), { recursive: true });
      writeFileSync(join(dir, "ledger", "v1", "hour=2026-11-29T07"), "in the way");
      ledger.record("k", "m", one(5, 5));
      await tick(10_000);
      // The hour ends while it cannot be written: it stays in memory.
      await tick(HOUR);
      ledger.record("k", "m", one(1, 1));
      await tick(10_000);
      expect(events.failed).toBeGreaterThanOrEqual(2);
      expect(events.pending).toBe(2);
      rmSync(join(dir, "ledger", "v1", "hour=2026-11-29T07"));
      await tick(10_000);
      expect((await read(T0))[0]).toMatchObject({ requests: 1, prompt_tokens: 5, completion_tokens: 5 });
      expect((await read(T0 + HOUR))[0]).toMatchObject({ requests: 1, prompt_tokens: 1 });
      expect(events.pending).toBe(0);
      expect(ledger.unwrittenHours).toBe(0);
    } finally {
      cleanup();
    }
  });

  it("writes next time what arrived while a write was under way", async () => {
    let release!: () => void;
    let started!: () => void;
    let gate: Promise<void> | undefined;
    const { tick, ledger, read, cleanup } = setup((dir) => {
      const inner = new DirLedgerStore(dir);
      // The directory store, with its writes held until the test lets them go.
      return {
        describe: dir,
        list: (p) => inner.list(p),
        get: (k) => inner.get(k),
        put: async (k, b) => {
          started?.();
          await gate;
          await inner.put(k, b);
        },
      };
    });
    try {
      gate = new Promise<void>((r) => (release = r));
      const writing = new Promise<void>((r) => (started = r));
      ledger.record("k", "m", one(1, 0));
      const first = ledger.flush();
      await writing;
      ledger.record("k", "m", one(2, 0)); // during the write
      release();
      await first;
      expect((await read(T0))[0]!.prompt_tokens).toBe(1);
      expect(ledger.unwrittenHours).toBe(1);
      gate = undefined;
      await tick(10_000);
      expect((await read(T0))[0]).toMatchObject({ requests: 2, prompt_tokens: 3 });
    } finally {
      cleanup();
    }
  });

  it("gives up the last write of a shutdown after its timeout when the store hangs", async () => {
    const { clock, ledger, cleanup } = setup(() => ({ describe: "hung", list: async () => [], get: async () => "", put: () => new Promise<void>(() => undefined) }));
    try {
      ledger.record("k", "m", one(1, 1));
      const closed = ledger.close(5_000);
      await clock.advance(5_000);
      await expect(closed).resolves.toBeUndefined();
      expect(ledger.unwrittenHours).toBe(1);
    } finally {
      cleanup();
    }
  });
});
