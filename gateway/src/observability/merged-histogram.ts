import type { Metric, Registry } from "prom-client";

/**
 * A Prometheus histogram, by one label, that takes a whole batch of observations at once: per-bucket counts and
 * their sum. For figures observed many times per request (inter-token gaps, one per token) whose owner counts
 * them into its own array and hands them over once: no label hashing, no object per observation. Exposed in the
 * text format exactly as prom-client's own histograms are (`_bucket` cumulative with `le`, `_sum`, `_count`).
 */
export class MergedHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, { counts: Float64Array; sum: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly label: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** Adds a batch: `counts[i]` observations in bucket i (non-cumulative, the last above every bound), summing `sum`. */
  merge(labelValue: string, counts: ArrayLike<number>, sum: number): void {
    let s = this.series.get(labelValue);
    if (!s) this.series.set(labelValue, (s = { counts: new Float64Array(this.bounds.length + 1), sum: 0 }));
    for (let i = 0; i < counts.length; i++) s.counts[i]! += counts[i]!;
    s.sum += sum;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: { labels: Record<string, string | number>; value: number; metricName: string }[] } {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const [labelValue, s] of this.series) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { le, [this.label]: labelValue }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      cumulative += s.counts[this.bounds.length]!;
      values.push({ labels: { le: "+Inf", [this.label]: labelValue }, value: cumulative, metricName: `${this.name}_bucket` });
      values.push({ labels: { [this.label]: labelValue }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { [this.label]: labelValue }, value: cumulative, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
