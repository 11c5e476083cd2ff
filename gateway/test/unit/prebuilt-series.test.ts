import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { PrebuiltCounter, PrebuiltGauge, PrebuiltHistogram } from "../../src/observability/prebuilt-series";

// The prebuilt series must read exactly as prom-client's own metrics do: dashboards and alerts query them.
describe("prebuilt series", () => {
  const bounds = [0.01, 0.1, 1];

  it("expose the same text as prom-client's counter, gauge and histogram", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const c = new PrebuiltCounter("c_total", "a counter", ["model", "key"], ours);
    const g = new PrebuiltGauge("g", "a gauge", ["model"], ours);
    const h = new PrebuiltHistogram("h_seconds", "a histogram", ["model", "stream"], bounds, ours);
    const pc = new Counter({ name: "c_total", help: "a counter", labelNames: ["model", "key"], registers: [theirs] });
    const pg = new Gauge({ name: "g", help: "a gauge", labelNames: ["model"], registers: [theirs] });
    const ph = new Histogram({ name: "h_seconds", help: "a histogram", labelNames: ["model", "stream"], buckets: bounds, registers: [theirs] });

    c.series("m", "k").inc();
    c.series("m", "k").inc(4);
    pc.inc({ model: "m", key: "k" });
    pc.inc({ model: "m", key: "k" }, 4);
    g.series("m").inc();
    g.series("m").inc();
    g.series("m").dec();
    pg.inc({ model: "m" });
    pg.inc({ model: "m" });
    pg.dec({ model: "m" });
    for (const v of [0.005, 0.05, 0.5, 5, 0.1]) {
      h.series("m", "true").observe(v);
      ph.observe({ model: "m", stream: "true" }, v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("merges a batch of per-bucket counts as if each had been observed", async () => {
    const merged = new Registry();
    const observed = new Registry();
    const m = new PrebuiltHistogram("itl", "gaps", ["model"], bounds, merged);
    const o = new PrebuiltHistogram("itl", "gaps", ["model"], bounds, observed);
    const gaps = [0.001, 0.02, 0.02, 0.3, 2];
    const counts = new Uint32Array(bounds.length + 1);
    for (const v of gaps) {
      const bucket = bounds.findIndex((b) => v <= b);
      counts[bucket === -1 ? bounds.length : bucket]!++;
      o.series("m").observe(v);
    }
    m.series("m").merge(counts, gaps.reduce((a, b) => a + b, 0));
    expect(await merged.metrics()).toBe(await observed.metrics());
  });
});
