// GPU preflight: per node group, replicas × GPUs per replica of the referenced models must fit serving:gpuCapacity.
import { loadModelFolders } from "./model-folders";
import { assertGpuCapacity, checkGpuCapacity, GpuCapacityError, gpuUsage } from "./gpu-preflight";
import { planModels } from "./plan";
import { SAMPLE_REFS } from "./testing";
import { ConfigError } from "../platform/config";

const folders = loadModelFolders();
const plan = (replicas: Record<string, number> = {}, refs: readonly string[] = SAMPLE_REFS) => planModels(refs, replicas, folders, "deployments/models");

describe("GPU preflight", () => {
  test("passes at exactly capacity", () => {
    expect(checkGpuCapacity(plan({ "generative/qwen3-8b": 3 }), { default: 3, "gpu-small": 1 })).toEqual([]);
    expect(() => assertGpuCapacity(plan(), { default: 1, "gpu-small": 1 })).not.toThrow();
  });

  test("fails one GPU over, naming the node group, the models and the numbers", () => {
    const problems = checkGpuCapacity(plan({ "generative/qwen3-8b": 3 }), { default: 2, "gpu-small": 1 });
    expect(problems).toEqual(['node group "default": 3 GPUs requested > capacity 2: generative/qwen3-8b 3 replicas × 1 GPU = 3']);
    expect(() => assertGpuCapacity(plan({ "generative/qwen3-8b": 3 }), { default: 2, "gpu-small": 1 })).toThrow(GpuCapacityError);
  });

  test("the message tells how to swap, and a node group without capacity counts as 0", () => {
    let message = "";
    try {
      assertGpuCapacity(plan(), { default: 1 });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('node group "gpu-small": 1 GPUs requested > capacity 0 (no serving:gpuCapacity.gpu-small entry): embedder/bge-small-en 1 replica × 1 GPU = 1');
    expect(message).toContain('name the pair in serving:replaces ({"<incoming>": "<outgoing>"})');
  });

  test("the simulator needs no GPU: it is never counted", () => {
    expect(gpuUsage(plan({ "generative/sim-chat": 50 }), {}).map((u) => u.pool)).toEqual(["default", "gpu-small"]);
    expect(checkGpuCapacity(plan({}, ["generative/sim-chat"]), {})).toEqual([]);
  });

  test("swap procedure: two models on a one-GPU node fail; old at 0 replicas passes; then the old one can go", () => {
    // A second 1-GPU model for the same on-prem GPU, as an operator would add it.
    const replacement = { ...folders.find((f) => f.ref === "generative/qwen3-8b")!, ref: "generative/qwen3-8b-new", id: "qwen3-8b-new", slug: "qwen3-8b-new" };
    const withNew = [...folders, replacement];
    const refs = ["generative/qwen3-8b", "generative/qwen3-8b-new"];
    const cap = { default: 1 };
    expect(checkGpuCapacity(planModels(refs, {}, withNew, "x"), cap)[0]).toMatch(/2 GPUs requested > capacity 1: generative\/qwen3-8b 1 replica × 1 GPU = 1, generative\/qwen3-8b-new 1 replica × 1 GPU = 1/);
    // Step 1 (`pulumi up`): old model at zero replicas. Step 2: both referenced, old still at zero.
    expect(checkGpuCapacity(planModels(["generative/qwen3-8b"], { "generative/qwen3-8b": 0 }, withNew, "x"), cap)).toEqual([]);
    expect(checkGpuCapacity(planModels(refs, { "generative/qwen3-8b": 0 }, withNew, "x"), cap)).toEqual([]);
    // Or both steps in one apply: serving:replaces puts the outgoing model at zero.
    const swap = planModels(refs, {}, withNew, "x", { "generative/qwen3-8b-new": "generative/qwen3-8b" });
    expect(checkGpuCapacity(swap, cap)).toEqual([]);
    expect(swap.map((m) => [m.def.ref, m.replicas, m.replaced, m.replaces])).toEqual([
      ["generative/qwen3-8b", 0, true, undefined],
      ["generative/qwen3-8b-new", 1, false, "generative/qwen3-8b"],
    ]);
  });

  test("a reference without a folder is a configuration error naming the key", () => {
    expect(() => plan({}, ["generative/qwen3-8b", "generative/nope"])).toThrow(ConfigError);
    expect(() => plan({}, ["generative/nope"])).toThrow(/serving:models \[0\]: no model folder deployments\/models\/generative\/nope/);
  });
});
