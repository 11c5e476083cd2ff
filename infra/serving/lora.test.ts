// What a folder's adapters become: the model server's flags and environment (vLLM's and the pinned simulator's),
// the picker's configuration, and the catalog's entry, one name throughout.
import { parse } from "yaml";
import { CatalogModelSchema } from "../../gateway/src/config/catalog";
import { LoraSchema } from "./folder-schemas";
import { adapterPath, catalogLora, LORA_FLAGS, LORA_PICKER_WEIGHTS, LORA_PLUGINS_FILE, loraPickerConfig, loraServerArgs, loraServerEnv, withLoraPicker } from "./lora";
import { loadModelFolders } from "./model-folders";
import { DEFAULT_PLUGINS, LLMD_INFERENCE_SIM, LORA_AFFINITY_SCORER, VLLM_LORA } from "./model-server-facts";
import type { YamlDoc } from "./testing";

const lora = LoraSchema.parse({
  maxLoras: 2,
  maxLoraRank: 64,
  adapters: [
    { name: "qwen3-8b-sql", source: "hf://org/sql-lora", rank: 16, preload: true },
    { name: "team-a/support", source: "s3://models/adapters/support", rank: 64 },
  ],
});
const preloadOnly = LoraSchema.parse({ adapters: [{ name: "only", source: "hf://org/only", rank: 8, preload: true }] });

describe("model.yaml lora", () => {
  test("vLLM's defaults when unset: one adapter per batch, rank 16, loaded on demand", () => {
    expect(LoraSchema.parse({ adapters: [{ name: "a", rank: 8 }] })).toEqual({ maxLoras: VLLM_LORA.defaults.maxLoras, maxLoraRank: VLLM_LORA.defaults.maxLoraRank, adapters: [{ name: "a", rank: 8, preload: false }] });
    expect([VLLM_LORA.defaults.maxLoras, VLLM_LORA.defaults.maxLoraRank]).toEqual([1, 16]);
    expect(LoraSchema.safeParse({ adapters: [] }).error?.issues[0]?.message).toBe("declare at least one adapter");
    expect(LoraSchema.safeParse({ adapters: [{ name: "a", rank: 8, source: "pvc://x/y" }] }).success).toBe(false);
  });
});

describe("the model server's flags and environment", () => {
  test("vLLM: --enable-lora, the limits, and the preloaded adapters after one --lora-modules, as JSON with the served name as parent", () => {
    const args = loraServerArgs(lora, "qwen3-8b", true);
    expect(args.slice(0, 4)).toEqual(["--enable-lora", "--max-lora-rank=64", "--max-loras=2", "--lora-modules"]);
    expect(args.slice(4).map((a) => JSON.parse(a))).toEqual([{ name: "qwen3-8b-sql", path: "/model-cache/lora-adapters/qwen3-8b-sql", base_model_name: "qwen3-8b" }]);
    // vLLM's LoRAParserAction reads an item with "=" and no "," as the old name=path form: ours are JSON.
    for (const m of args.slice(4)) expect(m.includes(",")).toBe(true);
    // Nothing preloaded: no --lora-modules, whose list would be empty.
    expect(loraServerArgs({ ...lora, adapters: lora.adapters.map((a) => ({ ...a, preload: false })) }, "qwen3-8b", true)).not.toContain("--lora-modules");
  });

  test("the pinned simulator: only the flags it parses, and modules without a base_model_name (it wants its --model there)", () => {
    const args = loraServerArgs(lora, "sim-chat", false);
    expect(args.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0]).filter((f) => !LLMD_INFERENCE_SIM.flags.includes(f as string))).toEqual([]);
    expect(args.slice(args.indexOf("--lora-modules") + 1).map((a) => JSON.parse(a))).toEqual([{ name: "qwen3-8b-sql", path: adapterPath("qwen3-8b-sql") }]);
  });

  test("an adapter name with a slash is one folder of the cache", () => {
    expect(adapterPath("team-a/support")).toBe("/model-cache/lora-adapters/team-a--support");
  });

  test("runtime loading only with an on-demand adapter on vLLM, and then no Hub: loads read the cache", () => {
    expect(loraServerEnv(lora, true)).toEqual([
      { name: "VLLM_ALLOW_RUNTIME_LORA_UPDATING", value: "True" },
      { name: "HF_HUB_OFFLINE", value: "1" },
    ]);
    expect(loraServerEnv(preloadOnly, true)).toEqual([]);
    expect(loraServerEnv(lora, false)).toEqual([]);
    // vllm/envs.py takes "1" or "true" in any case.
    expect(["1", "true"]).toContain(VLLM_LORA.runtimeUpdating.value.toLowerCase());
  });

  test("the flags the platform passes are the ones a folder may not", () => {
    const passed = [...loraServerArgs(lora, "q", true), ...loraServerArgs(lora, "q", false)].filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]);
    expect(passed.filter((f) => !(LORA_FLAGS as readonly string[]).includes(f as string))).toEqual([]);
  });
});

describe("the picker and the catalog", () => {
  test("the picker's file: the chart's default scorers and weights, plus the LoRA scorer in the default profile", () => {
    const config = parse(loraPickerConfig()) as { kind: string; plugins: { type: string }[]; schedulingProfiles: { name: string; plugins: { pluginRef: string; weight: number }[] }[] };
    expect(config.kind).toBe("EndpointPickerConfig");
    expect(config.plugins.map((p) => p.type)).toEqual([...Object.keys(DEFAULT_PLUGINS.scorers), LORA_AFFINITY_SCORER.type]);
    expect(config.schedulingProfiles).toEqual([{ name: "default", plugins: Object.entries(LORA_PICKER_WEIGHTS).map(([pluginRef, weight]) => ({ pluginRef, weight })) }]);
  });

  test("a pool on the chart's default file gets the platform's; one with a file of its own keeps it", () => {
    const qwen = loadModelFolders().find((m) => m.ref === "generative/qwen3-8b")!;
    const ext = (withLoraPicker(qwen.poolValues) as YamlDoc).inferenceExtension;
    expect(ext.pluginsConfigFile).toBe(LORA_PLUGINS_FILE);
    expect(ext.pluginsCustomConfig).toEqual({ [LORA_PLUGINS_FILE]: loraPickerConfig() });
    expect(ext.flags).toEqual((qwen.poolValues as YamlDoc).inferenceExtension.flags);
    const own = { ...qwen.poolValues, inferenceExtension: { pluginsConfigFile: "mine.yaml", pluginsCustomConfig: { "mine.yaml": "x" } } };
    expect(withLoraPicker(own)).toBe(own);
  });

  test("the catalog's entry: each adapter's id, the path the server loads it from, and how; the gateway's schema takes it", () => {
    const entry = catalogLora(lora);
    expect(entry).toEqual({
      maxLoras: 2,
      adapters: [
        { id: "qwen3-8b-sql", path: "/model-cache/lora-adapters/qwen3-8b-sql", loading: "preload" },
        { id: "team-a/support", path: "/model-cache/lora-adapters/team-a--support", loading: "on-demand" },
      ],
    });
    expect(CatalogModelSchema.parse({ id: "qwen3-8b", category: "generative", upstream: { mode: "dns", host: "model-qwen3-8b.app-serving.svc.cluster.local", port: 8000 }, lora: entry }).lora).toEqual(entry);
  });
});
