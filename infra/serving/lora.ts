// LoRA adapters a model folder declares (model.yaml `lora`) and what they become: files in the model's cache volume
// (the download Job fetches them beside the weights), the model server's flags and environment, the endpoint
// picker's LoRA scorer in pool mode, and catalog entries. One name runs through all of them: the adapter's `name` is
// vLLM's lora_name, the id clients send, the name the picker finds in `running_lora_adapters`, and the catalog's id.
// Pure builders and rules; no Pulumi here.
import { parse, stringify } from "yaml";
import type { CatalogInput } from "../../gateway/src/config/catalog";
import { DEFAULT_PLUGINS, LORA_AFFINITY_SCORER, metricSpecName, PICKER_METRIC_FLAGS, VLLM_LORA } from "./model-server-facts";
import type { InferencePoolValues, LoraAdapter, ModelLora, ModelServerValues } from "./folder-schemas";
import { hasFlag } from "./server-args";
import { type AdapterDownloadArgs, MODEL_CACHE_MOUNT, weightsSource } from "./weights";

/** The rule a folder's adapters break (model-folders.ts prefixes the folder). */
export const LORA_RULE = "lora";

/** Where adapters land inside the model's cache volume (beside `hub/` or the s3 weights' folder). */
export const ADAPTERS_DIR = "lora-adapters";

/** An adapter's folder: its name with `/` as `--` (as the Hub's cache names repositories), so a name is one segment. */
export function adapterDir(name: string): string {
  return name.replaceAll("/", "--");
}

/** Where an adapter's files are in the volume, relative to its root. */
export function adapterVolumeDir(name: string): string {
  return `${ADAPTERS_DIR}/${adapterDir(name)}`;
}

/** The local path vLLM loads the adapter from (an absolute path: vLLM fetches a relative one it cannot find from the Hub). */
export function adapterPath(name: string): string {
  return `${MODEL_CACHE_MOUNT}/${adapterVolumeDir(name)}`;
}

export type AdapterLoading = "preload" | "on-demand";

export function adapterLoading(a: LoraAdapter): AdapterLoading {
  return a.preload ? "preload" : "on-demand";
}

/** The space an adapter takes in the cache when the folder does not say: a rank-64 adapter of an 8B model is ~0.35 GiB. */
export const DEFAULT_ADAPTER_GIB = 1;

/** What the adapters add to the cache volume, GiB. */
export function adaptersGiB(lora: ModelLora | undefined): number {
  return (lora?.adapters ?? []).reduce((sum, a) => sum + (a.sizeGiB ?? DEFAULT_ADAPTER_GIB), 0);
}

/** The model-server flags the platform passes for adapters; a folder's args carry none of them. */
export const LORA_FLAGS = ["--enable-lora", "--max-loras", "--max-lora-rank", "--max-cpu-loras", "--lora-modules"] as const;

/**
 * The flags for a model's adapters. vLLM: `--enable-lora`, the limits, and the preloaded adapters as one
 * `--lora-modules` followed by one JSON object each (the form its LoRAParserAction documents; the flag takes a list, and
 * a second `--lora-modules` would replace the first), with `base_model_name` = the served name, which vLLM reports as
 * their `parent` in /v1/models. The llm-d simulator parses `--max-loras` and `--lora-modules` (no `--enable-lora` or
 * rank: pflag would stop at them) and refuses a `base_model_name` other than its `--model` (`random`), so it gets none.
 */
export function loraServerArgs(lora: ModelLora, servedName: string, vllm: boolean): string[] {
  const preloaded = lora.adapters.filter((a) => a.preload);
  const modules = preloaded.map((a) => JSON.stringify({ name: a.name, path: adapterPath(a.name), ...(vllm ? { base_model_name: servedName } : {}) }));
  return [
    ...(vllm ? ["--enable-lora", `--max-lora-rank=${lora.maxLoraRank}`] : []),
    `--max-loras=${lora.maxLoras}`,
    ...(modules.length > 0 ? ["--lora-modules", ...modules] : []),
  ];
}

/**
 * A vLLM server with adapters loaded on demand: the load and unload routes (under /v1, so they need the server's API
 * key like every /v1 route), and no Hub access (a lora_path vLLM cannot find locally it would fetch from the Hub:
 * vllm/lora/utils.py get_adapter_absolute_path), so a load reads only the read-only cache.
 */
export function loraServerEnv(lora: ModelLora, vllm: boolean): { name: string; value: string }[] {
  if (!vllm || lora.adapters.every((a) => a.preload)) return [];
  return [
    { name: VLLM_LORA.runtimeUpdating.env, value: VLLM_LORA.runtimeUpdating.value },
    { name: "HF_HUB_OFFLINE", value: "1" },
  ];
}

/** The adapters of a model the download Job fetches: those with a source (a vLLM model's; the simulator loads no file). */
export function adapterDownloads(lora: ModelLora | undefined): AdapterDownloadArgs[] {
  return (lora?.adapters ?? []).flatMap((a) => {
    const source = a.source ? weightsSource(a.source) : undefined;
    return source && source.kind !== "volume" ? [{ source, dir: adapterVolumeDir(a.name), ...(a.revision ? { revision: a.revision } : {}) }] : [];
  });
}

type CatalogLora = NonNullable<CatalogInput["models"][number]["lora"]>;

/** The catalog's `lora` of a model: the adapters the gateway may route to, where each is loaded from, and how. */
export function catalogLora(lora: ModelLora): CatalogLora {
  return { maxLoras: lora.maxLoras, adapters: lora.adapters.map((a) => ({ id: a.name, path: adapterPath(a.name), loading: adapterLoading(a) })) };
}

/** The picker's configuration file the platform adds to a pool whose model has adapters. */
export const LORA_PLUGINS_FILE = "lora-plugins.yaml";

/**
 * The chart's default-plugins.yaml (inferencepool v1.3.0 templates/epp-config.yaml: these scorers and weights) plus the
 * LoRA affinity scorer, weighted like the load scorers: a pod that must load the adapter first costs about as much as
 * a busy one. It reads `vllm:lora_requests_info`, which the picker scrapes by default (`--lora-info-metric`).
 */
export const LORA_PICKER_WEIGHTS: Readonly<Record<string, number>> = {
  "queue-scorer": 2,
  "kv-cache-utilization-scorer": 2,
  "prefix-cache-scorer": 3,
  [LORA_AFFINITY_SCORER.type]: 2,
};

export function loraPickerConfig(): string {
  const types = Object.keys(LORA_PICKER_WEIGHTS);
  return stringify({
    apiVersion: "inference.networking.x-k8s.io/v1alpha1",
    kind: "EndpointPickerConfig",
    plugins: types.map((type) => ({ type })),
    schedulingProfiles: [{ name: "default", plugins: types.map((pluginRef) => ({ pluginRef, weight: LORA_PICKER_WEIGHTS[pluginRef] })) }],
  });
}

type PickerValues = { pluginsConfigFile?: string; pluginsCustomConfig?: Record<string, string>; flags?: Record<string, unknown>; latencyPredictor?: { enabled?: boolean } };

/** The chart's default file as rendered: its latency predictor replaces the three scorers (templates/epp-config.yaml). */
function onChartDefault(ext: PickerValues): boolean {
  return (ext.pluginsConfigFile ?? DEFAULT_PLUGINS.file) === DEFAULT_PLUGINS.file && ext.latencyPredictor?.enabled !== true;
}

/** The pool's picker values with the LoRA scorer, unless the folder runs a configuration of its own (checked instead). */
export function withLoraPicker(pool: InferencePoolValues): InferencePoolValues {
  const ext = ((pool as { inferenceExtension?: PickerValues }).inferenceExtension ?? {}) as PickerValues;
  if (!onChartDefault(ext)) return pool;
  return { ...pool, inferenceExtension: { ...ext, pluginsConfigFile: LORA_PLUGINS_FILE, pluginsCustomConfig: { ...(ext.pluginsCustomConfig ?? {}), [LORA_PLUGINS_FILE]: loraPickerConfig() } } } as InferencePoolValues;
}

/** Whether a picker configuration file scores with the LoRA scorer in some profile. */
function scoresLora(text: string | undefined): boolean {
  let config: { plugins?: { type?: string; name?: string }[]; schedulingProfiles?: { plugins?: { pluginRef?: string }[] }[] };
  try {
    config = (parse(text ?? "") ?? {}) as typeof config;
  } catch {
    return false;
  }
  const names = (config.plugins ?? []).filter((p) => p.type === LORA_AFFINITY_SCORER.type).map((p) => p.name ?? p.type);
  return (config.schedulingProfiles ?? []).some((profile) => (profile.plugins ?? []).some((p) => names.includes(p.pluginRef)));
}

/** `[lora] detail` lines: the limits vLLM enforces, what a vLLM adapter needs, and a picker that can route by adapter. */
export function loraChecks(lora: ModelLora | undefined, ms: ModelServerValues, pool: InferencePoolValues, vllm: boolean): string[] {
  const problems: string[] = [];
  const flag = (f: string) => `[${LORA_RULE}] the platform passes ${f} from model.yaml lora: remove it from decode.containers[0].args`;
  const args = ms.decode.containers[0]?.args ?? [];
  problems.push(...LORA_FLAGS.filter((f) => hasFlag(args, f)).map(flag));
  if (!lora) return problems;
  lora.adapters.forEach((a, i) => {
    const at = `model.yaml lora.adapters[${i}]`;
    if (a.rank > lora.maxLoraRank) {
      problems.push(`[${LORA_RULE}] ${at}.rank ${a.rank} exceeds lora.maxLoraRank ${lora.maxLoraRank}: vLLM refuses to load an adapter above --max-lora-rank (raise maxLoraRank to ${nextRank(a.rank)})`);
    }
    if (vllm && a.source === undefined) problems.push(`[${LORA_RULE}] ${at}.source is required for a vLLM model (hf://<org>/<name> or s3://<bucket>/<prefix>)`);
    const other = lora.adapters.findIndex((b, j) => j < i && b.name !== a.name && adapterDir(b.name) === adapterDir(a.name));
    if (other >= 0) problems.push(`[${LORA_RULE}] ${at}.name "${a.name}" and lora.adapters[${other}].name would share the folder ${ADAPTERS_DIR}/${adapterDir(a.name)}`);
  });
  const preloaded = lora.adapters.filter((a) => a.preload).length;
  if (preloaded > lora.maxLoras) {
    problems.push(`[${LORA_RULE}] model.yaml lora.maxLoras ${lora.maxLoras} is below the ${preloaded} adapters with preload: true (vLLM --max-loras: the adapters one batch holds)`);
  }
  // Preloaded adapters are never unloaded: with every slot theirs, an on-demand one waits out the queue and gets 429.
  const onDemand = lora.adapters.length - preloaded;
  if (onDemand > 0 && preloaded >= lora.maxLoras) {
    const [them, they] = onDemand === 1 ? ["the 1 on-demand adapter", "it"] : [`the ${onDemand} on-demand adapters`, "them"];
    const holders = preloaded === 1 ? "the 1 adapter with preload: true holds every slot of a replica and is" : `the ${preloaded} adapters with preload: true hold every slot of a replica and are`;
    problems.push(
      `[${LORA_RULE}] model.yaml lora.maxLoras ${lora.maxLoras} leaves no slot for ${them}: ${holders} never unloaded, so requests for ${they} would wait and get 429 (raise maxLoras to at least ${preloaded + 1}, or preload ${they} with maxLoras ${preloaded + onDemand})`,
    );
  }
  if (vllm && weightsSource(ms.modelArtifacts.uri).kind === "volume") {
    problems.push(`[${LORA_RULE}] adapters are downloaded into the model's weights cache, which a ${ms.modelArtifacts.uri.split("://")[0]}:// model has none of: serve hf:// or s3:// weights`);
  }
  const ext = (pool as { inferenceExtension?: PickerValues }).inferenceExtension;
  const file = ext?.pluginsConfigFile ?? DEFAULT_PLUGINS.file;
  if (ext?.latencyPredictor?.enabled === true && file === DEFAULT_PLUGINS.file) {
    problems.push(`[${LORA_RULE}] the pool's inferenceExtension.latencyPredictor makes ${DEFAULT_PLUGINS.file} score by predicted latency only: name a pluginsConfigFile of your own that also scores with ${LORA_AFFINITY_SCORER.type}`);
  } else if (file !== DEFAULT_PLUGINS.file && !scoresLora(ext?.pluginsCustomConfig?.[file])) {
    problems.push(`[${LORA_RULE}] the pool's inferenceExtension.pluginsConfigFile ${file} does not score with ${LORA_AFFINITY_SCORER.type}: add it to a scheduling profile, or use ${DEFAULT_PLUGINS.file} (the platform then adds it)`);
  }
  const metric = ext?.flags?.[LORA_AFFINITY_SCORER.metricFlag];
  const expected = PICKER_METRIC_FLAGS.defaults[LORA_AFFINITY_SCORER.metricFlag];
  if (metric !== undefined && metricSpecName(String(metric)) !== expected) {
    problems.push(`[${LORA_RULE}] the pool's inferenceExtension.flags.${LORA_AFFINITY_SCORER.metricFlag} is "${String(metric)}": the picker would not see which adapters a pod holds (${expected})`);
  }
  return problems;
}

/** The smallest rank vLLM accepts for --max-lora-rank that holds `rank`. */
function nextRank(rank: number): number {
  return VLLM_LORA.ranks.find((r) => r >= rank) ?? Math.max(...VLLM_LORA.ranks);
}
