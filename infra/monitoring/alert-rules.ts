// Alert rules of the metrics server (the chart's `serverFiles."alerting_rules.yml"`, a Prometheus rule file). Firing
// alerts show on the server's /alerts page and as the `ALERTS` series the viewer can query; the bundled alert manager
// is off (spec), and `monitoring:alertmanagers` sends them to the operator's own. Every alert carries
// `platform="ai-platform"`, so a shared Alertmanager can route them. Each rule describes itself (summary,
// description, one-line runbook, the page's anchor), so docs/monitoring.md "## Alerts" can be generated from these
// definitions; alert-rules.test.ts checks every rule with promtool (syntax and unit tests on synthetic series).
// Four families: the symptoms below, the platform's own health (health-rules.ts), per-key budgets and the usage ledger
// (usage-rules.ts), and the API's objectives (slo-rules.ts), whose ratios are recording rules of the same file.
import { PLATFORM_NAME } from "../platform/labels";
import { BUCKET_JOB_NAME, NAMESPACE } from "./constants";
import { COLLECTOR_NAME } from "./collector-values";
import { HEALTH_RULES } from "./health-rules";
import type { AlertRule, RecordingRule } from "./rule-types";
import { SLO_ALERT_RULES, SLO_RECORDING_RULES } from "./slo-rules";
import { USAGE_RULES } from "./usage-rules";

export type { AlertRule, RecordingRule };

/** The label every platform alert carries besides `severity`: what a shared Alertmanager routes on. */
export const ALERT_PLATFORM_LABEL = { platform: PLATFORM_NAME } as const;

/** Thresholds, in one place. */
export const ALERT_THRESHOLDS = {
  /** Share of a model's gateway answers that are 5xx. */
  serverErrorRatio: 0.05,
  /** p90 time to first token at the model servers, seconds. */
  ttftP90Seconds: 2,
  /** vLLM KV-cache usage (0–1) at which requests start to queue or be preempted. */
  kvCacheUsage: 0.9,
  /** p99 of a gateway pod's event-loop delay, seconds: what every request it holds waits on top of its own work. */
  eventLoopDelayP99Seconds: 0.1,
} as const;

/** Where every alert's runbook line is on the book's page (the `runbook_url` annotation), unless a page owns its procedure. */
export const RUNBOOK_ANCHOR = "docs/monitoring.md#alerts";


const t = ALERT_THRESHOLDS;

const SYMPTOM_RULES: readonly AlertRule[] = [
  {
    alert: "ModelDown",
    // A model that may sleep (the gateway exports its held-requests gauge, and only for such models) has no ready
    // replica by design while idle: ModelWakeTimedOut says when it fails to wake instead.
    expr: "max by (model) (gateway_models_ready) == 0 unless on (model) max by (model) (gateway_model_held_requests)",
    for: "5m",
    severity: "critical",
    summary: "Model {{ $labels.model }} has no ready replica: the gateway answers 503 for it and does not list it.",
    description: "A model has no ready replica while it is not one that may sleep.",
    runbook:
      "`kubectl -n app-serving get pods -l <label_domain>/model-slug=<slug>`: a `Pending` pod lacks GPUs (models.md), a crash-looping one says why in its log (app-serving · Model Log Explorer); a model scaled to 0 on purpose fires this too.",
  },
  {
    alert: "ModelWakeTimedOut",
    expr: 'sum by (model) (increase(gateway_held_requests_total{outcome="timed_out"}[10m])) > 0',
    for: "0m",
    severity: "critical",
    summary: "Model {{ $labels.model }} did not wake within its wake timeout: requests held for it got 503.",
    description: "Requests held for a model waking from zero waited past its wake timeout.",
    runbook:
      "AI Platform · Model Serving, Autoscaling: no replica after a wake means a `Pending` pod (GPUs: models.md), a load slower than `wake.timeoutSeconds`, or KEDA not scaling (`kubectl -n app-serving describe scaledobject model-<slug>`).",
  },
  {
    alert: "GatewayServerErrors",
    expr: `sum by (model) (rate(gateway_requests_total{status=~"5.."}[5m])) / sum by (model) (rate(gateway_requests_total[5m])) > ${t.serverErrorRatio}`,
    for: "10m",
    severity: "critical",
    summary: "More than 5% of the gateway's answers for {{ $labels.model }} are 5xx.",
    description: "Over 5% of a model's answers at the gateway are 5xx.",
    runbook:
      "AI Platform · Gateway, Errors by status: 503 is no ready replica (ModelDown), 502/504 the model servers failed or timed out; follow a request's `requestId` from AI Platform · Error Explorer into the model server's log.",
  },
  {
    alert: "GatewayEventLoopDelay",
    expr: `max by (pod) (gateway_event_loop_delay_p99_seconds) > ${t.eventLoopDelayP99Seconds}`,
    for: "10m",
    severity: "warning",
    summary: "The event loop of gateway pod {{ $labels.pod }} runs over 100 ms late at p99: every request it holds waits that long.",
    description: "A gateway pod's event loop runs over 100 ms late at p99.",
    runbook:
      "AI Platform · Gateway, Event loop delay: a pod at its CPU limit (Cluster · Pod Resource Usage) needs more replicas or a higher `gateway:resources` CPU limit; one near its memory limit is collecting garbage (raise the memory limit); one pod alone with a long maximum is one long task: its slowest requests in the gateway's log show which.",
  },
  {
    alert: "TimeToFirstTokenSLO",
    expr: `histogram_quantile(0.9, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[10m]))) > ${t.ttftP90Seconds}`,
    for: "15m",
    severity: "warning",
    summary: "p90 time to first token of {{ $labels.model_name }} is above 2 s at the model servers.",
    description: "The model servers' p90 time to first token is over 2 s.",
    runbook:
      "AI Platform · Model Serving: requests waiting > 0 and KV cache near full: replicas saturated (add replicas or lower `--max-num-seqs`); long prompts with a low prefix-cache hit rate: prefill dominates.",
  },
  {
    alert: "KVCacheSaturated",
    expr: `max by (model_name, pod) (vllm:kv_cache_usage_perc) > ${t.kvCacheUsage}`,
    for: "15m",
    severity: "warning",
    summary: "KV cache of {{ $labels.pod }} ({{ $labels.model_name }}) is over 90% used.",
    description: "A model server's KV cache is over 90% used.",
    runbook:
      "Requests queue and get preempted on this pod: add replicas, lower `--max-num-seqs` or `--max-model-len`, or check that the endpoint picker spreads load (AI Platform · Model Serving, per pod).",
  },
  {
    alert: "ModelAtMaxReplicasQueueGrowing",
    // An HPA at its maximum, named after its Deployment (kube-state-metrics' info series); vLLM's queue summed over
    // that Deployment's pods (pod names are `<deployment>-<hash>-<hash>`). Only KEDA's HPAs scale model servers.
    expr: [
      'max by (namespace, deployment) (label_replace((kube_horizontalpodautoscaler_status_current_replicas >= kube_horizontalpodautoscaler_spec_max_replicas) * on (namespace, horizontalpodautoscaler) group_left (scaletargetref_name) kube_horizontalpodautoscaler_info, "deployment", "$1", "scaletargetref_name", "(.+)"))',
      ' and on (namespace, deployment) ',
      'deriv(sum by (namespace, deployment) (label_replace(vllm:num_requests_waiting, "deployment", "$1", "pod", "(.+)-[^-]+-[^-]+"))[15m:1m]) > 0',
    ].join(""),
    for: "15m",
    severity: "warning",
    summary: "{{ $labels.deployment }} is at maxReplicas and its queue keeps growing.",
    description: "An autoscaled model is at its maximum replicas and its queue keeps growing.",
    runbook: "No replica left to add: raise `maxReplicas` (`serving:autoscaling`) where GPUs allow, or add GPU nodes (AI Platform · Model Serving, Autoscaling).",
  },
  {
    alert: "LogstoreIngestionErrors",
    expr:
      'sum by (reason) (rate(loki_discarded_samples_total[5m])) > 0 or sum by (status_code) (rate(loki_request_duration_seconds_count{route="loki_api_v1_push", status_code=~"5.."}[5m])) > 0',
    for: "10m",
    severity: "warning",
    summary: "The log store is refusing or failing pushes ({{ $labels.reason }}{{ $labels.status_code }}): log lines are being lost.",
    description: "The log store discards lines or fails pushes.",
    runbook:
      "`kubectl -n monitoring logs statefulset/logstore`: `rate_limited`/`per_stream_rate_limit`: a pod logs over the log store's limits (3 MB/s per stream, 16 MB/s in all; find it in AI Platform · Overview); 5xx on push: the object store is unreachable or full.",
  },
  {
    alert: "LogstoreBucketJobFailed",
    expr: `kube_job_failed{namespace="${NAMESPACE}", job_name="${BUCKET_JOB_NAME}", condition="true"} == 1`,
    for: "0m",
    severity: "critical",
    summary: "The bucket Job failed: the log store was not deployed.",
    description: "The Job that creates the log store's bucket failed.",
    runbook:
      "`kubectl -n monitoring logs job/logstore-create-bucket`: a 403 or signature mismatch: `monitoring:s3User`/`s3Password` are not the object store's (IRSA: an AccessDenied, the role's trust or S3 policy; Cloud Storage: the log names the permission the Job's Google service account lacks); fix them, `pulumi up` (the Job is replaced and reruns).",
  },
  {
    alert: "CollectorNotOnEveryNode",
    expr: `kube_daemonset_status_desired_number_scheduled{namespace="${NAMESPACE}", daemonset="${COLLECTOR_NAME}"} - kube_daemonset_status_number_available{namespace="${NAMESPACE}", daemonset="${COLLECTOR_NAME}"} > 0`,
    for: "15m",
    severity: "warning",
    summary: "{{ $value }} node(s) run no available collector pod: their pods' logs are not shipped.",
    description: "Some nodes run no available collector pod.",
    runbook:
      "`kubectl -n monitoring get pods -l app.kubernetes.io/instance=collector -o wide`, describe the pod not Running; a node tainted other than NoSchedule needs `monitoring:collectorTolerations`.",
  },
];

/** Every alert the metrics server evaluates: the Watchdog and the platform's health first, then symptoms, usage, objectives. */
export const ALERT_RULES: readonly AlertRule[] = [...HEALTH_RULES, ...SYMPTOM_RULES, ...USAGE_RULES, ...SLO_ALERT_RULES];

/** Every recording rule (the objectives' error ratios). */
export const RECORDING_RULES: readonly RecordingRule[] = SLO_RECORDING_RULES;

/** The annotations an alert carries: what is wrong, what it means, what to do and where that is written. */
export function alertAnnotations(r: AlertRule): Record<string, string> {
  return { summary: r.summary, description: r.description, runbook: r.runbook, runbook_url: r.runbookPage ? `docs/${r.runbookPage}` : RUNBOOK_ANCHOR };
}

/**
 * The rule file, as the chart's `serverFiles."alerting_rules.yml"` and as promtool reads it. The recording rules are
 * a group of their own in the same file (the chart loads one rule file per key; the ratios change slowly, so one
 * evaluation of lag between the groups does not matter).
 */
export function alertingRulesFile(): { groups: { name: string; rules: Record<string, unknown>[] }[] } {
  return {
    groups: [
      { name: "ai-platform-slo-ratios", rules: RECORDING_RULES.map((r) => ({ record: r.record, expr: r.expr })) },
      {
        name: "ai-platform",
        rules: ALERT_RULES.map((r) => ({
          alert: r.alert,
          expr: r.expr,
          for: r.for,
          labels: { severity: r.severity, ...ALERT_PLATFORM_LABEL },
          annotations: alertAnnotations(r),
        })),
      },
    ],
  };
}
