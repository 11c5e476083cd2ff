import { generateApiKey } from "../../src/auth/api-keys";
import { startGatewayProcess, type GatewayProcess } from "../../../scripts/lib/gateway-process";
import { waitFor } from "../support/harness";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";

/**
 * Per-key limits held across gateway replicas (issue 16, item 5): three production gateway processes on one
 * real redis-server, each with its own simulated model server. The "minute" of rpm/tpm is shortened to
 * WINDOW_MS (GATEWAY_RATE_LIMIT_WINDOW_MS) so a whole window fits in a test; the rules are the same.
 */
const WINDOW_MS = 6000;
const LEASE_MS = 1500;
const TOKEN_MS = 20;

type ErrorBody = { error: { message: string; type: string; code: string } };

const KEY_NAMES = ["rpm60", "conc4", "tpm600", "abort1", "crash1", "plain"] as const;
const LIMITS = {
  rpm60: { rpm: 60 },
  conc4: { maxConcurrent: 4 },
  tpm600: { tpm: 600 },
  abort1: { maxConcurrent: 1 },
  crash1: { maxConcurrent: 1 },
  plain: { rpm: 100_000 },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function post(gw: GatewayProcess, key: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.keys[key]}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "Say something about the sea." }], ...body }),
    signal,
  });
}

/** A streamed completion of exactly `tokens` tokens (the simulator runs to max_tokens with ignore_eos). */
const streamOf = (tokens: number) => ({ stream: true, stream_options: { include_usage: true }, max_tokens: tokens, ignore_eos: true });

/** The usage the stream reported (its last usage chunk). */
function usageOf(sse: string): number {
  const m = [...sse.matchAll(/"total_tokens":(\d+)/g)].pop();
  return m ? Number(m[1]) : NaN;
}

/** Most intervals open at one instant. */
function maxOverlap(intervals: [number, number][]): number {
  const events = intervals.flatMap(([a, b]) => [[a, 1] as const, [b, -1] as const]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (open += d));
  return max;
}

describeWithRedis("per-key limits across three gateway processes on one Redis", () => {
  let redis: RunningRedis;
  let gws: GatewayProcess[];
  /** A fourth gateway that fails closed when Redis is down. */
  let closedGw: GatewayProcess;
  const keys = Object.fromEntries(KEY_NAMES.map((n) => [n, generateApiKey()]));
  // A generous Redis timeout: this machine's two cores run four gateways, their simulators and the clients, and
  // a command timing out (event-loop lag counts) would rightly flip a gateway to per-replica limits.
  const settings = { redisUrl: "", rateLimitWindowMs: WINDOW_MS, limitSlotLeaseMs: LEASE_MS, redisTimeoutMs: 2000 };
  /** No gateway left the shared store: the figures above are the shared store's. */
  const stayedShared = async () => {
    for (const gw of gws.filter((g) => g.proc.exitCode === null && g.proc.signalCode === null)) expect(await gw.metric('gateway_rate_limit_store_transitions_total\\{to="down"\\}')).toBe(0);
  };

  beforeAll(async () => {
    redis = await startRedis();
    settings.redisUrl = redis.url;
    const opts = { keys, keyLimits: LIMITS, chat: { maxConcurrency: 64, interTokenLatencyMs: TOKEN_MS } };
    gws = [];
    for (let i = 0; i < 3; i++) gws.push(await startGatewayProcess({ ...opts, settings }));
    closedGw = await startGatewayProcess({ ...opts, settings: { ...settings, redisFailureMode: "closed" } });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...(gws ?? []), closedGw].filter(Boolean).map((g) => g.stop()));
    await redis?.stop();
  });

  it("admits a 60 RPM key 60 times per window in total, in a burst and under sustained load", async () => {
    // A burst of 150 at once, spread over the three gateways.
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 150 }, (_, i) => post(gws[i % 3]!, "rpm60", { max_tokens: 1 }).then(async (r) => (await r.text(), r.status))));
    const burstMs = Date.now() - started;
    const burstAdmitted = burst.filter((s) => s === 200).length;
    // The bucket refills at 60 per window while the burst runs.
    const refill = Math.ceil((burstMs * 60) / WINDOW_MS);
    expect(burst.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(burstAdmitted).toBeGreaterThanOrEqual(60);
    expect(burstAdmitted).toBeLessThanOrEqual(60 + refill + 1);

    // Then sustained load from six clients over the three gateways. Once it has emptied the bucket (the first
    // refusal) and the answers admitted while it drained are in (half a second later), what is admitted during the
    // next window is the bucket's refill: 60. A request is admitted at some instant between its sending and its
    // answer; on a loaded machine that span is long, so the count is bracketed: those whose whole span lies in the
    // window (surely admitted in it) and those whose span touches it (perhaps admitted in it).
    let windowStart = 0;
    let windowEnd = Number.POSITIVE_INFINITY;
    let surely = 0;
    let perhaps = 0;
    let sent = 0;
    const perGateway = [0, 0, 0];
    const giveUp = Date.now() + 4 * WINDOW_MS;
    await Promise.all(
      Array.from({ length: 6 }, async (_, c) => {
        while (Date.now() < Math.min(windowEnd, giveUp)) {
          const from = Date.now();
          const res = await post(gws[c % 3]!, "rpm60", { max_tokens: 1 });
          await res.text();
          const at = Date.now();
          sent++;
          if (res.status === 429 && windowStart === 0) {
            windowStart = at + 500;
            windowEnd = windowStart + WINDOW_MS;
          }
          if (res.status === 200 && windowStart > 0 && at >= windowStart && from <= windowEnd) {
            perhaps++;
            if (from >= windowStart && at <= windowEnd) surely++;
            perGateway[c % 3]!++;
          }
          if (res.status === 429) expect(res.headers.get("x-ratelimit-limit-requests")).toBe("60");
        }
      }),
    );
    console.log(`RPM 60 per ${WINDOW_MS} ms window, three gateways: burst of 150 in ${burstMs} ms admitted ${burstAdmitted} (refill allowance ${refill}); sustained window: ${sent} sent, ${surely} to ${perhaps} admitted (per gateway ${perGateway.join("/")})`);
    expect(perhaps).toBeGreaterThanOrEqual(59);
    expect(surely).toBeLessThanOrEqual(61);
    await stayedShared();
  }, 60_000);

  it("never lets a key with maxConcurrent 4 hold more than 4 requests in progress across the three", async () => {
    const intervals: [number, number][] = [];
    const refusals = new Map<string, number>();
    const deadline = Date.now() + 5000;
    await Promise.all(
      Array.from({ length: 12 }, async (_, c) => {
        while (Date.now() < deadline) {
          const res = await post(gws[c % 3]!, "conc4", streamOf(15));
          if (res.status === 200) {
            // From the answer's headers to its end: inside the time the gateway held the slot.
            const opened = performance.now();
            await res.text();
            intervals.push([opened, performance.now()]);
          } else {
            const body = (await res.json()) as ErrorBody;
            refusals.set(`${res.status} ${body.error.code}`, (refusals.get(`${res.status} ${body.error.code}`) ?? 0) + 1);
            await sleep(10);
          }
        }
      }),
    );
    const max = maxOverlap(intervals);
    console.log(`maxConcurrent 4, 12 clients over three gateways for 5 s: ${intervals.length} streams completed, max ${max} at once; refusals ${JSON.stringify(Object.fromEntries(refusals))}`);
    expect(max).toBeLessThanOrEqual(4);
    expect(max).toBeGreaterThanOrEqual(3);
    expect([...refusals.keys()]).toEqual(["429 concurrency_limit_exceeded"]);
    await stayedShared();
  }, 30_000);

  it("keeps concurrent streams within TPM: tokens are reserved at admission and settled at the end", async () => {
    // Twelve streams of 100 tokens at once (each about 2 s long) against 600 tokens per window: charging only
    // after the responses (as before) admitted all twelve.
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await post(gws[i % 3]!, "tpm600", streamOf(100));
        const text = await res.text();
        return { status: res.status, used: res.status === 200 ? usageOf(text) : 0, code: res.status === 200 ? undefined : (JSON.parse(text) as ErrorBody).error.code, headers: res.headers };
      }),
    );
    const elapsed = Date.now() - started;
    const admitted = results.filter((r) => r.status === 200);
    const used = admitted.reduce((n, r) => n + r.used, 0);
    console.log(`TPM 600 per window, 12 concurrent 100-token streams: ${admitted.length} admitted, ${used} tokens used (ratio ${(used / 600).toFixed(2)} of the limit) in ${elapsed} ms`);
    expect(admitted.length).toBeGreaterThan(0);
    expect(admitted.length).toBeLessThan(12);
    expect(used).toBeLessThanOrEqual(600);
    const refused = results.filter((r) => r.status !== 200);
    expect(new Set(refused.map((r) => `${r.status} ${r.code}`))).toEqual(new Set(["429 rate_limit_exceeded"]));
    expect(Number(refused[0]!.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    expect(refused[0]!.headers.get("x-ratelimit-limit-tokens")).toBe("600");

    // Settled: the reservations beyond real usage came back (prompt estimate and max_tokens exceed the usage a bit),
    // so after the streams ended the bucket holds what the window refilled minus what was really used.
    const after = await post(gws[0]!, "tpm600", { max_tokens: 1 });
    await after.text();
    expect(after.status).toBe(200);
    await stayedShared();
  }, 30_000);

  it("releases the slot when the client aborts its stream", async () => {
    const abort = new AbortController();
    const first = await post(gws[0]!, "abort1", streamOf(500), abort.signal);
    expect(first.status).toBe(200);
    const reader = first.body!.getReader();
    await reader.read();

    const refused = await post(gws[1]!, "abort1", { max_tokens: 1 });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("concurrency_limit_exceeded");
    expect(refused.headers.get("retry-after")).toBe("1");

    abort.abort();
    const aborted = Date.now();
    let status = 0;
    await waitFor(
      async () => {
        const res = await post(gws[2]!, "abort1", { max_tokens: 1 });
        await res.text();
        status = res.status;
        return status === 200;
      },
      3000,
      "the slot released after the abort",
    );
    console.log(`slot released after client abort: admitted on another gateway ${Date.now() - aborted} ms after the abort`);
  });

  it("renews a live stream's slot and frees the slots of a gateway that died within one lease", async () => {
    const victim = gws[2]!;
    const stream = await post(victim, "crash1", streamOf(1000));
    expect(stream.status).toBe(200);
    void stream.body!.getReader().read().catch(() => undefined);
    // Past two leases the slot is still held: the gateway renews it.
    await sleep(LEASE_MS * 2);
    expect((await post(gws[0]!, "crash1", { max_tokens: 1 })).status).toBe(429);

    victim.proc.kill("SIGKILL");
    const killed = Date.now();
    await waitFor(
      async () => {
        const res = await post(gws[0]!, "crash1", { max_tokens: 1 });
        await res.text();
        return res.status === 200;
      },
      LEASE_MS * 3,
      "the dead gateway's slot expired",
    );
    const freedMs = Date.now() - killed;
    console.log(`slot of a SIGKILLed gateway freed after ${freedMs} ms (lease ${LEASE_MS} ms)`);
    expect(freedMs).toBeLessThanOrEqual(LEASE_MS + 1000);
  }, 30_000);

  it("makes a Redis outage visible and fails open or closed as configured, then recovers", async () => {
    const open = gws[0]!;
    const readyz = async (gw: GatewayProcess) => (await fetch(`${gw.opsUrl}/readyz`)).json() as Promise<{ status: string; limits: string }>;
    expect(await open.metric("gateway_rate_limit_store_up")).toBe(1);
    expect(await readyz(open)).toEqual({ status: "ready", limits: "shared" });

    await redis.stop();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(open, "plain", { max_tokens: 1 });
      await res.text();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await post(closedGw, "plain", { max_tokens: 1 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({ type: "service_unavailable_error", code: "rate_limit_store_unavailable" });
    // Keys without limits do not need the store.
    expect((await fetch(`${closedGw.url}/v1/models`, { headers: { authorization: `Bearer ${keys.plain}` } })).status).toBe(200);

    for (const gw of [open, closedGw]) expect(await gw.metric("gateway_rate_limit_store_up")).toBe(0);
    expect(await readyz(open)).toEqual({ status: "ready", limits: "per-replica" });
    expect(await readyz(closedGw)).toEqual({ status: "ready", limits: "unavailable" });
    const warnings = (gw: GatewayProcess) => gw.logs().filter((l) => String(l.msg).startsWith("rate-limit store unreachable"));
    await waitFor(() => warnings(open).length > 0 && warnings(closedGw).length > 0, 5000, "the warnings");
    expect(warnings(open)).toHaveLength(1);
    expect(warnings(open)[0]).toMatchObject({ level: 40, failureMode: "open" });
    expect(warnings(closedGw)[0]).toMatchObject({ level: 40, failureMode: "closed" });

    await redis.restart();
    await waitFor(async () => (await open.metric("gateway_rate_limit_store_up")) === 1 && (await closedGw.metric("gateway_rate_limit_store_up")) === 1, 10_000, "both back on Redis");
    const back = await post(closedGw, "plain", { max_tokens: 1 });
    await back.text();
    expect(back.status).toBe(200);
    expect(await readyz(closedGw)).toEqual({ status: "ready", limits: "shared" });
    for (const gw of [open, closedGw]) {
      await waitFor(() => gw.logs().some((l) => String(l.msg).startsWith("rate-limit store reachable again")), 5000, "the recovery line");
      expect(gw.logs().filter((l) => String(l.msg).startsWith("rate-limit store reachable again"))).toHaveLength(1);
      expect(await gw.metric('gateway_rate_limit_store_transitions_total\\{to="down"\\}')).toBe(1);
    }
  }, 30_000);
});
