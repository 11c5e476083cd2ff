import type { Metric, Registry } from "prom-client";

type Labels = Record<string, string>;
interface Sample {
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  value: number;
  metricName?: string;
}

/**
 * A Prometheus metric whose series are looked up once and then kept by the caller: prom-client validates and
 * hashes a label object on every observation, even through `labels()`, which is a measurable share of a request
 * at thousands a second. Label values must be bounded (catalog ids, key names, statuses): every series seen is
 * kept, as prom-client keeps them. Exposed in the text format as prom-client's own metrics are.
 */
abstract class PrebuiltMetric<S> {
  abstract readonly type: "counter" | "gauge" | "histogram";
  readonly aggregator = "sum";
  private readonly all = new Map<string, { labels: Labels; series: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  protected abstract create(): S;
  protected abstract samples(labels: Labels, series: S): Sample[];

  /** The series of these label values (in `labelNames` order), built on first use. */
  series(...values: string[]): S {
    const id = values.join("\u0000");
    let entry = this.all.get(id);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i] ?? ""));
      this.all.set(id, (entry = { labels, series: this.create() }));
    }
    return entry.series;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    for (const { labels, series } of this.all.values()) values.push(...this.samples(labels, series));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.all.clear();
  }
}

export interface CounterSeries {
  value: number;
  inc(by?: number): void;
}

export interface GaugeSeries extends CounterSeries {
  dec(): void;
}

/** One number that goes up (a counter) or up and down (a gauge). */
function numberSeries(): GaugeSeries {
  return {
    value: 0,
    inc(by = 1) {
      this.value += by;
    },
    dec() {
      this.value -= 1;
    },
  };
}

export class PrebuiltCounter extends PrebuiltMetric<CounterSeries> {
  readonly type = "counter";
  protected create = numberSeries;
  protected samples = (labels: Labels, s: CounterSeries): Sample[] => [{ labels, value: s.value }];
}

export class PrebuiltGauge extends PrebuiltMetric<GaugeSeries> {
  readonly type = "gauge";
  protected create = numberSeries;
  protected samples = (labels: Labels, s: GaugeSeries): Sample[] => [{ labels, value: s.value }];
}

export interface HistogramSeries {
  observe(value: number): void;
  /** Adds a batch: `counts[i]` observations in bucket i (non-cumulative, the last above every bound), summing `sum`. */
  merge(counts: ArrayLike<number>, sum: number): void;
}

/** Index of the first bound `value` does not exceed (bounds.length when above them all). */
export function bucketOf(bounds: readonly number[], value: number): number {
  let i = 0;
  while (i < bounds.length && value > bounds[i]!) i++;
  return i;
}

export class PrebuiltHistogram extends PrebuiltMetric<HistogramSeries & { counts: Float64Array; sum: number }> {
  readonly type = "histogram";

  constructor(name: string, help: string, labelNames: readonly string[], private readonly bounds: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
  }

  protected create(): HistogramSeries & { counts: Float64Array; sum: number } {
    const bounds = this.bounds;
    return {
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      observe(value) {
        this.counts[bucketOf(bounds, value)]!++;
        this.sum += value;
      },
      merge(counts, sum) {
        for (let i = 0; i < counts.length; i++) this.counts[i]! += counts[i]!;
        this.sum += sum;
      },
    };
  }

  protected samples(labels: Labels, s: { counts: Float64Array; sum: number }): Sample[] {
    const out: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += s.counts[i]!;
      out.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucket });
    });
    cumulative += s.counts[this.bounds.length]!;
    out.push({ labels: { le: "+Inf" }, sharedLabels: labels, value: cumulative, metricName: bucket });
    out.push({ labels, value: s.sum, metricName: `${this.name}_sum` });
    out.push({ labels, value: cumulative, metricName: `${this.name}_count` });
    return out;
  }
}
