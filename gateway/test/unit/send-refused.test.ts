// The attempt level when connections fail, under a virtual clock (gateway/test/sim/): a refusal before the body went
// is never the client's problem while a replica not yet tried may take it, within the retry budget; once the body
// went, the request is not sent again, and each 503 says which of these happened.
import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { ApiError } from "../../src/api/errors";
import { parseCatalog } from "../../src/config/load-catalog";
import { HeldBody } from "../../src/http/body/held-body";
import { KeyedBudget, type BudgetLease } from "../../src/limits/keyed-budget";
import { ModelPool } from "../../src/upstream/model-pool";
import { REFUSED_RETRY_BUDGET_MS, send, type UpstreamTransport } from "../../src/upstream/send";
import { VirtualClock } from "../sim/virtual-clock";

const URLS = ["http://a:8000", "http://b:8000", "http://c:8000", "http://d:8000"];

/** How each replica's connection goes: refused after `ms`, reset after it read the body, or answered. */
type Fate = { refuse: number; code?: string } | "reset-after-body" | "answer";

function setup(fates: Record<string, Fate>, o: { ready?: string[]; pool?: boolean } = {}) {
  const clock = new VirtualClock();
  const upstream = o.pool ? { mode: "pool", url: URLS[0]! } : { mode: "endpoints", endpoints: URLS.map((url) => ({ url })) };
  const model = parseCatalog({ models: [{ id: "m", category: "generative", maxConcurrency: 2, upstream }] }).models[0]!;
  const pool = new ModelPool(model, clock);
  for (const r of pool.replicas) if (!o.ready || o.ready.includes(r.url)) r.markHealthy();
  const tried: string[] = [];
  const transport: UpstreamTransport = (url, options) => {
    const replica = url.replace(/\/v1\/.*$/, "");
    tried.push(replica);
    const fate = fates[replica]!;
    return new Promise((resolve, reject) => {
      const fail = (code: string) => reject(Object.assign(new Error(`${code} ${replica}`), { code }));
      if (fate === "answer") {
        options.body.resume();
        options.body.once("end", () => resolve({ statusCode: 200, headers: {}, body: Readable.from([]) } as unknown as Dispatcher.ResponseData));
      } else if (fate === "reset-after-body") {
        options.body.resume();
        options.body.once("end", () => clock.after(5, () => fail("ECONNRESET")));
      } else {
        clock.after(fate.refuse, () => fail(fate.code ?? "ECONNREFUSED"));
      }
    });
  };
  const lease = new KeyedBudget(1 << 20, 1 << 20).reserve("k", 64) as BudgetLease;
  const body = new HeldBody(Buffer.from('{"model":"m","messages":[]}'), lease);
  const sent = send(
    { pool, path: "/v1/chat/completions", body, requestId: "r1", stream: false, signal: new AbortController().signal, pick: {} },
    { dispatcher: undefined as never, transport, clock, headersTimeoutMs: 60_000, idleTimeoutMs: 60_000, retryAfterSaturatedSeconds: 1, retryAfterNotReadySeconds: 5 },
  );
  return { clock, pool, tried, sent };
}

/** The send's outcome once the virtual clock has run `ms`. */
async function settle<T>(clock: VirtualClock, promise: Promise<T>, ms = 30_000): Promise<T | ApiError> {
  const outcome = promise.catch((err: unknown) => err as ApiError);
  await clock.advance(ms);
  return outcome;
}

describe("send: connections that fail", () => {
  it("three replicas refuse, the fourth answers: answered, each replica tried once, the refusing ones out for everyone", async () => {
    const { clock, pool, tried, sent } = setup({ "http://a:8000": { refuse: 1 }, "http://b:8000": { refuse: 1 }, "http://c:8000": { refuse: 1 }, "http://d:8000": "answer" });
    const out = await settle(clock, sent);
    expect(out).toMatchObject({ answered: true, replica: { url: "http://d:8000" } });
    expect(new Set(tried).size).toBe(tried.length);
    expect(tried.at(-1)).toBe("http://d:8000");
    for (const r of pool.replicas) expect([r.url, r.ready]).toEqual([r.url, r.url === "http://d:8000"]);
  });

  it("every replica refuses: 503 saying so, after one attempt each", async () => {
    const { clock, tried, sent } = setup(Object.fromEntries(URLS.map((u) => [u, { refuse: 1 }])));
    const out = (await settle(clock, sent)) as ApiError;
    expect(out).toBeInstanceOf(ApiError);
    expect(out.status).toBe(503);
    expect(out.message).toBe("Model `m`: 4 replicas in turn refused the connection (shutting down or restarting), and no other replica is ready. Retry after 5s.");
    expect(tried.sort()).toEqual(URLS);
  });

  it(`connect timeouts: other replicas are tried for ${REFUSED_RETRY_BUDGET_MS} ms from the first failure, then 503 says the others were not reached`, async () => {
    const { clock, tried, sent } = setup(Object.fromEntries(URLS.map((u) => [u, { refuse: 1500, code: "UND_ERR_CONNECT_TIMEOUT" }])));
    const out = (await settle(clock, sent)) as ApiError;
    // 1,500 ms (first failure), 3,000 (within the budget: one more), 4,500 (past it: no more).
    expect(tried).toHaveLength(3);
    expect(out.status).toBe(503);
    expect(out.message).toBe("Model `m`: 3 replicas in turn could not be reached, and no other was tried within the retry budget. Retry after 5s.");
  });

  it("discovery replaces the set while an attempt times out: the new replica is tried (no bound from the old count)", async () => {
    const { clock, pool, tried, sent } = setup({ "http://a:8000": { refuse: 1500, code: "UND_ERR_CONNECT_TIMEOUT" }, "http://b:8000": "answer" }, { ready: ["http://a:8000"] });
    clock.after(500, () => {
      pool.setReplicaUrls(["http://b:8000"]);
      pool.replicas[0]!.markHealthy();
    });
    expect(await settle(clock, sent)).toMatchObject({ answered: true, replica: { url: "http://b:8000" } });
    expect(tried).toEqual(["http://a:8000", "http://b:8000"]);
  });

  it("a refusal, then every other replica full past the queue's wait: 429 model_saturated, not 503", async () => {
    const { clock, pool, sent } = setup({ "http://a:8000": { refuse: 1 }, "http://b:8000": "answer", "http://c:8000": "answer", "http://d:8000": "answer" });
    for (const r of pool.replicas) if (r.url !== "http://a:8000") r.inFlight = r.maxConcurrency;
    const out = (await settle(clock, sent)) as ApiError;
    expect(out).toBeInstanceOf(ApiError);
    expect([out.status, out.code]).toEqual([429, "model_saturated"]);
  });

  it("pool mode: the inference gateway's address refused: 503 naming it, not a replica", async () => {
    const { clock, sent } = setup({ "http://a:8000": { refuse: 1 } }, { pool: true });
    const out = (await settle(clock, sent)) as ApiError;
    expect(out.message).toBe("Model `m`: its inference gateway refused the connection. Retry after 5s.");
  });

  it("a reset after the body went: not sent again (the model server may have it), and the 503 says so", async () => {
    const { clock, tried, sent } = setup(Object.fromEntries(URLS.map((u) => [u, "reset-after-body" as const])));
    const out = (await settle(clock, sent)) as ApiError;
    expect(tried).toHaveLength(1);
    expect(out.status).toBe(503);
    expect(out.message).toMatch(/closed the connection before it answered; the request was not sent again/);
  });
});
