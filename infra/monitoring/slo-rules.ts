// The API's service level objectives and their alerts, by the Google SRE workbook's method ("Alerting on SLOs",
// multiwindow, multi-burn-rate): a budget spent 14.4 times too fast over 1 h (confirmed over 5 min) or 6 times over
// 6 h (30 min) pages; 3 times over 1 d (2 h) or at the allowed rate over 3 d (6 h) is a ticket. With a 30-day budget,
// the page fires when 2% (1 h) or 5% (6 h) of it is gone, the ticket at 10% (1 d, 3 d). The short window makes an
// alert stop soon after the burn stops.
//
// Both objectives read the gateway's own metrics (gateway/src/observability/metrics.ts), the whole API at once:
// - availability: answers that are not 5xx, out of every answer to /v1 (4xx are the client's, 499 a client that left);
// - latency: streamed requests whose first token came within the threshold (a bound of the gateway's latency
//   buckets), out of every stream that got one. Non-streamed answers last as long as the generation, so no bound fits
//   them; a wake from zero counts, as the client waited for it.
// Ratios over every window are recording rules, so the alerts stay short and each is computed once.
import type { AlertRule, RecordingRule } from "./rule-types";

export interface Objective {
  /** Share of good events over the budget period (30 days). */
  readonly target: number;
  /** Latency: the bound a good event stays within. */
  readonly thresholdSeconds?: number;
}

export const API_OBJECTIVES = {
  availability: { target: 0.999 },
  /**
   * `thresholdSeconds` must be a bucket bound of `gateway_time_to_first_token_seconds`, written with a fraction:
   * Prometheus 3 stores an integer bound as `le="1.0"`, which `le="1"` would not select.
   */
  latency: { target: 0.95, thresholdSeconds: 2.5 },
} as const satisfies Record<string, Objective>;

/** The windows the alerts read, and each burn-rate pair: long window, short window, factor of the budget. */
export const BURN_WINDOWS = ["5m", "30m", "1h", "2h", "6h", "1d", "3d"] as const;
type Window = (typeof BURN_WINDOWS)[number];
export const BURN_RATES: Readonly<Record<"page" | "ticket", readonly { readonly long: Window; readonly short: Window; readonly factor: number }[]>> = {
  page: [
    { long: "1h", short: "5m", factor: 14.4 },
    { long: "6h", short: "30m", factor: 6 },
  ],
  ticket: [
    { long: "1d", short: "2h", factor: 3 },
    { long: "3d", short: "6h", factor: 1 },
  ],
};

/** The recorded error ratio of an objective over a window: `api:<what>:ratio_rate<window>`. */
export function ratioSeries(objective: keyof typeof API_OBJECTIVES, window: Window): string {
  return `api:${objective === "availability" ? "gateway_request_errors" : "gateway_slow_first_tokens"}:ratio_rate${window}`;
}

function ratioExpr(objective: keyof typeof API_OBJECTIVES, w: Window): string {
  if (objective === "availability") return `sum(rate(gateway_requests_total{status=~"5.."}[${w}])) / sum(rate(gateway_requests_total[${w}]))`;
  const le = API_OBJECTIVES.latency.thresholdSeconds;
  return `1 - sum(rate(gateway_time_to_first_token_seconds_bucket{le="${le}"}[${w}])) / sum(rate(gateway_time_to_first_token_seconds_count[${w}]))`;
}

export const SLO_RECORDING_RULES: readonly RecordingRule[] = (["availability", "latency"] as const).flatMap((o) =>
  BURN_WINDOWS.map((w) => ({ record: ratioSeries(o, w), expr: ratioExpr(o, w) })),
);

/** Both windows of every pair above `factor` times the budget, pairs joined by `or`. */
function burnExpr(objective: keyof typeof API_OBJECTIVES, level: "page" | "ticket"): string {
  const budget = Number((1 - API_OBJECTIVES[objective].target).toFixed(6));
  return BURN_RATES[level]
    .map(({ long, short, factor }) => `(${ratioSeries(objective, long)} > ${factor} * ${budget} and ${ratioSeries(objective, short)} > ${factor} * ${budget})`)
    .join(" or ");
}

/** "Burn over 14.4x for 1h (and 5m), or over 6x for 6h (and 30m)." */
function burnWords(level: "page" | "ticket"): string {
  return `Burn over ${BURN_RATES[level].map(({ long, short, factor }) => `${factor}x for ${long} (and ${short})`).join(", or over ")}.`;
}
const percent = (share: number) => `${Number((share * 100).toFixed(3))}%`;
const AVAILABILITY = `${percent(API_OBJECTIVES.availability.target)} of the API's answers are not 5xx (30 days)`;
const LATENCY = `${percent(API_OBJECTIVES.latency.target)} of streamed requests get their first token within ${API_OBJECTIVES.latency.thresholdSeconds} s (30 days)`;

export const SLO_ALERT_RULES: readonly AlertRule[] = [
  {
    alert: "ApiAvailabilityBurnFast",
    expr: burnExpr("availability", "page"),
    for: "0m",
    severity: "critical",
    summary: "The API's 5xx answers are spending the availability budget 6 to 14.4 times too fast: at this rate it is gone within days.",
    description: `Objective: ${AVAILABILITY}. ${burnWords("page")}`,
    runbook:
      "AI Platform · Gateway, Errors by status: 503 from one model is ModelDown or ModelWakeTimedOut, 502/504 its model servers; 503 for every model with `store_unavailable` refusals is RateLimitStoreDown failing closed; GatewayServerErrors names the model.",
  },
  {
    alert: "ApiAvailabilityBurnSlow",
    expr: burnExpr("availability", "ticket"),
    for: "0m",
    severity: "warning",
    summary: "The API's 5xx answers are spending the availability budget faster than it lasts 30 days.",
    description: `Objective: ${AVAILABILITY}. ${burnWords("ticket")}`,
    runbook:
      "A steady trickle of 5xx: AI Platform · Gateway, Errors by status over 3 days shows the model and status; a `requestId` in AI Platform · Error Explorer leads to the model server's log.",
  },
  {
    alert: "ApiLatencyBurnFast",
    expr: burnExpr("latency", "page"),
    for: "0m",
    severity: "critical",
    summary: "Slow first tokens are spending the latency budget 6 to 14.4 times too fast.",
    description: `Objective: ${LATENCY}. ${burnWords("page")}`,
    runbook:
      "AI Platform · Gateway, Time to first token (streams) finds the model; its queue (AI Platform · Model Serving, Requests running and waiting) full means more replicas (TimeToFirstTokenSLO, ModelAtMaxReplicasQueueGrowing); wakes from zero (Autoscaling, Time to wake) mean `minReplicas: 0` costs more than the budget.",
  },
  {
    alert: "ApiLatencyBurnSlow",
    expr: burnExpr("latency", "ticket"),
    for: "0m",
    severity: "warning",
    summary: "Slow first tokens are spending the latency budget faster than it lasts 30 days.",
    description: `Objective: ${LATENCY}. ${burnWords("ticket")}`,
    runbook:
      "Capacity short at peaks: compare AI Platform · Gateway, Time to first token (streams) with Replicas per model over 3 days (AI Platform · Model Serving, Autoscaling); add replicas or raise `maxReplicas`.",
  },
];
