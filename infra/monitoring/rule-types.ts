// The shape of the metrics server's rules, apart from the rules themselves: the three families (alert-rules.ts,
// health-rules.ts, slo-rules.ts) share it without importing one another.

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  /** `critical` pages, `warning` is a ticket; `none` is the Watchdog, which only proves the path works. */
  readonly severity: "critical" | "warning" | "none";
  /** One line, with the alert's labels filled in (`{{ $labels.x }}`). */
  readonly summary: string;
  /** What firing means, without labels: a table's "fires when" in words. */
  readonly description: string;
  /** What to do, in one line (docs/monitoring.md "## Alerts"). */
  readonly runbook: string;
  /** The book's page and anchor that owns the procedure (`operations.md#…`), when it is not the Alerts list. */
  readonly runbookPage?: string;
}

/** A recording rule: a series the metrics server computes, which alerts read. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}
