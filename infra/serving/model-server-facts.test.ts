// What the platform reads from its model servers, collected from where each reader is configured, held against what the
// images it deploys export (model-server-facts.ts): the endpoint picker's metric flags and scorers in every pool folder
// and in what the scaffolder writes, the gateway's load scraper, the preStop drain, the dashboards and the alert rules.
// Our own simulator must export vLLM's names for them too.
import { LOAD_METRICS } from "../../gateway/src/upstream/load-scraper";
import { startSimulator } from "../../simulator/src";
import { ALERT_RULES } from "../monitoring/alert-rules";
import { logDashboards, metricsDashboards } from "../monitoring/dashboards/definitions";
import { referencedMetrics } from "../monitoring/dashboards/metric-catalogue";
import { loadModelFolders } from "./model-folders";
import {
  DEFAULT_PLUGINS,
  LLMD_INFERENCE_SIM,
  metricSpecName,
  type ModelServerFacts,
  PICKER_METRIC_FLAGS,
  type PickerMetricFlag,
  SIMULATOR_GAPS,
  VLLM,
  VLLM_CONDITIONAL_READS,
} from "./model-server-facts";
import { scaffoldFiles, SIMULATOR_IMAGE, VLLM_IMAGE } from "./scaffold";
import { DRAIN_METRICS } from "./values";

interface Read {
  /** Who reads it, and where that is configured. */
  readonly reader: string;
  readonly name: string;
  /** Read only from vLLM (the preStop drain runs in vLLM containers only). */
  readonly vllmOnly?: boolean;
}

const folders = loadModelFolders();
const scaffolded = scaffoldFiles({ category: "generative", model: "toy", simulated: true });

/** A selected series by the metric it belongs to: a histogram's `_bucket`, `_count` and `_sum` by its base name. */
function baseName(series: string): string {
  const base = series.replace(/_(bucket|count|sum)$/, "");
  return base !== series && VLLM.histograms.includes(base) ? base : series;
}

function exports(facts: ModelServerFacts, series: string): boolean {
  return facts.metrics.includes(baseName(series));
}

/** The picker of one pool: every metric flag it is started with (the folder's, else the picker's default). */
function pickerReads(poolValues: Record<string, unknown>, where: string): Read[] {
  const ext = poolValues.inferenceExtension as { flags?: Record<string, unknown>; pluginsConfigFile?: string } | undefined;
  const flags = ext?.flags ?? {};
  return (Object.keys(PICKER_METRIC_FLAGS.defaults) as PickerMetricFlag[]).flatMap((flag) => {
    const name = metricSpecName(String(flags[flag] ?? PICKER_METRIC_FLAGS.defaults[flag]));
    return name ? [{ reader: `the endpoint picker of ${where} (--${flag})`, name }] : [];
  });
}

function dashboardReads(): Read[] {
  return [...logDashboards(), ...metricsDashboards()]
    .filter((d) => d.datasourceKind === "metrics")
    .flatMap((d) => {
      const panels = d.panels.flatMap((p) => p.targets.map((t) => ({ where: `${d.title} · ${p.title}`, expr: t.expr })));
      const variables = d.templating.list.map((v) => ({ where: `${d.title} · $${v.name}`, expr: /^label_values\((.*),\s*\w+\)$/.exec(v.definition)?.[1] ?? "" }));
      return [...panels, ...variables].flatMap(({ where, expr }) => referencedMetrics(expr).map((name) => ({ reader: `dashboard ${where}`, name })));
    });
}

function platformReads(): Read[] {
  return [
    ...folders.flatMap((f) => pickerReads(f.poolValues, `gaie-${f.slug}`)),
    ...pickerReads(scaffolded.pool as Record<string, unknown>, "a scaffolded pool"),
    ...Object.values(LOAD_METRICS).map((name) => ({ reader: "the gateway's load scraper (gateway/src/upstream/load-scraper.ts)", name })),
    ...DRAIN_METRICS.map((name) => ({ reader: "the model servers' preStop drain (infra/serving/values.ts)", name, vllmOnly: true })),
    ...dashboardReads(),
    ...ALERT_RULES.flatMap((r) => referencedMetrics(r.expr).map((name) => ({ reader: `alert ${r.alert}`, name }))),
  ].filter((r) => r.name.startsWith("vllm:"));
}

describe("what the platform reads from model servers, against what the deployed images export", () => {
  const reads = platformReads();

  test("the readers are all found: picker, load scraper, drain, dashboards and the KV-cache alert", () => {
    const names = new Set(reads.map((r) => r.name));
    for (const name of ["vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:cache_config_info", "vllm:time_to_first_token_seconds_bucket"]) {
      expect(names).toContain(name);
    }
    expect(reads.some((r) => r.reader === "alert KVCacheSaturated")).toBe(true);
    expect(reads.some((r) => r.reader.startsWith("the endpoint picker of gaie-sim-chat"))).toBe(true);
  });

  test("every model folder runs one of the images whose exports are recorded, and so does the scaffolder", () => {
    const recorded = [VLLM.image, LLMD_INFERENCE_SIM.image];
    for (const f of folders) {
      for (const role of [f.serverValues.decode, f.serverValues.prefill]) {
        const image = role?.containers?.[0]?.image;
        if (role && role.create !== false && image) expect({ folder: f.ref, image, recorded: recorded.includes(image) }).toEqual({ folder: f.ref, image, recorded: true });
      }
    }
    expect([VLLM_IMAGE, SIMULATOR_IMAGE]).toEqual(recorded);
    expect(folders.find((f) => f.ref === "generative/sim-chat")?.serverValues.decode.containers?.[0]?.image).toBe(LLMD_INFERENCE_SIM.image);
  });

  test("every pool scores with the chart's default plugins, each on a metric flag the picker is started with", () => {
    for (const values of [...folders.map((f) => f.poolValues as Record<string, unknown>), scaffolded.pool as Record<string, unknown>]) {
      const ext = values.inferenceExtension as { pluginsConfigFile?: string; pluginsCustomConfig?: unknown };
      expect(ext.pluginsConfigFile).toBe(DEFAULT_PLUGINS.file);
      expect(ext.pluginsCustomConfig).toBeUndefined();
      expect((values.inferencePool as { modelServerType?: string }).modelServerType ?? "vllm").toBe("vllm");
      const started = pickerReads(values, "it").map((r) => r.reader);
      for (const flag of Object.values(DEFAULT_PLUGINS.scorers)) expect(started).toContain(`the endpoint picker of it (--${flag})`);
    }
  });

  test(`every name read is exported by vLLM ${VLLM.version} (${VLLM.image}), or is a documented conditional one`, () => {
    const missing = reads.filter((r) => !exports(VLLM, r.name)).map((r) => `${r.name} (${r.reader})`);
    expect(missing).toEqual([]);
    const conditional = [...new Set(reads.map((r) => baseName(r.name)).filter((n) => VLLM.conditional[n] !== undefined))];
    expect(conditional.filter((n) => VLLM_CONDITIONAL_READS[n] === undefined)).toEqual([]);
  });

  test(`every name read from both is exported by llm-d-inference-sim ${LLMD_INFERENCE_SIM.version}, or is a documented gap`, () => {
    const missing = reads.filter((r) => !r.vllmOnly && !exports(LLMD_INFERENCE_SIM, r.name));
    expect(missing.filter((r) => SIMULATOR_GAPS[baseName(r.name)] === undefined).map((r) => `${r.name} (${r.reader})`)).toEqual([]);
    // A gap that nothing reads any more is stale: remove it.
    expect(Object.keys(SIMULATOR_GAPS).filter((n) => !missing.some((r) => baseName(r.name) === n))).toEqual([]);
  });

  test("the names the picker's KV scorer, the load scraper and the KV alert read were renamed in vLLM 0.10: the old ones are exported by neither", () => {
    for (const facts of [VLLM, LLMD_INFERENCE_SIM]) expect(facts.metrics).not.toContain("vllm:gpu_cache_usage_perc");
    expect(reads.map((r) => r.name)).not.toContain("vllm:gpu_cache_usage_perc");
  });

  test("our simulator exports vLLM's names: every one it exports is vLLM's, of the same kind, and it has every one the platform reads", async () => {
    const sim = await startSimulator({ models: ["m"] });
    try {
      const text = await (await fetch(`${sim.url}/metrics`)).text();
      const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
      const names = [...types.keys()].filter((n) => n.startsWith("vllm:"));
      expect(names.filter((n) => !VLLM.metrics.includes(n))).toEqual([]);
      expect(names.filter((n) => (types.get(n) === "histogram") !== VLLM.histograms.includes(n))).toEqual([]);
      const needed = [...new Set(reads.map((r) => baseName(r.name)))].filter((n) => VLLM.conditional[n] === undefined);
      expect(needed.filter((n) => !names.includes(n))).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});
