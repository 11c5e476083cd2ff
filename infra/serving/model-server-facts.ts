// What the images the platform deploys really export, serve and parse, read from each project's source at the version
// the image carries. These are facts recorded as data; model-server-facts.test.ts holds what the platform reads (the
// picker's flags, the gateway's load scraper, the dashboards, the alert rules) against them. Change a pinned image
// and the test asks for the facts of the new version.

export interface ModelServerFacts {
  /** The image these facts describe (what a model folder's `decode.containers[0].image` names). */
  readonly image: string;
  /** The version of the program inside it. */
  readonly version: string;
  /** Where each fact was read: repository, tag or commit, file. */
  readonly sources: { readonly metrics: string; readonly paths: string; readonly flags?: string };
  /** Metric names as `/metrics` exposes them: counters with their `_total`, histograms by their base name. */
  readonly metrics: readonly string[];
  /** Those of `metrics` that are histograms (queried as `_bucket`, `_count`, `_sum`). */
  readonly histograms: readonly string[];
  /** Names exported only under a condition, with the condition. */
  readonly conditional: Readonly<Record<string, string>>;
  /** HTTP paths it serves (an unknown path answers 404). */
  readonly paths: readonly string[];
}

/**
 * vLLM as `ghcr.io/llm-d/llm-d-cuda:v0.5.0` ships it. llm-d's release prep for v0.5.0 (commits e6ee957 "Release v0.5.0
 * prep" and d3485ef, 2026-02-03) pins `VLLM_COMMIT_SHA=d7de043d55d1dd629554467e23874097e1c48993` in
 * docker/Dockerfile.cuda, the commit of vLLM's tag v0.14.1. Its metrics are the `vllm:` series of
 * PrometheusStatLogger; `--task` is gone (vLLM #30397, December 2025) and the model runner is chosen with `--runner`.
 */
/** The facts as written below: gauges and counters apart from histograms, each name once. */
type RecordedFacts = Omit<ModelServerFacts, "metrics"> & { readonly series: readonly string[] };
function facts<T extends RecordedFacts>({ series, ...rest }: T): Omit<T, "series"> & ModelServerFacts {
  return { ...rest, metrics: [...series, ...rest.histograms] };
}

export const VLLM: ModelServerFacts = facts({
  image: "ghcr.io/llm-d/llm-d-cuda:v0.5.0",
  version: "0.14.1",
  sources: {
    metrics: "vllm-project/vllm v0.14.1, vllm/v1/metrics/loggers.py (PrometheusStatLogger)",
    paths: "vllm-project/vllm v0.14.1, vllm/entrypoints/openai/api_server.py, vllm/entrypoints/pooling/embed/api_router.py",
    flags: "vllm-project/vllm v0.14.1, vllm/engine/arg_utils.py, vllm/config/model.py (RunnerOption, ConvertOption)",
  },
  series: [
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:engine_sleep_state",
    "vllm:kv_cache_usage_perc",
    "vllm:cache_config_info",
    "vllm:lora_requests_info",
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits_total",
    "vllm:external_prefix_cache_queries_total",
    "vllm:external_prefix_cache_hits_total",
    "vllm:mm_cache_queries_total",
    "vllm:mm_cache_hits_total",
    "vllm:num_preemptions_total",
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:request_success_total",
    "vllm:corrupted_requests_total",
  ],
  histograms: [
    "vllm:request_prompt_tokens",
    "vllm:request_generation_tokens",
    "vllm:iteration_tokens_total",
    "vllm:request_max_num_generation_tokens",
    "vllm:request_params_n",
    "vllm:request_params_max_tokens",
    "vllm:time_to_first_token_seconds",
    "vllm:time_per_output_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:request_time_per_output_token_seconds",
    "vllm:e2e_request_latency_seconds",
    "vllm:request_queue_time_seconds",
    "vllm:request_inference_time_seconds",
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:request_prefill_kv_computed_tokens",
    "vllm:kv_block_lifetime_seconds",
    "vllm:kv_block_idle_before_evict_seconds",
    "vllm:kv_block_reuse_gap_seconds",
  ],
  conditional: {
    "vllm:lora_requests_info": "only with LoRA adapters enabled (`--enable-lora`)",
    "vllm:corrupted_requests_total": "only with VLLM_COMPUTE_NANS_IN_LOGITS=1",
    "vllm:time_per_output_token_seconds": "deprecated: only with --show-hidden-metrics-for-version",
    "vllm:kv_block_lifetime_seconds": "only with --kv-cache-metrics",
    "vllm:kv_block_idle_before_evict_seconds": "only with --kv-cache-metrics",
    "vllm:kv_block_reuse_gap_seconds": "only with --kv-cache-metrics",
  },
  paths: [
    "/health",
    "/metrics",
    "/v1/models",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/responses",
    "/v1/responses/{response_id}",
    "/v1/responses/{response_id}/cancel",
    "/v1/embeddings",
  ],
});

/** The model runners vLLM 0.14.1 parses for `--runner` (vllm/config/scheduler.py RunnerType, plus "auto"). */
export const VLLM_RUNNERS = ["auto", "generate", "pooling", "draft"] as const;
/** The conversions vLLM 0.14.1 parses for `--convert` (vllm/config/model.py ConvertOption). */
export const VLLM_CONVERSIONS = ["auto", "none", "embed", "classify", "reward", "mm_encoder_only"] as const;

/**
 * llm-d's inference simulator at the version llm-d v0.5.0 pairs with (guides/simulated-accelerators/ms-sim/values.yaml
 * at the same release prep names `ghcr.io/llm-d/llm-d-inference-sim:v0.7.1`). It exports the vLLM names the picker
 * and the panels read, except the prefix-cache counters; it serves neither `/v1/responses` (first in v0.9.0) nor
 * `/v1/embeddings` (first in v0.8.0).
 */
export const LLMD_INFERENCE_SIM = facts({
  image: "ghcr.io/llm-d/llm-d-inference-sim:v0.7.1",
  version: "0.7.1",
  sources: {
    metrics: "llm-d/llm-d-inference-sim v0.7.1, pkg/llm-d-inference-sim/metrics.go",
    paths: "llm-d/llm-d-inference-sim v0.7.1, pkg/llm-d-inference-sim/server.go (startServer)",
    flags: "llm-d/llm-d-inference-sim v0.7.1, pkg/common/config.go (ParseCommandParamsAndLoadConfig)",
  },
  series: [
    "vllm:lora_requests_info",
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:cache_config_info",
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:request_success_total",
  ],
  histograms: [
    "vllm:time_to_first_token_seconds",
    "vllm:time_per_output_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:e2e_request_latency_seconds",
    "vllm:request_queue_time_seconds",
    "vllm:request_inference_time_seconds",
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:request_prompt_tokens",
    "vllm:max_num_generation_tokens",
    "vllm:request_generation_tokens",
    "vllm:request_params_max_tokens",
  ],
  conditional: {},
  paths: [
    "/health",
    "/ready",
    "/metrics",
    "/v1/models",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/load_lora_adapter",
    "/v1/unload_lora_adapter",
    "/tokenize",
    "/sleep",
    "/wake_up",
    "/is_sleeping",
  ],
  flags: [
    "port", "model", "served-model-name", "config", "max-num-seqs", "max-waiting-queue-length", "max-loras", "max-cpu-loras",
    "lora-modules", "max-model-len", "mode", "seed", "inter-token-latency", "time-to-first-token", "prefill-overhead",
    "prefill-time-per-token", "prefill-time-std-dev", "inter-token-latency-std-dev", "time-to-first-token-std-dev",
    "kv-cache-transfer-latency", "kv-cache-transfer-latency-std-dev", "kv-cache-transfer-time-per-token",
    "kv-cache-transfer-time-std-dev", "time-factor-under-load", "latency-calculator", "max-tool-call-integer-param",
    "min-tool-call-integer-param", "max-tool-call-number-param", "min-tool-call-number-param",
    "max-tool-call-array-param-length", "min-tool-call-array-param-length", "tool-call-not-required-param-probability",
    "object-tool-call-not-required-field-probability", "enable-kvcache", "kv-cache-size", "global-cache-hit-threshold",
    "block-size", "tokenizers-cache-dir", "hash-seed", "zmq-endpoint", "zmq-max-connect-attempts", "event-batch-size",
    "data-parallel-size", "data-parallel-rank", "dataset-path", "dataset-url", "dataset-in-memory", "enable-sleep-mode",
    "enable-request-id-headers", "failure-injection-rate", "failure-types", "ssl-certfile", "ssl-keyfile",
    "self-signed-certs", "fake-metrics",
  ],
  /** Go durations ("200ms"); a bare integer is still read as milliseconds but deprecated in this version. */
  durationFlags: [
    "inter-token-latency", "time-to-first-token", "prefill-overhead", "prefill-time-per-token", "prefill-time-std-dev",
    "inter-token-latency-std-dev", "time-to-first-token-std-dev", "kv-cache-transfer-latency",
    "kv-cache-transfer-latency-std-dev", "kv-cache-transfer-time-per-token", "kv-cache-transfer-time-std-dev",
  ] as readonly string[],
});

/**
 * The model-server metrics the endpoint picker reads when no flag names another. The pools run
 * `ghcr.io/llm-d/llm-d-inference-scheduler:v0.5.0` from the inferencepool chart v1.3.0; that scheduler is GAIE v1.3.0's
 * runner (its go.mod), whose defaults are in pkg/epp/server/options.go (NewOptions). An empty value turns one off.
 */
export const PICKER_METRIC_FLAGS = {
  source: "kubernetes-sigs/gateway-api-inference-extension v1.3.0, pkg/epp/server/options.go",
  defaults: {
    "total-queued-requests-metric": "vllm:num_requests_waiting",
    "total-running-requests-metric": "vllm:num_requests_running",
    "kv-cache-usage-percentage-metric": "vllm:kv_cache_usage_perc",
    "lora-info-metric": "vllm:lora_requests_info",
    "cache-info-metric": "vllm:cache_config_info",
  },
} as const;
export type PickerMetricFlag = keyof typeof PICKER_METRIC_FLAGS.defaults;

/**
 * The scorers of the chart's `default-plugins.yaml` (inferencepool v1.3.0 templates/epp-config.yaml) and the metric
 * flag whose value each scores on (GAIE v1.3.0 plugins/scorer/queue.go, kvcache_utilization.go, and
 * plugins/multi/prefix/plugin.go, which takes the KV block size from the cache-info metric).
 */
export const DEFAULT_PLUGINS = {
  file: "default-plugins.yaml",
  scorers: {
    "queue-scorer": "total-queued-requests-metric",
    "kv-cache-utilization-scorer": "kv-cache-usage-percentage-metric",
    "prefix-cache-scorer": "cache-info-metric",
  },
} as const satisfies { file: string; scorers: Record<string, PickerMetricFlag> };

/**
 * Names the platform reads that the pinned simulator does not export, each with what it costs on a cluster that runs
 * the simulator (the kind runbook's `sim-chat`). Anything else the platform reads must come from both.
 */
export const SIMULATOR_GAPS: Readonly<Record<string, string>> = {
  "vllm:prefix_cache_hits_total": "the Model Serving dashboard's prefix-cache hit rate is empty for a simulated model",
  "vllm:prefix_cache_queries_total": "the Model Serving dashboard's prefix-cache hit rate is empty for a simulated model",
};

/**
 * Names the platform reads that vLLM exports only under a condition the platform does not set, each with why that is
 * harmless. The endpoint picker reads each metric on its own, logs a missing one at trace level and keeps the others
 * (GAIE v1.3.0 backend/metrics/pod_metrics.go).
 */
export const VLLM_CONDITIONAL_READS: Readonly<Record<string, string>> = {
  "vllm:lora_requests_info": "the picker's LoRA view: a model with adapters gets --enable-lora (lora.ts); one without has no adapter to route by",
};

/**
 * vLLM 0.14.1's LoRA serving: the ranks `--max-lora-rank` takes and the defaults of `--max-loras` and `--max-lora-rank`
 * (vllm/config/lora.py LoRAConfig: `MaxLoRARanks`, `max_loras = 1`, `max_lora_rank = 16`; the same in the 0.11 and
 * 0.22 sources on either side), and the switch that adds the runtime load and unload routes (vllm/envs.py: "1" or
 * "true", any case).
 */
export const VLLM_LORA = {
  ranks: [1, 8, 16, 32, 64, 128, 256, 320, 512],
  defaults: { maxLoras: 1, maxLoraRank: 16 },
  runtimeUpdating: { env: "VLLM_ALLOW_RUNTIME_LORA_UPDATING", value: "True" },
  runtimePaths: ["/v1/load_lora_adapter", "/v1/unload_lora_adapter"],
} as const;

/**
 * The picker's LoRA scorer (GAIE v1.3.0 plugins/scorer/lora_affinity.go, registered by cmd/epp/runner/runner.go, which
 * llm-d-inference-scheduler v0.5.0 runs): it prefers a pod whose `running_lora_adapters` holds the requested model, then
 * one with a free slot (`max_lora`), then one where it waits, from the metric `--lora-info-metric` names. The chart's
 * `default-plugins.yaml` leaves it out.
 */
export const LORA_AFFINITY_SCORER = { type: "lora-affinity-scorer", metricFlag: "lora-info-metric" } as const satisfies { type: string; metricFlag: PickerMetricFlag };

/** A picker flag's value is a metric spec, `name` or `name{label=value}`: the name it selects, if any. */
export function metricSpecName(spec: string): string | undefined {
  const name = spec.split("{")[0]?.trim();
  return name ? name : undefined;
}
