import { createPrng, type Prng } from "../../../simulator/src/prng";
import { ApiError } from "../../src/api/errors";
import type { ApiKeyRecord } from "../../src/context/api-key-record";
import { ClientGone } from "../../src/context/client-gone";
import { RequestContext } from "../../src/context/request-context";
import type { CatalogInput } from "../../src/config/catalog";
import { parseCatalog } from "../../src/config/load-catalog";
import { HeldBody } from "../../src/http/body/held-body";
import { admitBeforeBody } from "../../src/http/admission";
import { KeyedBudget, type BudgetLease } from "../../src/limits/keyed-budget";
import { RateLimiter, tokensToReserve } from "../../src/limits/rate-limiter";
import { reserveKeyTokens, type HeaderSink } from "../../src/limits/request-limits";
import { createLogger } from "../../src/observability/logger";
import { ModelPool } from "../../src/upstream/model-pool";
import { normalizeUpstreamError, parseErrorBody } from "../../src/upstream/normalize-error";
import { readHead } from "../../src/upstream/read-head";
import type { Replica } from "../../src/upstream/replica";
import type { ReplicaSlot } from "../../src/upstream/replica-slot";
import { band, tenantOf, type Tenant } from "../../src/upstream/scheduler/tenant";
import { send, type SendOptions } from "../../src/upstream/send";
import { SimAnswerBody, SimServer, SimServers } from "./servers";
import { SimStore } from "./store";
import { flush, VirtualClock } from "./virtual-clock";

/**
 * A deterministic simulation of the gateway's control core (docs/development.md, "Simulation"): one model's pool and
 * scheduler, its replicas, LoRA adapters and wake, the per-key limiter on a shared store, the request and body
 * budgets, and the request path that ties them (admission, send, relay's end, settlement), driven by seeded clients
 * and faults on a virtual clock. Invariants are checked after every step; a seed replays exactly.
 */

const PATH = "/v1/chat/completions";
const HEALTH_MS = 1000;
const SCRAPE_MS = 1000;
const LEASE_MS = 3000;
/** No new arrivals after this, ms; then every fault ends and the world runs until everything has left. */
const HORIZON_MS = 20_000;
const DRAIN_MS = 90_000;

export interface SimResult {
  seed: number;
  violations: string[];
  /** What happened, step by step (with `trace`). */
  trace: string[];
  requests: number;
  outcomes: Record<string, number>;
  steps: number;
}

interface KeySpec {
  record: ApiKeyRecord;
  rate: number;
}

interface World {
  catalog: CatalogInput["models"][number];
  keys: KeySpec[];
  replicas: number;
  store?: { slowMs: number; faults: [number, number][]; lostReplyRate: number; failureMode: "open" | "closed" };
  body: { total: number; perKey: number; waiting: number };
  inFlight: { total: number; perKey: number };
  shutdownAt?: number;
}

/** A world drawn from the seed: sizes, limits and faults within what the gateway's configuration allows. */
function drawWorld(rng: Prng): World {
  const maxConcurrency = rng.int(1, 4);
  const catalog: CatalogInput["models"][number] = {
    id: "m",
    category: "generative",
    maxConcurrency,
    routing: {
      strategy: rng.pick(["least-loaded", "round-robin"] as const),
      queueTimeoutMs: rng.pick([0, 300, 2000, 5000]),
      maxQueueLength: rng.int(0, 8),
      adapterAffinity: rng.next() < 0.7,
      maxWaitingRequests: 4,
    },
    upstream: { mode: "dns", host: "m.sim", port: 8000, refreshIntervalMs: 5000 },
  };
  if (rng.next() < 0.5) {
    const maxLoras = rng.int(1, 3);
    const preloaded = rng.int(0, maxLoras - 1);
    const onDemand = rng.int(1, 3);
    catalog.lora = {
      maxLoras,
      adapters: [
        ...Array.from({ length: preloaded }, (_, i) => ({ id: `m-p${i}`, path: `/a/p${i}`, loading: "preload" as const })),
        ...Array.from({ length: onDemand }, (_, i) => ({ id: `m-d${i}`, path: `/a/d${i}`, loading: "on-demand" as const })),
      ],
    };
  }
  if (rng.next() < 0.3) catalog.wake = { timeoutMs: rng.int(2000, 15_000), maxHeld: rng.int(1, 8) };
  const keys: KeySpec[] = Array.from({ length: rng.int(1, 4) }, (_, i) => ({
    record: {
      name: `k${i}`,
      priority: rng.next() < 0.25 ? "batch" : "interactive",
      weight: rng.pick([1, 1, 1, 2, 3, 0.5]),
      maxConcurrent: rng.next() < 0.4 ? rng.int(1, 4) : undefined,
      tpm: rng.next() < 0.4 ? rng.int(20_000, 200_000) : undefined,
    },
    rate: rng.pick([0.5, 1, 2, 5]),
  }));
  const limited = keys.some((k) => k.record.maxConcurrent || k.record.tpm);
  const faults: [number, number][] = [];
  if (rng.next() < 0.25) for (let i = rng.int(1, 2); i > 0; i--) faults.push([rng.int(0, HORIZON_MS), rng.int(200, 4000)]);
  const total = rng.int(4, 40);
  const bodyTotal = rng.int(200, 2000) * 1024;
  return {
    catalog,
    keys,
    replicas: rng.int(1, 3),
    store: limited && rng.next() < 0.7 ? { slowMs: rng.next() < 0.2 ? rng.int(20, 300) : 3, faults, lostReplyRate: 0.5, failureMode: rng.pick(["open", "closed"] as const) } : undefined,
    body: { total: bodyTotal, perKey: Math.max(100 * 1024, Math.floor(bodyTotal / rng.int(1, 3))), waiting: rng.int(100, 1000) * 1024 },
    inFlight: { total, perKey: rng.int(2, total) },
    shutdownAt: catalog.wake && rng.next() < 0.1 ? rng.int(5000, HORIZON_MS) : undefined,
  };
}

/** One client request as the simulation tracks it. */
interface Req {
  id: number;
  key: KeySpec;
  model: string;
  ctx: RequestContext;
  lease?: BudgetLease;
  /** Tokens reserved, and what settling it should leave charged. */
  reserved?: number;
  expectedCharge: number;
  outcome?: string;
  ended: boolean;
  answer?: SimAnswerBody;
}

interface TrackedSlot {
  slot: ReplicaSlot;
  tenant: Tenant;
}

export async function simulate(seed: number, options: { trace?: boolean } = {}): Promise<SimResult> {
  const rng = createPrng(seed);
  const clock = new VirtualClock();
  const world = drawWorld(rng);
  const violations: string[] = [];
  const trace: string[] = [];
  const note = (line: string) => {
    if (options.trace) trace.push(`${String(clock.now()).padStart(7)} ${line}`);
  };
  const violated = (what: string) => {
    if (violations.length < 10) violations.push(`t=${clock.now()} ${what}`);
    note(`VIOLATION ${what}`);
  };

  // The model servers and the store.
  const servers = new SimServers(clock, rng, {
    latencyMs: () => rng.int(1, 20),
    loadMs: () => (rng.next() < 0.1 ? rng.int(1000, 6000) : rng.int(5, 300)),
    loadFailureRate: rng.next() < 0.3 ? 0.2 : 0,
    listingDelayMs: () => rng.int(0, 1500),
  });
  const preloaded = (world.catalog.lora?.adapters ?? []).filter((a) => a.loading === "preload").map((a) => a.id);
  const urls = Array.from({ length: world.replicas + 1 }, (_, i) => `http://s${i}:8000`);
  for (const url of urls) servers.add(new SimServer(url, preloaded));
  const storeUp = () => !(world.store?.faults ?? []).some(([at, ms]) => clock.now() >= at && clock.now() < at + ms);
  const store = world.store ? new SimStore(clock, rng, { windowMs: 1e12, leaseMs: LEASE_MS, delayMs: () => rng.int(0, world.store!.slowMs), up: storeUp, lostReplyRate: world.store.lostReplyRate }) : undefined;

  // The core, wired as server.ts wires it.
  const model = parseCatalog({ models: [world.catalog] }).models[0]!;
  const pool = new ModelPool(model, clock);
  pool.adapters?.connect(servers.adapterServer, { loaded: (a, r) => note(`loaded ${a} on ${r}`), loadFailed: (a, r, _s, why) => note(`load of ${a} on ${r} failed: ${why}`), evicted: (a, r) => note(`evicted ${a} from ${r}`) }, 1000);
  const limiter = new RateLimiter(store, createLogger("silent"), { refused: () => undefined }, { clock, windowMs: 1e12, failureMode: world.store?.failureMode, leaseMs: LEASE_MS, probeIntervalMs: 500, startUp: true });
  const budget = new KeyedBudget(world.body.total, world.body.perKey, world.body.waiting);
  const inFlight = new KeyedBudget(world.inFlight.total, world.inFlight.perKey);
  const budgets = { limiter, budget, inFlight, events: { refused: () => undefined } };
  const sendOptions: SendOptions = {
    dispatcher: undefined as never,
    transport: servers.transport,
    clock,
    headersTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    retryAfterSaturatedSeconds: 1,
    retryAfterNotReadySeconds: 2,
  };

  // Every slot the pool gives out, to check the pool's counts against.
  const slots: TrackedSlot[] = [];
  const acquire = pool.acquire.bind(pool);
  pool.acquire = (req) =>
    acquire(req).then((r) => {
      if (r.ok) slots.push({ slot: r.slot, tenant: req.tenant });
      return r;
    });
  const replicasSeen = new Set<Replica>();

  // Invariants that hold at a moment the core acts, checked there.
  pool.scheduler.watch({
    dispatched: (tenant, _waited, held) => {
      const t = tenant as Tenant;
      note(`dispatch ${t.name}${held ? " (held)" : ""}`);
      const share = pool.scheduler.slotsOf(t.name) / t.weight;
      for (const w of pool.scheduler.waiting()) {
        if (w.tenant.name === t.name && band(w.tenant) === band(t)) continue;
        if (pool.fit(w.ctx, w.exclude) !== "now") continue;
        if (band(w.tenant) < band(t)) violated(`dispatched ${t.name} (${t.priority}) while ${w.tenant.name} (${w.tenant.priority}) could go`);
        else if (band(w.tenant) === band(t) && pool.scheduler.slotsOf(w.tenant.name) / w.tenant.weight < share - 1e-9) {
          violated(`dispatched ${t.name} holding ${share} per weight while ${w.tenant.name} holds ${pool.scheduler.slotsOf(w.tenant.name) / w.tenant.weight}`);
        }
      }
    },
    refused: (tenant, reason) => note(`queue refused ${(tenant as Tenant).name}: ${reason}`),
  });
  servers.onSend = (url, name, signal) => {
    if (signal.aborted) violated(`a request of a client that left reached ${url}`);
    if (name === "m") return;
    // The slot this request holds there: its replica (the one it was placed on, even if discovery dropped it since).
    const loaded = slots.some(({ slot }) => {
      const entry = slot.held && slot.replica.url === url && slot.claim?.name === name && slot.claim.current ? slot.replica.adapters?.held.get(name) : undefined;
      return entry !== undefined && !entry.loading;
    });
    if (!loaded) violated(`sent ${name} to ${url} where the gateway does not believe it loaded`);
  };
  servers.onLoad = (url, name) => {
    const r = pool.replicas.find((x) => x.url === url);
    if (r?.adapters && r.adapters.held.size > r.adapters.maxLoras) violated(`loading ${name} on ${url} makes ${r.adapters.held.size} adapters (maxLoras ${r.adapters.maxLoras})`);
  };

  // Discovery, health checks and load scrapes, as DnsDiscovery, HealthChecker and LoadScraper do them.
  let members = urls.slice(0, world.replicas);
  const asleep = { until: world.catalog.wake ? rng.int(1000, 12_000) : 0 };
  const serving = (url: string) => servers.byUrl.get(url)!.up && clock.now() >= asleep.until;
  const health = () => {
    for (const r of pool.replicas) {
      replicasSeen.add(r);
      if (serving(r.url)) r.markHealthy();
      else r.markCheckFailed("refused", 1); // a refused connection: out at once, as HealthChecker does
    }
  };
  pool.setReplicaUrls(members);
  health();
  clock.every(HEALTH_MS, health);
  clock.every(SCRAPE_MS, () => {
    for (const r of pool.replicas) {
      if (!r.ready) continue;
      const s = servers.byUrl.get(r.url)!;
      r.recordLoad(s.waiting, 0, s.running);
      void pool.adapters?.sync(r, 1000);
    }
  });
  for (const s of servers.byUrl.values()) if (world.catalog.wake) s.up = false;
  if (world.catalog.wake) clock.after(asleep.until, () => servers.byUrl.forEach((s) => (s.up = true)));

  // Faults: replicas going down (and coming back restarted or not), leaving and joining, saturating; another gateway
  // pod unloading adapters; the store's fault windows are in storeUp().
  const faults = rng.int(0, 6);
  for (let i = 0; i < faults; i++) {
    const at = rng.int(0, HORIZON_MS);
    const kind = rng.pick(["down", "down", "restart", "leave", "join", "saturate", "unload", "unload"] as const);
    clock.after(at, () => {
      const s = servers.byUrl.get(rng.pick(urls))!;
      note(`fault ${kind} ${s.url}`);
      if (kind === "down" || kind === "restart") {
        s.up = false;
        for (const a of answersOn(s.url)) a.destroy(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }));
        clock.after(rng.int(100, 5000), () => {
          if (kind === "restart") s.restart();
          s.up = true;
        });
      } else if (kind === "leave") {
        members = members.filter((u) => u !== s.url);
        pool.setReplicaUrls(members);
      } else if (kind === "join") {
        if (!members.includes(s.url)) members = [...members, s.url].sort();
        pool.setReplicaUrls(members);
      } else if (kind === "saturate") {
        s.waiting = 10;
        clock.after(rng.int(500, 8000), () => (s.waiting = 0));
      } else {
        const loaded = [...s.adapters].filter((a) => !s.preloaded.includes(a));
        if (loaded.length > 0) s.adapters.delete(rng.pick(loaded));
      }
    });
  }
  if (world.shutdownAt !== undefined) clock.after(world.shutdownAt, () => (note("shutdown"), pool.scheduler.close()));

  // Clients.
  const requests: Req[] = [];
  const answers = new Map<SimAnswerBody, string>();
  const answersOn = (url: string) => [...answers].filter(([, u]) => u === url).map(([a]) => a);
  const adapters = (world.catalog.lora?.adapters ?? []).map((a) => a.id);

  const end = (req: Req, clientGone: boolean) => {
    if (req.ended) return;
    req.ended = true;
    req.ctx.end(clientGone);
  };
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<"done" | "aborted">((resolve) => {
      if (signal.aborted) return resolve("aborted");
      const t = clock.after(ms, () => (signal.removeEventListener("abort", onAbort), resolve("done")));
      const onAbort = () => (clock.cancel(t), resolve("aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
    });

  const run = async (req: Req, bodyBytes: number, uploadMs: number, genMs: number) => {
    const { ctx } = req;
    const res: HeaderSink & { statusCode: number; headersSent: boolean } = { statusCode: 0, headersSent: false, setHeader: () => undefined };
    const json = { model: req.model, max_tokens: 64, pad: "x".repeat(Math.max(0, bodyBytes - 60)) };
    const bytes = Buffer.from(JSON.stringify(json));
    try {
      // http/admission.ts: what is taken before the body, the body's arrival, then the tokens.
      const lease = (req.lease = await admitBeforeBody(budgets, ctx, req.key.record, res, bytes.length));
      if ((await sleep(uploadMs, ctx.signal)) === "aborted") throw new ClientGone("while its body arrived");
      const tpm = req.key.record.tpm;
      if (tpm && ctx.limitTicket) req.reserved = Math.max(1, Math.min(Math.ceil(tokensToReserve(json, bytes.length, PATH, limiter.reserveCeiling)), tpm));
      try {
        await reserveKeyTokens(limiter, res, ctx, json, bytes.length, PATH);
      } catch (err) {
        if (!(err instanceof ClientGone)) req.reserved = undefined;
        throw err;
      }
      // routes/inference.ts: send, relay (here: the generation's time), give the slot back, settle.
      const body = new HeldBody(bytes, lease);
      try {
        const sent = await send(
          { pool, path: PATH, body, requestId: `r${req.id}`, stream: true, signal: ctx.signal, pick: req.model === "m" ? {} : { adapter: req.model }, tenant: tenantOf(req.key.record), hold: pool.wakes ? {} : undefined },
          sendOptions,
        );
        if (!sent.answered) throw new ClientGone("before an answer");
        if (sent.upstream.statusCode >= 300) {
          // relay/index.ts: an error status becomes the envelope.
          const head = await readHead(sent.upstream, 64 * 1024);
          sent.done();
          throw normalizeUpstreamError(sent.upstream.statusCode, parseErrorBody(head.toString("utf8")), req.model);
        }
        res.statusCode = 200;
        res.headersSent = true;
        const answer = (req.answer = sent.upstream.body as unknown as SimAnswerBody);
        answers.set(answer, sent.replica.url);
        let how: "done" | "aborted" | "cut";
        try {
          how = await Promise.race([sleep(genMs, ctx.signal), new Promise<"cut">((resolve) => answer.once("close", () => resolve("cut")))]);
          if (how === "done") answer.push(null);
          else if (how === "aborted") answer.destroy();
          answer.resume();
        } finally {
          answers.delete(answer);
          sent.done();
        }
        const usage = how === "done" ? { prompt_tokens: 10, completion_tokens: Math.round(genMs / 10) } : undefined;
        if (req.reserved !== undefined) req.expectedCharge = usage ? usage.prompt_tokens + usage.completion_tokens : req.reserved;
        await limiter.settle(ctx.limitTicket, res, usage);
        req.outcome = how === "done" ? "200" : how === "cut" ? "200 cut" : "gone";
      } finally {
        body.release();
      }
    } catch (err) {
      req.outcome = err instanceof ApiError ? `${err.status} ${err.code}` : err instanceof ClientGone ? "gone" : `crash ${(err as Error).stack}`;
      if (req.outcome.startsWith("crash")) violated(`request ${req.id} threw ${req.outcome}`);
      // A catalog adapter is never "not found": where a replica lacks it, the gateway loads it and sends again.
      if (req.outcome === "404 model_not_found") violated(`request ${req.id} for ${req.model} got 404`);
    } finally {
      note(`request ${req.id} ${req.key.record.name} ${req.model}: ${req.outcome}`);
      end(req, false);
    }
  };

  let id = 0;
  for (const key of world.keys) {
    for (let at = rng.int(0, 500); at < HORIZON_MS; at += Math.ceil((-Math.log(1 - rng.next()) * 1000) / key.rate)) {
      const model = adapters.length > 0 && rng.next() < 0.6 ? rng.pick(adapters) : "m";
      const bodyBytes = rng.int(100, 60_000);
      const uploadMs = rng.int(0, 50);
      const genMs = rng.next() < 0.1 ? rng.int(3000, 12_000) : rng.int(10, 1500);
      const leaveAt = rng.next() < 0.25 ? rng.int(0, 4000) : undefined;
      clock.after(at, () => {
        const req: Req = { id: ++id, key, model, ctx: new RequestContext(`r${id}`, clock.now()), expectedCharge: 0, ended: false };
        req.ctx.key = key.record;
        requests.push(req);
        note(`request ${req.id} ${key.record.name} ${model} arrives`);
        if (leaveAt !== undefined) clock.after(leaveAt, () => (note(`request ${req.id}: client leaves`), end(req, true)));
        void run(req, bodyBytes, uploadMs, genMs);
      });
    }
  }
  clock.after(HORIZON_MS, () => {
    asleep.until = 0;
    servers.byUrl.forEach((s) => ((s.up = true), (s.waiting = 0)));
    members = urls.slice(0, world.replicas);
    pool.setReplicaUrls(members);
  });

  const check = () => {
    for (const w of pool.scheduler.waiting()) if (pool.fit(w.ctx, w.exclude) === "now") violated(`${w.tenant.name} waits (${w.ctx.adapter ?? "m"}) while a replica could take it`);
    if (pool.heldLength > (world.catalog.wake?.maxHeld ?? 0)) violated(`${pool.heldLength} held, over maxHeld`);
    if (pool.queueLength > (world.catalog.routing?.maxQueueLength ?? 64)) violated(`${pool.queueLength} queued, over maxQueueLength`);
    const live = slots.filter((s) => s.slot.held);
    for (const r of [...replicasSeen, ...pool.replicas]) {
      const mine = live.filter((s) => s.slot.replica === r).length;
      if (r.inFlight !== mine) violated(`${r.url} counts ${r.inFlight} in flight, ${mine} slots are held there`);
      if (!r.adapters) continue;
      if (r.adapters.held.size > r.adapters.maxLoras) {
        const view = [...r.adapters.held].map(([n, e]) => `${n}${e.loading ? " (loading)" : ""}${e.preload ? " (preloaded)" : ""} x${e.inFlight}`);
        violated(`${r.url} believed to hold ${r.adapters.held.size} adapters (maxLoras ${r.adapters.maxLoras}): ${view.join(", ")}; the server has ${[...servers.byUrl.get(r.url)!.adapters].join(", ")}`);
      }
      for (const [name, entry] of r.adapters.held) {
        const claims = live.filter((s) => s.slot.claim?.replica === r && s.slot.claim.name === name && s.slot.claim.current).length;
        if (entry.inFlight !== claims) violated(`${name} on ${r.url} counts ${entry.inFlight} claims, ${claims} are live`);
      }
    }
    for (const k of world.keys) {
      const held = live.filter((s) => s.tenant.name === k.record.name).length;
      if (pool.scheduler.slotsOf(k.record.name) !== held) violated(`${k.record.name} counted ${pool.scheduler.slotsOf(k.record.name)} slots, holds ${held}`);
    }
    let leased = 0;
    let parked = 0;
    for (const q of requests) {
      leased += q.lease?.size ?? 0;
      if (q.lease?.isParked) parked += q.lease.size;
    }
    if (budget.reserved !== leased) violated(`body memory reserved ${budget.reserved}, live bodies hold ${leased}`);
    if (budget.parked !== parked) violated(`waiting bodies ${budget.parked}, parked leases hold ${parked}`);
    const alive = requests.filter((q) => !q.ended).length;
    if (inFlight.reserved > alive) violated(`${inFlight.reserved} requests in progress counted, ${alive} alive`);
  };

  // Run: every step is one timer of the virtual clock and everything it set off, then the invariants.
  let steps = 0;
  await flush();
  for (let at = clock.nextAt(); at !== undefined && at <= HORIZON_MS + DRAIN_MS; at = clock.nextAt()) {
    clock.runNext();
    await flush();
    steps += 1;
    check();
    if (violations.length >= 10) {
      limiter.stop();
      return result();
    }
  }

  // Everything has left: every request ended once, and gave back all it took.
  for (const q of requests) if (!q.ended || q.outcome === undefined) violated(`request ${q.id} (${q.key.record.name} ${q.model}) never ended`);
  if (pool.heldLength + pool.queueLength > 0) violated(`${pool.heldLength + pool.queueLength} requests still waiting`);
  if (inFlight.reserved !== 0) violated(`${inFlight.reserved} request slots never given back`);
  if (budget.reserved !== 0) violated(`${budget.reserved} bytes of body memory never given back`);
  for (const r of pool.replicas) for (const [name, e] of r.adapters?.held ?? []) if (e.inFlight !== 0) violated(`${name} on ${r.url} still claimed ${e.inFlight} times`);
  if (store) {
    for (const k of world.keys) if (store.slotsOf(k.record.name) !== 0) violated(`${k.record.name} holds ${store.slotsOf(k.record.name)} shared slots at the end`);
    if (store.doubleReleases.length > 0) violated(`slots released twice: ${store.doubleReleases.join(", ")}`);
    // Exact while every command reached the store: what the bucket lost is what the requests were charged.
    if (!store.failed && limiter.usingSharedStore) {
      for (const k of world.keys) {
        const tpm = k.record.tpm;
        if (!tpm) continue;
        const spent = tpm - (await store.tokensLevel(k.record.name, tpm));
        const expected = requests.filter((q) => q.key === k).reduce((n, q) => n + q.expectedCharge, 0);
        // The bucket refills by tpm per 10^12 ms: well under a token in a run.
        if (Math.abs(spent - expected) >= 0.5) violated(`${k.record.name} was charged ${spent} tokens, its requests used ${expected}`);
      }
    }
  }
  limiter.stop();
  return result();

  function result(): SimResult {
    const outcomes: Record<string, number> = {};
    for (const q of requests) outcomes[q.outcome ?? "none"] = (outcomes[q.outcome ?? "none"] ?? 0) + 1;
    return { seed, violations, trace, requests: requests.length, outcomes, steps };
  }
}
