// A model's LoRA adapters as the real pinned charts render them (a real `helm template`) with the values the program
// passes: vLLM's flags and environment for adapters loaded on demand (qwen3-8b's folder) and preloaded, the simulator's
// flags (sim-chat's folder), and the endpoint picker's configuration with the LoRA scorer, one name throughout.
// Needs the archives in charts/ or $AI_PLATFORM_CHARTS_DIR; without them the suite says so and skips.
import { parse } from "yaml";
import { describeWithCharts, helmTemplate, type Manifest } from "../platform/helm";
import { validateKubernetesObject } from "../platform/k8s-validate";
import { buildCatalog } from "./catalog";
import { PINNED_CHARTS } from "./constants";
import { LoraSchema } from "./folder-schemas";
import { LORA_PLUGINS_FILE, loraPickerConfig } from "./lora";
import { loadModelFolders, type ModelDefinition } from "./model-folders";
import { DEFAULT_PLUGINS, LLMD_INFERENCE_SIM, LORA_AFFINITY_SCORER } from "./model-server-facts";
import { planModels, type PlannedModel } from "./plan";
import { DEFAULT_STARTUP_TIMEOUT } from "./startup";
import { buildInferencePoolValues, poolReleaseName, serverValuesFor } from "./values";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const D = "ai-platform.io";
const NS = "app-serving";
const CHARTS = [
  { component: "llm-d-modelservice", version: PINNED_CHARTS["llm-d-modelservice"].version },
  { component: "inferencepool", version: PINNED_CHARTS.inferencepool.version },
];

describeWithCharts("LoRA adapters rendered by a real helm with the program's values", CHARTS, ({ helm, archive }) => {
  const [qwen, sim] = planModels(["generative/qwen3-8b", "generative/sim-chat"], {}, loadModelFolders(), "deployments/models") as [PlannedModel, PlannedModel];
  // qwen3-8b's adapter, preloaded, beside a second one loaded on demand.
  const preloaded: PlannedModel = {
    ...qwen,
    def: { ...qwen.def, lora: LoraSchema.parse({ maxLoras: 2, maxLoraRank: 64, adapters: [{ ...qwen.def.lora!.adapters[0], preload: true }, { name: "qwen3-8b-sql", source: "hf://org/sql", rank: 16 }] }) },
  };
  const preloadOnly: PlannedModel = { ...preloaded, def: { ...preloaded.def, lora: { ...preloaded.def.lora!, adapters: preloaded.def.lora!.adapters.slice(0, 1) } } };

  const server = (m: PlannedModel): Obj => {
    const values = serverValuesFor(m, { labelDomain: D, startupTimeout: DEFAULT_STARTUP_TIMEOUT, awaitModelServers: true, drainSeconds: 120 });
    const deployments = helmTemplate(helm, archive("llm-d-modelservice"), `ms-${m.def.slug}`, NS, values).filter((o) => o.kind === "Deployment") as Obj[];
    expect(deployments).toHaveLength(1);
    expect(() => validateKubernetesObject(deployments[0] as Manifest)).not.toThrow();
    return deployments[0]!.spec.template.spec.containers[0];
  };
  const env = (c: Obj): Record<string, unknown> => Object.fromEntries((c.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));
  /** What `--flag` is given, in either form the chart renders (`--flag value` or `--flag=value`). */
  const value = (args: string[], flag: string) => args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1) ?? args[args.indexOf(flag) + 1];
  /** The JSON objects after `--lora-modules`, up to the next flag: what vLLM's list argument and the simulator read. */
  const modules = (args: string[]) => {
    const at = args.indexOf("--lora-modules");
    if (at < 0) return [];
    const rest = args.slice(at + 1);
    const end = rest.findIndex((a) => a.startsWith("--"));
    return rest.slice(0, end < 0 ? undefined : end).map((a) => JSON.parse(a) as Obj);
  };

  test("on demand (qwen3-8b's folder): vLLM gets --enable-lora and its limits, no --lora-modules, and the runtime load routes without the Hub", () => {
    const c = server(qwen);
    expect(c.command).toEqual(["vllm", "serve"]);
    expect(c.args).toEqual(expect.arrayContaining(["--enable-lora", "--max-lora-rank=64", "--max-loras=2"]));
    expect(c.args).not.toContain("--lora-modules");
    expect(env(c)).toMatchObject({ VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True", HF_HUB_OFFLINE: "1" });
    // The adapters' folder is on the cache volume vLLM mounts.
    expect(c.volumeMounts).toContainEqual({ name: "model-storage", mountPath: "/model-cache" });
  });

  test("preloaded: every one after a single --lora-modules, its parent the name the chart serves the base as, the path the catalog names", () => {
    const c = server(preloaded);
    const served = value(c.args, "--served-model-name");
    expect(served).toBe("qwen3-8b");
    expect(c.args.filter((a: string) => a === "--lora-modules")).toHaveLength(1);
    const catalog = buildCatalog([preloaded], { namespace: NS, clusterDomain: "cluster.local" }).models[0]!.lora!;
    expect(modules(c.args)).toEqual(catalog.adapters.filter((a) => a.loading === "preload").map((a) => ({ name: a.id, path: a.path, base_model_name: served })));
    expect(env(c).VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBe("True");
    // Everything preloaded: no runtime loading at all.
    expect(env(server(preloadOnly)).VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBeUndefined();
  });

  test("the simulator (sim-chat's folder): every flag the chart and the platform pass is one the pinned simulator parses", () => {
    const withModule: PlannedModel = { ...sim, def: { ...sim.def, lora: { ...sim.def.lora!, adapters: [{ ...sim.def.lora!.adapters[0]!, preload: true }] } } };
    for (const m of [sim, withModule]) {
      const c = server(m);
      const flags = (c.args as string[]).filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0] as string);
      expect(flags.filter((f) => !LLMD_INFERENCE_SIM.flags.includes(f))).toEqual([]);
      expect(c.args).toContain("--max-loras=1");
      expect(env(c).VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBeUndefined();
    }
    // The simulator refuses a base_model_name other than its --model (`random`): none is given.
    const c = server(withModule);
    expect(value(c.args, "--model")).toBe("random");
    expect(modules(c.args)).toEqual([{ name: "sim-chat-adapter", path: "/model-cache/lora-adapters/sim-chat-adapter" }]);
  });

  test("the endpoint picker scores with the LoRA scorer: the chart's default scorers and weights plus it, on the metric it scrapes by default", () => {
    const def: ModelDefinition = qwen.def;
    const release = poolReleaseName(def.slug);
    const objects = helmTemplate(helm, archive("inferencepool"), release, NS, buildInferencePoolValues(def, { labelDomain: D, namespace: NS, clusterDomain: "cluster.local" })) as Obj[];
    const config = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === `${release}-epp`);
    expect(config?.data[LORA_PLUGINS_FILE]).toBe(loraPickerConfig());
    const epp = objects.find((o) => o.kind === "Deployment")!;
    const args = epp.spec.template.spec.containers[0].args as string[];
    expect(value(args, "--config-file")).toBe(`/config/${LORA_PLUGINS_FILE}`);
    expect(args).not.toContain(`--${LORA_AFFINITY_SCORER.metricFlag}`);
    // Ours is the chart's own default file with one scorer more: same plugins, same weights.
    type Config = { plugins: { type: string }[]; schedulingProfiles: { name: string; plugins: { pluginRef: string; weight?: number }[] }[] };
    const chart = parse(config!.data[DEFAULT_PLUGINS.file]) as Config;
    const ours = parse(config!.data[LORA_PLUGINS_FILE]) as Config;
    expect(ours.plugins.filter((p) => p.type !== LORA_AFFINITY_SCORER.type)).toEqual(chart.plugins);
    expect(ours.schedulingProfiles[0]!.plugins.filter((p) => p.pluginRef !== LORA_AFFINITY_SCORER.type)).toEqual(chart.schedulingProfiles[0]!.plugins);
    // A model without adapters keeps the chart's default file.
    const embedder = loadModelFolders().find((m) => m.ref === "embedder/bge-small-en")!;
    const plain = helmTemplate(helm, archive("inferencepool"), "gaie-bge-small-en", NS, buildInferencePoolValues(embedder, { labelDomain: D, namespace: NS, clusterDomain: "cluster.local" })) as Obj[];
    expect(value(plain.find((o) => o.kind === "Deployment")!.spec.template.spec.containers[0].args, "--config-file")).toBe(`/config/${DEFAULT_PLUGINS.file}`);
  });
});
