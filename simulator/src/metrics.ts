import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * vLLM's Prometheus metrics (names as vLLM v1 exports them, all labelled `model_name`), on a Registry of
 * this instance's own: several simulators run in one test process and must not share counters.
 */

/** Read live by the gauges on every scrape, so the values are never stale. */
export interface LiveLoad {
  running(): number;
  waiting(): number;
  kvCacheUsage(): number;
}

// Bucket boundaries follow vLLM's (vllm/v1/metrics/loggers.py), trimmed at the top.
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const REQUEST_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

export type FinishedReason = "stop" | "length" | "abort";

export class SimulatorMetrics {
  readonly registry = new Registry();
  private readonly labels: { model_name: string };
  private readonly promptTokens: Counter<"model_name">;
  private readonly generationTokens: Counter<"model_name">;
  private readonly requestSuccess: Counter<"model_name" | "finished_reason">;
  private readonly prefixQueries: Counter<"model_name">;
  private readonly prefixHits: Counter<"model_name">;
  private readonly ttft: Histogram<"model_name">;
  private readonly itl: Histogram<"model_name">;
  private readonly e2e: Histogram<"model_name">;
  private readonly queueTime: Histogram<"model_name">;
  private readonly loraInfo: LoraRequestsInfo | undefined;

  /** `maxLoras` when LoRA is enabled: only then does vLLM export `vllm:lora_requests_info`. */
  constructor(modelName: string, live: LiveLoad, cacheInfo: { blockSize: number; capacityBlocks: number; prefixCaching: boolean }, maxLoras?: number) {
    this.labels = { model_name: modelName };
    const registers = [this.registry];
    const labels = this.labels;
    new Gauge({
      name: "vllm:num_requests_running",
      help: "Number of requests in model execution batches.",
      labelNames: ["model_name"],
      registers,
      collect() {
        this.set(labels, live.running());
      },
    });
    new Gauge({
      name: "vllm:num_requests_waiting",
      help: "Number of requests waiting to be processed.",
      labelNames: ["model_name"],
      registers,
      collect() {
        this.set(labels, live.waiting());
      },
    });
    new Gauge({
      name: "vllm:kv_cache_usage_perc",
      help: "KV-cache usage. 1 means 100 percent usage.",
      labelNames: ["model_name"],
      registers,
      collect() {
        this.set(labels, live.kvCacheUsage());
      },
    });
    const cacheConfig = new Gauge({
      name: "vllm:cache_config_info",
      help: "Information of the LLMEngine CacheConfig.",
      labelNames: ["model_name", "block_size", "num_gpu_blocks", "enable_prefix_caching"],
      registers,
    });
    cacheConfig.set(
      {
        model_name: modelName,
        block_size: String(cacheInfo.blockSize),
        num_gpu_blocks: String(cacheInfo.capacityBlocks),
        enable_prefix_caching: String(cacheInfo.prefixCaching),
      },
      1,
    );
    this.promptTokens = new Counter({ name: "vllm:prompt_tokens_total", help: "Number of prefill tokens processed.", labelNames: ["model_name"], registers });
    this.generationTokens = new Counter({ name: "vllm:generation_tokens_total", help: "Number of generation tokens processed.", labelNames: ["model_name"], registers });
    this.requestSuccess = new Counter({
      name: "vllm:request_success_total",
      help: "Count of successfully processed requests.",
      labelNames: ["model_name", "finished_reason"],
      registers,
    });
    this.prefixQueries = new Counter({
      name: "vllm:prefix_cache_queries_total",
      help: "Prefix cache queries, in terms of number of queried tokens.",
      labelNames: ["model_name"],
      registers,
    });
    this.prefixHits = new Counter({
      name: "vllm:prefix_cache_hits_total",
      help: "Prefix cache hits, in terms of number of cached tokens.",
      labelNames: ["model_name"],
      registers,
    });
    this.ttft = new Histogram({ name: "vllm:time_to_first_token_seconds", help: "Histogram of time to first token in seconds.", labelNames: ["model_name"], buckets: TTFT_BUCKETS, registers });
    this.itl = new Histogram({ name: "vllm:inter_token_latency_seconds", help: "Histogram of inter-token latency in seconds.", labelNames: ["model_name"], buckets: ITL_BUCKETS, registers });
    this.e2e = new Histogram({ name: "vllm:e2e_request_latency_seconds", help: "Histogram of e2e request latency in seconds.", labelNames: ["model_name"], buckets: REQUEST_BUCKETS, registers });
    this.queueTime = new Histogram({ name: "vllm:request_queue_time_seconds", help: "Histogram of time spent in WAITING phase for request.", labelNames: ["model_name"], buckets: REQUEST_BUCKETS, registers });
    // Pre-create every series so scrapers and dashboards see zeros rather than absent series (vLLM does too).
    for (const reason of ["stop", "length", "abort"] as const) this.requestSuccess.inc({ ...labels, finished_reason: reason }, 0);
    for (const counter of [this.promptTokens, this.generationTokens, this.prefixQueries, this.prefixHits]) counter.inc(labels, 0);
    for (const histogram of [this.ttft, this.itl, this.e2e, this.queueTime]) histogram.zero(labels);
    if (maxLoras !== undefined) this.loraInfo = new LoraRequestsInfo(registers, maxLoras, () => live.running() + live.waiting() > 0);
  }

  /** A request produced its first token (`adapter`: the LoRA adapter it names). */
  requestGenerating(adapter: string | undefined): void {
    this.loraInfo?.change(adapter, 1);
  }

  /** A request that had produced a token finished or was aborted. */
  requestEnded(adapter: string | undefined): void {
    this.loraInfo?.change(adapter, -1);
  }

  promptProcessed(tokens: number): void {
    this.promptTokens.inc(this.labels, tokens);
  }

  tokenGenerated(): void {
    this.generationTokens.inc(this.labels, 1);
  }

  prefixCacheLookup(queriedTokens: number, hitTokens: number): void {
    this.prefixQueries.inc(this.labels, queriedTokens);
    this.prefixHits.inc(this.labels, hitTokens);
  }

  observeQueueTime(seconds: number): void {
    this.queueTime.observe(this.labels, seconds);
  }

  observeTimeToFirstToken(seconds: number): void {
    this.ttft.observe(this.labels, seconds);
  }

  observeInterTokenLatency(seconds: number): void {
    this.itl.observe(this.labels, seconds);
  }

  requestFinished(reason: FinishedReason, e2eSeconds: number): void {
    this.requestSuccess.inc({ ...this.labels, finished_reason: reason }, 1);
    this.e2e.observe(this.labels, e2eSeconds);
  }
}

/**
 * `vllm:lora_requests_info` as vLLM 0.14 exports it (vllm/v1/metrics/loggers.py, stats.py `LoRARequestStates`): no
 * `model_name` label; labels `max_lora`, `waiting_lora_adapters`, `running_lora_adapters`; value the Unix time of the
 * engine step that last saw that combination (`set_to_current_time`), so every combination ever seen stays exported
 * and a reader takes the newest. The adapter lists are comma-joined in the order adapters got a request going, and
 * both hold every adapter with a request under way: vLLM's output processor learns a request's state only from its
 * outputs, so a request is counted from its first token to its end, and each adapter it counts appears in both
 * lists (the waiting count, 0, is kept as a key). A request still queued appears in neither.
 */
class LoraRequestsInfo {
  private readonly gauge: Gauge<"max_lora" | "waiting_lora_adapters" | "running_lora_adapters">;
  /** Requests per adapter name, in the order the adapters got one going. */
  private readonly requests = new Map<string, number>();

  constructor(
    registers: Registry[],
    private readonly maxLoras: number,
    busy: () => boolean,
  ) {
    const record = (): void => this.record();
    this.gauge = new Gauge({
      name: "vllm:lora_requests_info",
      help: "Running stats on lora requests.",
      labelNames: ["max_lora", "waiting_lora_adapters", "running_lora_adapters"],
      registers,
      // A busy engine steps all the time: the current combination is as fresh as the scrape.
      collect() {
        if (busy()) record();
      },
    });
  }

  /** A request of this adapter (none: the base model) started (+1) or ended (-1): an engine step records it. */
  change(adapter: string | undefined, delta: 1 | -1): void {
    if (adapter !== undefined) {
      const count = (this.requests.get(adapter) ?? 0) + delta;
      if (count > 0) this.requests.set(adapter, count);
      else this.requests.delete(adapter);
    }
    this.record();
  }

  private record(): void {
    const adapters = [...this.requests.keys()].join(",");
    this.gauge.set({ max_lora: String(this.maxLoras), waiting_lora_adapters: adapters, running_lora_adapters: adapters }, Date.now() / 1000);
  }
}
