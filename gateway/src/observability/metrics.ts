import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { PRIORITIES, type ApiKeyRecord, type Priority } from "../context/api-key-record";
import { periodOf } from "../context/periods";
import { EventLoopDelay } from "./event-loop-delay";
import { PrebuiltCounter, PrebuiltGauge, PrebuiltHistogram, type GaugeSeries } from "./prebuilt-series";
import { GATEWAY_VERSION } from "./version";

/** Bucket bounds (seconds) of the inter-token histogram: 1 ms to 1 s. */
export const ITL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1] as const;

/** Where a stream's timings go once it ends: the model's time to first token, its inter-token gaps. */
export interface TokenTimingSink {
  firstToken(seconds: number): void;
  /** One stream's inter-token gaps as per-bucket counts (non-cumulative; the last is above every bound), their sum. */
  interTokens(bucketCounts: Uint32Array, sumSeconds: number): void;
}

/** What the request path records for one model (see forModel). */
export interface ModelMetrics extends TokenTimingSink {
  inFlight: GaugeSeries;
  retried(): void;
}

/** What the serving gauges read at each scrape: the models and their replicas (upstream/registry.ts). */
export interface ServingState {
  all(): readonly {
    readonly model: { readonly id: string; readonly wake?: object };
    readonly isReady: boolean;
    readonly heldLength: number;
    /** Requests waiting for room now, by their key's priority. */
    queuedBy(priority: Priority): number;
  }[];
  replicas(): readonly ReplicaState[];
  /** The LoRA adapters, each on its base model. */
  adapters(): readonly { readonly adapter?: string; readonly pool: { readonly model: { readonly id: string }; readonly isReady: boolean } }[];
}

export interface ReplicaState {
  readonly modelId: string;
  readonly url: string;
  readonly ready: boolean;
  readonly inFlight: number;
  readonly saturated: boolean;
}

/** What a model's scheduler reports of held requests (upstream/scheduler/): how they left, and each wake's duration. */
export interface WakeSink {
  outcome(outcome: HeldOutcome): void;
  woke(seconds: number): void;
}

/** Why a model's scheduler refused a request that could not go at once. */
export type QueueRefusal = "queue_full" | "timeout" | "displaced" | "no_memory" | "no_replica";

/** What a model's scheduler reports of requests that waited (the metrics; the simulation checks its order through it). */
export interface QueueSink {
  /** A waiting request is about to take a slot after `waitedMs`; the others still wait, as they were. */
  dispatched(tenant: { readonly priority: Priority }, waitedMs: number, held: boolean): void;
  refused(tenant: { readonly priority: Priority }, reason: QueueRefusal, held: boolean): void;
}

/**
 * How a held request left: given a replica; refused with 429 (over `maxHeld`, or past `timeoutMs` once the model is
 * up but full); past `timeoutMs` with the model still not ready (503: the wake failed); the gateway shutting down
 * (503, retried on another gateway replica); or its client left.
 */
export const HELD_OUTCOMES = ["released", "saturated", "timed_out", "shutdown", "abandoned"] as const;
export type HeldOutcome = (typeof HELD_OUTCOMES)[number];

/** Time to wake, 1 s to 20 min: a cached model on a warm node at the low end, a cold node and a download at the top. */
const WAKE_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 90, 120, 180, 300, 600, 900, 1200];

/** Waits for room, 5 ms to 2 min: a slot freeing at once at the low end, queueTimeoutMs raised far at the top. */
const QUEUE_WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];

/** Adapter loads, 50 ms to 2 min: local disk at the low end, network storage at the top. */
const ADAPTER_LOAD_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Latency buckets from 5 ms to 2 min: gateway overhead at the low end, long generations at the top. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];

/**
 * The gateway's Prometheus metrics, in a registry of its own. Label values are bounded: `model` is a catalog
 * id or "unknown" (clients choose the model string, so it is never used raw), `key` a configured key name.
 * Request and user ids never become labels.
 */
type BudgetResource = "tokens" | "requests";

/** What the budgets report (limits/key-budgets.ts's BudgetEvents). */
export interface BudgetGaugeEvents {
  used(key: string, resource: BudgetResource, period: string, periodStart: number, used: number): void;
  refused(key: string, resource: BudgetResource): void;
}

export class GatewayMetrics {
  readonly registry = new Registry();

  // The per-request metrics keep their series (see prebuilt-series.ts): no label hashing per request.
  readonly requests = new PrebuiltCounter(
    "gateway_requests_total",
    "HTTP requests answered, by model, endpoint, status and API key name.",
    ["model", "endpoint", "status", "key"],
    this.registry,
  );

  readonly duration = new PrebuiltHistogram(
    "gateway_request_duration_seconds",
    "Time from request to the end of the response.",
    ["model", "endpoint", "stream"],
    LATENCY_BUCKETS,
    this.registry,
  );

  readonly timeToFirstToken = new PrebuiltHistogram(
    "gateway_time_to_first_token_seconds",
    "Streaming: time from request to the first generated token.",
    ["model"],
    LATENCY_BUCKETS,
    this.registry,
  );

  /** Merged a stream at a time (see relay/token-clock.ts): one observation per token would cost every token a lookup. */
  readonly interTokenLatency = new PrebuiltHistogram(
    "gateway_inter_token_latency_seconds",
    "Streaming: time between consecutive generated-token chunks.",
    ["model"],
    ITL_BUCKETS,
    this.registry,
  );

  readonly tokens = new PrebuiltCounter(
    "gateway_tokens_total",
    "Tokens reported by the model servers, by model, API key name and type (prompt or completion).",
    ["model", "key", "type"],
    this.registry,
  );

  readonly inFlight = new PrebuiltGauge("gateway_requests_in_flight", "Inference requests currently being served, by model.", ["model"], this.registry);

  readonly rateLimited = new Counter({
    name: "gateway_rate_limit_refusals_total",
    help: "Requests refused by per-key limits, by API key name and limit (requests, tokens, concurrency; budget_tokens, budget_requests; store_unavailable when the shared store is down and the gateway fails closed).",
    labelNames: ["key", "limit"] as const,
    registers: [this.registry],
  });

  readonly rateLimitStoreUp = new Gauge({
    name: "gateway_rate_limit_store_up",
    help: "1 while the shared rate-limit store (Redis) answers and per-key limits hold across replicas; 0 while it does not (limits per replica, or refusals when failing closed). Absent without Redis.",
    labelNames: ["store"] as const,
    registers: [this.registry],
  });

  readonly rateLimitStoreTransitions = new Counter({
    name: "gateway_rate_limit_store_transitions_total",
    help: "Times the shared rate-limit store became unreachable (to=down) or reachable again (to=up).",
    labelNames: ["to"] as const,
    registers: [this.registry],
  });

  readonly upstreamRetries = new Counter({
    name: "gateway_upstream_retries_total",
    help: "Requests retried on another replica after a refused or reset connection.",
    labelNames: ["model"] as const,
    registers: [this.registry],
  });

  readonly admissionRefusals = new Counter({
    name: "gateway_admission_refusals_total",
    help: "Requests refused for memory or capacity: the key's share (key_memory) or the gateway's (gateway_memory) of body memory, the key's share (key_in_flight) or the gateway's (gateway_in_flight) of requests in progress, before the body was read; the key's share (answer_key_memory) or the gateway's (answer_gateway_memory) of answer memory, when the answer arrived.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  readonly connectionsRefused = new Counter({
    name: "gateway_connections_refused_total",
    help: "Client connections closed at once: a new one when every connection at a cap was busy (scope total or address), or one that pipelined too many requests ahead of their answers (scope pipelining).",
    labelNames: ["scope"] as const,
    registers: [this.registry],
  });

  readonly connectionsEvicted = new Counter({
    name: "gateway_connections_evicted_total",
    help: "Idle client connections closed to make room for a new one at the cap (total or one address's).",
    labelNames: ["scope"] as const,
    registers: [this.registry],
  });

  readonly lingeringConnections = new Gauge({
    name: "gateway_lingering_connections",
    help: "Client connections reading and dropping what their client still sends before they close (after an answer that left the body unread, or pipelining past the cap); at most GATEWAY_MAX_LINGERING_CONNECTIONS.",
    registers: [this.registry],
  });

  readonly lingeringCloses = new Counter({
    name: "gateway_lingering_closes_total",
    help: "Lingering closes by outcome: body_ended or client_closed (the client could read its answer), byte_limit or time_limit (cut off), over_cap (closed at once: too many lingering).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  readonly clientErrors = new Counter({
    name: "gateway_client_errors_total",
    help: "Connections ended by Node's HTTP layer: malformed HTTP, oversized headers, timeouts, resets; by Node's error code.",
    labelNames: ["code"] as const,
    registers: [this.registry],
  });

  readonly heldRequests = new Counter({
    name: "gateway_held_requests_total",
    help: "Requests held for a model waking from zero, by how they left: released (to a replica), saturated (429: over wake.maxHeld, or past wake.timeoutMs with the model up but full), timed_out (503: past wake.timeoutMs with no ready replica, the wake failed), shutdown (503: the gateway stopping), abandoned (the client left).",
    labelNames: ["model", "outcome"] as const,
    registers: [this.registry],
  });

  readonly queueWait = new Histogram({
    name: "gateway_queue_wait_seconds",
    help: "Time a request waited for room on a busy model before it got a replica (held requests of a waking model not included: gateway_model_wake_seconds), by the key's priority.",
    labelNames: ["model", "priority"] as const,
    buckets: QUEUE_WAIT_BUCKETS,
    registers: [this.registry],
  });

  readonly queueRefusals = new Counter({
    name: "gateway_queue_refusals_total",
    help: "Requests the model's scheduler refused instead of placing (429; 503 for no_replica, and for a timeout with no replica up that the request may use), by the key's priority and why: queue_full (maxQueueLength or wake.maxHeld reached), displaced (pushed out for a request of a higher priority, or of a key waiting with more), timeout (queueTimeoutMs or wake.timeoutMs), no_memory (waitingBodyMemoryBytes full), no_replica (none left it may use).",
    labelNames: ["model", "priority", "reason"] as const,
    registers: [this.registry],
  });

  readonly wakeSeconds = new Histogram({
    name: "gateway_model_wake_seconds",
    help: "Time from the first request held while the model had no ready replica to its first ready replica.",
    labelNames: ["model"] as const,
    buckets: WAKE_BUCKETS,
    registers: [this.registry],
  });

  readonly wakes = new Counter({
    name: "gateway_model_wakes_total",
    help: "Times a model woke: a replica became ready while requests waited for one (see gateway_model_wake_seconds).",
    labelNames: ["model"] as const,
    registers: [this.registry],
  });

  readonly adapterLoads = new Counter({
    name: "gateway_lora_adapter_loads_total",
    help: "LoRA adapter loads the gateway made on a replica (POST /v1/load_lora_adapter), by outcome: success or failure (the requests waiting for it got 503 adapter_load_failed).",
    labelNames: ["model", "adapter", "outcome"] as const,
    registers: [this.registry],
  });

  readonly adapterLoadSeconds = new Histogram({
    name: "gateway_lora_adapter_load_seconds",
    help: "Time a LoRA adapter load took, eviction included, whatever its outcome: what the first request for an adapter a replica lacks waits.",
    labelNames: ["model"] as const,
    buckets: ADAPTER_LOAD_BUCKETS,
    registers: [this.registry],
  });

  readonly adapterEvictions = new Counter({
    name: "gateway_lora_adapter_evictions_total",
    help: "LoRA adapters the gateway unloaded from a replica (POST /v1/unload_lora_adapter) to make room for another: the idle one loaded on demand that was asked for least lately.",
    labelNames: ["model", "adapter"] as const,
    registers: [this.registry],
  });

  /** The event loop's delay (p99 and longest over the last window): stalls every request in the process waits out. */
  readonly eventLoop = new EventLoopDelay(this.registry);

  private readonly perModel = new Map<string, ModelMetrics>();

  /** The per-model series the request path uses, looked up once per model: in-flight, retries, token timings. */
  forModel(model: string): ModelMetrics {
    let m = this.perModel.get(model);
    if (!m) {
      const ttft = this.timeToFirstToken.series(model);
      const itl = this.interTokenLatency.series(model);
      const retries = this.upstreamRetries.labels({ model });
      m = {
        inFlight: this.inFlight.series(model),
        retried: () => retries.inc(),
        firstToken: (seconds) => ttft.observe(seconds),
        interTokens: (counts, sum) => itl.merge(counts, sum),
      };
      this.perModel.set(model, m);
    }
    return m;
  }

  /** Where a model's hold queue reports. */
  forWake(model: string): WakeSink {
    return {
      outcome: (outcome) => this.heldRequests.inc({ model, outcome }),
      woke: (seconds) => {
        this.wakeSeconds.observe({ model }, seconds);
        this.wakes.inc({ model });
      },
    };
  }

  /** Where a model's scheduler reports the requests that waited for room. */
  forQueue(model: string): QueueSink {
    return {
      dispatched: (tenant, waitedMs, held) => {
        if (!held) this.queueWait.observe({ model, priority: tenant.priority }, waitedMs / 1000);
      },
      refused: (tenant, reason) => this.queueRefusals.inc({ model, priority: tenant.priority, reason }),
    };
  }

  /** Where a model's adapter loads and evictions are counted. */
  forAdapters(model: string): { loaded(adapter: string, seconds: number): void; loadFailed(adapter: string, seconds: number): void; evicted(adapter: string): void } {
    return {
      loaded: (adapter, seconds) => {
        this.adapterLoads.inc({ model, adapter, outcome: "success" });
        this.adapterLoadSeconds.observe({ model }, seconds);
      },
      loadFailed: (adapter, seconds) => {
        this.adapterLoads.inc({ model, adapter, outcome: "failure" });
        this.adapterLoadSeconds.observe({ model }, seconds);
      },
      evicted: (adapter) => this.adapterEvictions.inc({ model, adapter }),
    };
  }

  readonly ledgerWrites = new Counter({
    name: "gateway_usage_ledger_writes_total",
    help: "Attempts to write a usage ledger object to the object store, by outcome (success, failure).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  readonly ledgerLastWrite = new Gauge({
    name: "gateway_usage_ledger_last_write_timestamp_seconds",
    help: "Unix time of the last successful usage ledger write (absent until the first).",
    registers: [this.registry],
  });

  readonly ledgerPending = new Gauge({
    name: "gateway_usage_ledger_pending_objects",
    help: "Usage ledger objects (one per replica and hour) whose latest counts are not written yet.",
    registers: [this.registry],
  });

  /** Where the ledger reports its writes (ledger/usage-ledger.ts's LedgerEvents). */
  forLedger(): { written(ok: boolean, atMs: number): void; pending(objects: number): void } {
    return {
      written: (ok, atMs) => {
        this.ledgerWrites.inc({ outcome: ok ? "success" : "failure" });
        if (ok) this.ledgerLastWrite.set(atMs / 1000);
      },
      pending: (n) => this.ledgerPending.set(n),
    };
  }

  /**
   * Budget gauges per key with a budget: its limit, and what it used and has left in the current period as this
   * replica last read its counter (0 once a new period began and it has not read it since).
   */
  observeBudgets(keys: () => Iterable<ApiKeyRecord>, wallNow: () => number): BudgetGaugeEvents {
    const seen = new Map<string, { periodStart: number; used: number }>();
    const current = (k: ApiKeyRecord, resource: BudgetResource) => {
      const s = seen.get(`${k.name}\u0000${resource}`);
      return s && s.periodStart === periodOf(k.budget!.period, wallNow()).start ? s.used : 0;
    };
    const each = (fn: (labels: { key: string; resource: BudgetResource; period: string }, limit: number, used: number) => void) => {
      for (const k of keys()) {
        if (!k.budget) continue;
        for (const resource of ["tokens", "requests"] as const) {
          const limit = k.budget[resource];
          if (limit) fn({ key: k.name, resource, period: k.budget.period }, limit, current(k, resource));
        }
      }
    };
    const gauge = (name: string, help: string, value: (limit: number, used: number) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["key", "resource", "period"] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          each((labels, limit, used) => this.set(labels, value(limit, used)));
        },
      });
    gauge("gateway_key_budget_limit", "A key's budget per UTC day or month, by resource (tokens, requests).", (limit) => limit);
    gauge("gateway_key_budget_used", "What the key used of its budget in the current period, as this replica last read it (take the max across replicas).", (_, used) => used);
    gauge("gateway_key_budget_remaining", "What is left of the key's budget in the current period (limit minus used, at least 0).", (limit, used) => Math.max(0, limit - used));
    return {
      used: (key, resource, _period, periodStart, used) => void seen.set(`${key}\u0000${resource}`, { periodStart, used }),
      refused: (key, resource) => this.rateLimited.inc({ key, limit: `budget_${resource}` }),
    };
  }

  /** Gauges read at scrape time from the transport and the body budget (they exist once the server does). */
  observeResources(read: { openConnections(): number; bodyMemoryBytes(): number; answerMemoryBytes(): number }): void {
    new Gauge({
      name: "gateway_open_connections",
      help: "Client connections open now.",
      registers: [this.registry],
      collect() {
        this.set(read.openConnections());
      },
    });
    new Gauge({
      name: "gateway_body_memory_bytes",
      help: "Bytes of request bodies reserved in memory now, waiting requests' included (bounded by GATEWAY_BODY_MEMORY_BYTES plus GATEWAY_WAITING_BODY_MEMORY_BYTES).",
      registers: [this.registry],
      collect() {
        this.set(read.bodyMemoryBytes());
      },
    });
    new Gauge({
      name: "gateway_answer_memory_bytes",
      help: "Bytes of non-streaming answers held in memory now, until their clients take them (bounded by GATEWAY_ANSWER_MEMORY_BYTES).",
      registers: [this.registry],
      collect() {
        this.set(read.answerMemoryBytes());
      },
    });
  }

  constructor(models: ServingState) {
    collectDefaultMetrics({ register: this.registry });
    // Which release serves: a rollout or a rollback shows as the version changing (`max by (version)`).
    new Gauge({
      name: "gateway_build_info",
      help: "Always 1; `version` is the gateway's release (package.json's, written into the image's bundle at build time).",
      labelNames: ["version"] as const,
      registers: [this.registry],
    }).set({ version: GATEWAY_VERSION }, 1);
    // prom-client's summed handle/request/resource gauges end in _total, which Prometheus reserves for
    // counters (promtool rejects them); the per-type gauges they sum stay.
    for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) {
      this.registry.removeSingleMetric(name);
    }
    const perReplica = (name: string, help: string, value: (r: ReplicaState) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["model", "replica"] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const r of models.replicas()) this.set({ model: r.modelId, replica: r.url }, value(r));
        },
      });
    perReplica("gateway_replica_ready", "1 when the replica passes health checks, else 0.", (r) => (r.ready ? 1 : 0));
    perReplica("gateway_replica_in_flight", "Requests the gateway has in flight to the replica.", (r) => r.inFlight);
    perReplica("gateway_replica_saturated", "1 when the replica is at its concurrency cap or its own load thresholds.", (r) => (r.saturated ? 1 : 0));
    new Gauge({
      name: "gateway_models_ready",
      help: "1 when the model has at least one ready replica (it is listed by /v1/models), else 0.",
      labelNames: ["model"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const p of models.all()) this.set({ model: p.model.id }, p.isReady ? 1 : 0);
      },
    });
    new Gauge({
      name: "gateway_adapters_ready",
      help: "1 when the LoRA adapter's base model (`parent`) has a ready replica (the adapter is listed by /v1/models), else 0: the adapters among the `model` labels of the other metrics.",
      labelNames: ["model", "parent"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const t of models.adapters()) if (t.adapter !== undefined) this.set({ model: t.adapter, parent: t.pool.model.id }, t.pool.isReady ? 1 : 0);
      },
    });
    new Gauge({
      name: "gateway_model_queued_requests",
      help: "Requests waiting now for room on a busy model (every replica at its cap, or none with room for the request's adapter), by the key's priority. Also counted in gateway_requests_in_flight.",
      labelNames: ["model", "priority"] as const,
      registers: [this.registry],
      collect() {
        for (const p of models.all()) for (const priority of PRIORITIES) this.set({ model: p.model.id, priority }, p.queuedBy(priority));
      },
    });
    const waking = models.all().filter((p) => p.model.wake);
    new Gauge({
      name: "gateway_model_held_requests",
      help: "Requests held now because the model (one that wakes on demand) has no ready replica, or waiting for room on the first one; the autoscaler's signal to wake it. Also counted in gateway_requests_in_flight.",
      labelNames: ["model"] as const,
      registers: [this.registry],
      collect() {
        for (const p of waking) this.set({ model: p.model.id }, p.heldLength);
      },
    });
    // Present at 0 from the start, so the first wake shows as an increase.
    for (const { model } of waking) {
      for (const outcome of HELD_OUTCOMES) this.heldRequests.inc({ model: model.id, outcome }, 0);
      this.wakes.inc({ model: model.id }, 0);
      this.wakeSeconds.zero({ model: model.id });
    }
  }
}
