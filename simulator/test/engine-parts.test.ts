import { loadFactor, prefillMs } from "../src/latency";
import { PrefixCache } from "../src/prefix-cache";
import { createPrng } from "../src/prng";
import { QueueFullError, Scheduler } from "../src/scheduler";
import { generateTextPieces, truncateAtStop } from "../src/text-generator";
import { splitIntoTokenPieces, tokenize } from "../src/tokenizer";
import { sampleFromSchema } from "../src/tool-calls";

describe("scheduler", () => {
  test("without a bound, queues every request FIFO, as vLLM's scheduler does", async () => {
    const scheduler = new Scheduler(1, undefined, 16);
    const first = await scheduler.admit(new AbortController().signal);
    const waiting = Array.from({ length: 500 }, () => scheduler.admit(new AbortController().signal));
    expect(scheduler.waiting).toBe(500);
    first.release();
    for (const admission of waiting) (await admission).release();
    expect(scheduler).toMatchObject({ running: 0, waiting: 0 });
  });

  test("the bounded-queue fault: grants up to maxRunning, queues FIFO, rejects synchronously when the queue is full", async () => {
    const scheduler = new Scheduler(2, 2, 16);
    const signal = new AbortController().signal;
    const a = await scheduler.admit(signal);
    const b = await scheduler.admit(signal);
    const granted: string[] = [];
    const c = scheduler.admit(signal).then((slot) => (granted.push("c"), slot));
    const d = scheduler.admit(signal).then((slot) => (granted.push("d"), slot));
    expect(scheduler.running).toBe(2);
    expect(scheduler.waiting).toBe(2);
    expect(() => scheduler.admit(signal)).toThrow(QueueFullError);
    a.release();
    a.release(); // idempotent: must not free a second slot
    const slotC = await c;
    expect(granted).toEqual(["c"]);
    expect(scheduler.running).toBe(2);
    b.release();
    await d;
    expect(granted).toEqual(["c", "d"]);
    slotC.release();
    expect(scheduler.running).toBe(1);
  });

  test("an aborted waiter leaves the queue and never gets a slot", async () => {
    const scheduler = new Scheduler(1, 5, 16);
    const running = await scheduler.admit(new AbortController().signal);
    const controller = new AbortController();
    const waiting = scheduler.admit(controller.signal);
    expect(scheduler.waiting).toBe(1);
    controller.abort(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    expect(scheduler.waiting).toBe(0);
    running.release();
    expect(scheduler.running).toBe(0);
  });

  test("KV blocks in use round each running sequence up to whole blocks", async () => {
    const scheduler = new Scheduler(4, 0, 16);
    const signal = new AbortController().signal;
    const a = await scheduler.admit(signal);
    const b = await scheduler.admit(signal);
    a.tokens = 17;
    b.tokens = 16;
    expect(scheduler.blocksInUse).toBe(3);
    a.release();
    expect(scheduler.blocksInUse).toBe(1);
  });
});

describe("prefix cache", () => {
  const tokens = (n: number, tag = "t") => Array.from({ length: n }, (_, i) => `${tag}${i}`);

  test("only full blocks are hashed, and a block's hash depends on everything before it", () => {
    const cache = new PrefixCache(4, 100);
    expect(cache.blockHashes(tokens(11))).toHaveLength(2);
    const x = cache.blockHashes(["a", "b", "c", "d", "e", "f", "g", "h"]);
    const y = cache.blockHashes(["z", "b", "c", "d", "e", "f", "g", "h"]);
    expect(x[0]).not.toBe(y[0]);
    expect(x[1]).not.toBe(y[1]); // same tokens in block 2, different parent
  });

  test("match counts the leading cached run and always leaves the last token uncached", () => {
    const cache = new PrefixCache(4, 100);
    const prompt = tokens(12);
    const hashes = cache.blockHashes(prompt);
    expect(cache.match(hashes, 12).tokens).toBe(0);
    cache.insert(hashes);
    expect(cache.match(hashes, 12)).toEqual({ tokens: 8, readyAtMs: 0 }); // 3 blocks cached, but the last token must be recomputed
    const longer = tokens(14);
    expect(cache.match(cache.blockHashes(longer), 14).tokens).toBe(12);
  });

  test("least recently used blocks are evicted first", () => {
    const cache = new PrefixCache(2, 3);
    const first = cache.blockHashes(tokens(6, "a"));
    cache.insert(first);
    const second = cache.blockHashes(tokens(4, "b"));
    cache.insert(second);
    expect(cache.size).toBe(3);
    expect(cache.match(first, 100).tokens).toBe(0); // a's first block was evicted, so the chain misses at once
    expect(cache.match(second, 100).tokens).toBe(4);
  });

  test("a prefix still being computed is reused from when it is ready; an abandoned one is forgotten", () => {
    const cache = new PrefixCache(4, 100);
    const doc = cache.blockHashes(tokens(16));
    cache.insert(doc, 500); // a request computing 4 blocks, done at t=500
    expect(cache.match(doc, 20)).toEqual({ tokens: 16, readyAtMs: 500 });
    const other = cache.blockHashes(tokens(8, "o"));
    cache.insert(other, 900);
    cache.forget(other, 900); // that request was cancelled during its prefill
    expect(cache.match(other, 20).tokens).toBe(0);
    cache.insert(doc, 700); // computed again later: the earlier time stands
    cache.forget(doc, 700); // and forgetting the later one leaves the blocks
    expect(cache.match(doc, 20)).toEqual({ tokens: 16, readyAtMs: 500 });
  });
});

describe("text and tokens", () => {
  test("generated pieces are one token each and deterministic per seed", () => {
    const pieces = generateTextPieces(createPrng(7), 40);
    expect(pieces).toHaveLength(40);
    expect(tokenize(pieces.join(""))).toHaveLength(40);
    expect(generateTextPieces(createPrng(7), 40)).toEqual(pieces);
    expect(generateTextPieces(createPrng(8), 40)).not.toEqual(pieces);
  });

  test("truncateAtStop cuts before the earliest stop sequence, mid-token if needed", () => {
    const pieces = ["Hello", " big", " world", "."];
    expect(truncateAtStop(pieces, ["world", "big"])).toEqual({ pieces: ["Hello", " "], stopped: true });
    expect(truncateAtStop(pieces, [" big"])).toEqual({ pieces: ["Hello"], stopped: true });
    expect(truncateAtStop(pieces, ["orl"])).toEqual({ pieces: ["Hello", " big", " w"], stopped: true });
    expect(truncateAtStop(pieces, ["absent"])).toEqual({ pieces, stopped: false });
  });

  test("splitIntoTokenPieces round-trips text exactly", () => {
    const text = '{"city": "São Paulo", "days": 3}  ';
    const pieces = splitIntoTokenPieces(text);
    expect(pieces.join("")).toBe(text);
    expect(pieces.length).toBeGreaterThanOrEqual(tokenize(text).length);
  });
});

describe("latency model", () => {
  const latency = { timeToFirstTokenMs: 30, interTokenLatencyMs: 10, prefillTimePerTokenMs: 0.5, timeFactorUnderLoad: 3 };

  test("prefill pays only for uncached tokens, so cache hits shorten TTFT", () => {
    expect(prefillMs(latency, 1000, 1)).toBe(530);
    expect(prefillMs(latency, 40, 1)).toBe(50);
  });

  test("the load factor grows linearly from 1 to timeFactorUnderLoad at maxNumSeqs", () => {
    expect(loadFactor(latency, 1, 5)).toBe(1);
    expect(loadFactor(latency, 3, 5)).toBe(2);
    expect(loadFactor(latency, 5, 5)).toBe(3);
    expect(loadFactor({ ...latency, timeFactorUnderLoad: 1 }, 5, 5)).toBe(1);
  });
});

describe("tool argument sampling", () => {
  test("values respect type, enum, bounds and required properties", () => {
    const schema = {
      type: "object",
      properties: {
        n: { type: "integer", minimum: 5, maximum: 6 },
        tags: { type: "array", items: { type: "string" } },
        mode: { enum: ["a", "b"] },
        nested: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
      },
      required: ["n", "tags", "mode", "nested"],
    };
    for (let seed = 0; seed < 20; seed++) {
      const value = sampleFromSchema(schema, createPrng(seed)) as Record<string, unknown>;
      expect([5, 6]).toContain(value.n);
      expect(Array.isArray(value.tags)).toBe(true);
      expect(["a", "b"]).toContain(value.mode);
      expect(typeof (value.nested as { ok: unknown }).ok).toBe("boolean");
    }
  });
});
