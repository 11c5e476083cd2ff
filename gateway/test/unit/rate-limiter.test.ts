import pino from "pino";
import type { ApiKeyRecord } from "../../src/context/api-key-record";
import { ApiError } from "../../src/api/errors";
import { LocalBuckets, type Buckets } from "../../src/limits/buckets";
import { RateLimiter, tokensToReserve } from "../../src/limits/rate-limiter";

const silent = pino({ level: "silent" });

describe("tokensToReserve", () => {
  it("is the prompt estimate plus the completion bound, or the ceiling", () => {
    expect(tokensToReserve({ max_tokens: 100 }, 400, "/v1/chat/completions", 4096)).toBe(200);
    expect(tokensToReserve({ max_completion_tokens: 50, max_tokens: 100 }, 400, "/v1/chat/completions", 4096)).toBe(150);
    expect(tokensToReserve({ max_tokens: 10, n: 3 }, 40, "/v1/chat/completions", 4096)).toBe(40);
    expect(tokensToReserve({}, 40, "/v1/chat/completions", 4096)).toBe(10 + 4096);
    expect(tokensToReserve({ input: "x" }, 40, "/v1/embeddings", 4096)).toBe(10);
  });

  it("reserves for every prompt of a legacy batch, and for the stored conversation a Responses turn continues", () => {
    expect(tokensToReserve({ prompt: ["a", "b", "c"], max_tokens: 10 }, 40, "/v1/completions", 4096)).toBe(10 + 30);
    expect(tokensToReserve({ prompt: [[1, 2], [3]], max_tokens: 10, n: 2 }, 40, "/v1/completions", 4096)).toBe(10 + 40);
    // One prompt as token ids, and the legacy default of 16 tokens.
    expect(tokensToReserve({ prompt: [1, 2, 3] }, 40, "/v1/completions", 4096)).toBe(10 + 16);
    expect(tokensToReserve({ input: "next", previous_response_id: "resp_x", max_output_tokens: 100 }, 40, "/v1/responses", 4096)).toBe(10 + 4096 + 100);
    expect(tokensToReserve({ input: "first", max_output_tokens: 100 }, 40, "/v1/responses", 4096)).toBe(10 + 100);
  });
});

describe("LocalBuckets", () => {
  it("reserves only what the bucket holds and settles refunds up to its size", async () => {
    let t = 0;
    const b = new LocalBuckets(() => t, 60_000);
    expect((await b.reserve("k", 100, 80)).allowed).toBe(true);
    expect(await b.reserve("k", 100, 30)).toMatchObject({ allowed: false, tokensLevel: 20, waitMs: 6000 });
    await b.charge("k", 100, -500); // a refund never overfills the bucket
    expect(await b.reserve("k", 100, 100)).toMatchObject({ allowed: true, tokensLevel: 0 });
    t += 30_000;
    expect(await b.reserve("k", 100, 50)).toMatchObject({ allowed: true, tokensLevel: 0 });
  });

  it("holds at most maxConcurrent slots and takes nothing when refusing", async () => {
    const b = new LocalBuckets(() => 0);
    expect((await b.admit("k", { maxConcurrent: 2, rpm: 10 }, "a")).allowed).toBe(true);
    expect((await b.admit("k", { maxConcurrent: 2, rpm: 10 }, "b")).inFlight).toBe(2);
    const refused = await b.admit("k", { maxConcurrent: 2, rpm: 10 }, "c");
    expect(refused).toMatchObject({ allowed: false, refusedBy: "concurrency" });
    await b.release("k", "a");
    expect(await b.admit("k", { maxConcurrent: 2, rpm: 10 }, "c")).toMatchObject({ allowed: true, requestsLevel: 7 });
  });
});

describe("RateLimiter tickets", () => {
  const key: ApiKeyRecord = { name: "k", tpm: 1000, maxConcurrent: 1 };

  it("settles the reservation with the real usage and releases the slot on end", async () => {
    const limiter = new RateLimiter(undefined, silent);
    const t1 = (await limiter.admit(key))!;
    await t1.reserve(600);
    await expect(limiter.admit(key)).rejects.toMatchObject({ status: 429, code: "concurrency_limit_exceeded" });
    t1.release();
    await t1.settle({ total_tokens: 100 }, true);
    const t2 = (await limiter.admit(key))!;
    // 1000 - 100 used: 900 left, so an 890-token reservation fits and leaves 10: too few for a 50-token request.
    await t2.reserve(890);
    t2.release();
    const t3 = (await limiter.admit(key))!;
    await expect(t3.reserve(50)).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded", type: "tokens" });
    t3.release();
    limiter.stop();
  });

  it("a cut stream keeps its reservation; a request that got no answer is refunded", async () => {
    const limiter = new RateLimiter(undefined, silent);
    const cut = (await limiter.admit({ name: "c", tpm: 1000 }))!;
    await cut.reserve(700);
    await cut.settle(undefined, true);
    const next = (await limiter.admit({ name: "c", tpm: 1000 }))!;
    await expect(next.reserve(400)).rejects.toBeInstanceOf(ApiError);
    const refunded = (await limiter.admit({ name: "r", tpm: 1000 }))!;
    await refunded.reserve(700);
    await refunded.settle(undefined, false);
    await (await limiter.admit({ name: "r", tpm: 1000 }))!.reserve(1000);
    limiter.stop();
  });

  it("fails open to per-replica buckets or closed with 503, and says so once", async () => {
    const down: Buckets = {
      admit: () => Promise.reject(new Error("down")),
      reserve: () => Promise.reject(new Error("down")),
      charge: () => Promise.reject(new Error("down")),
      release: () => Promise.reject(new Error("down")),
      renew: () => Promise.reject(new Error("down")),
      ping: () => Promise.reject(new Error("down")),
    };
    const transitions: boolean[] = [];
    const open = new RateLimiter(down, silent, { refused: () => undefined, storeUp: (up) => transitions.push(up) }, { failureMode: "open" });
    expect(await open.admit({ name: "k", rpm: 5 })).toBeDefined();
    expect(await open.admit({ name: "k", rpm: 5 })).toBeDefined();
    expect(open.state).toBe("per-replica");
    expect(transitions).toEqual([true, false]);
    open.stop();

    const closed = new RateLimiter(down, silent, undefined, { failureMode: "closed" });
    await expect(closed.admit({ name: "k", rpm: 5 })).rejects.toMatchObject({ status: 503, code: "rate_limit_store_unavailable" });
    expect(closed.state).toBe("unavailable");
    expect(await closed.admit({ name: "unlimited" })).toBeUndefined();
    closed.stop();
  });
});
