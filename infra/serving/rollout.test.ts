// Rollouts: a model surges only into GPUs that are spare after every referenced model; otherwise it is recreated.
// withRollout is applied to the chart's real Deployments in infra/serving/chart-render.test.ts.
import { loadModelFolders } from "./model-folders";
import { planModels } from "./plan";
import { deploymentStrategy, planRollouts, surgeGpus, withRollout } from "./rollout";

const folders = loadModelFolders();
const refs = ["generative/llama-3.3-70b", "generative/qwen3-8b", "generative/sim-chat", "embedder/bge-small-en"];
const plan = (replicas: Record<string, number> = {}) => planModels(refs, replicas, folders, "deployments/models");
const rollouts = (capacity: Record<string, number>, accessMode: "ReadWriteMany" | "ReadWriteOnce" = "ReadWriteMany", replicas: Record<string, number> = {}) => {
  const models = plan(replicas);
  return Object.fromEntries(planRollouts(models, { capacity, cacheAccessMode: accessMode, cached: new Set(refs) }));
};

describe("rollout plan", () => {
  test("a full pool recreates every GPU model; a model without GPUs keeps the surge", () => {
    const r = rollouts({ default: 5, "gpu-small": 1 });
    expect(r["generative/llama-3.3-70b"]).toEqual({ type: "Recreate", reason: 'node group "default" has no 4 spare GPUs for a surge pod' });
    expect(r["generative/qwen3-8b"]).toEqual({ type: "Recreate", reason: 'node group "default" has no 1 spare GPU for a surge pod' });
    expect(r["embedder/bge-small-en"]?.type).toBe("Recreate");
    expect(r["generative/sim-chat"]).toEqual({ type: "RollingUpdate", surgeGpus: 0 });
  });

  test("spare GPUs go to the first models in serving:models order, each surge counted once", () => {
    // 1 spare on default: not enough for the 70B's 4, enough for the 8B's 1.
    expect(rollouts({ default: 6, "gpu-small": 1 })).toMatchObject({ "generative/llama-3.3-70b": { type: "Recreate" }, "generative/qwen3-8b": { type: "RollingUpdate", surgeGpus: 1 } });
    // 5 spare: the 70B takes 4, the 8B the 5th.
    expect(rollouts({ default: 10, "gpu-small": 2 })).toMatchObject({
      "generative/llama-3.3-70b": { type: "RollingUpdate", surgeGpus: 4 },
      "generative/qwen3-8b": { type: "RollingUpdate", surgeGpus: 1 },
      "embedder/bge-small-en": { type: "RollingUpdate", surgeGpus: 1 },
    });
    // 4 spare: the 70B takes all of them, the 8B recreates.
    expect(rollouts({ default: 9, "gpu-small": 1 })).toMatchObject({ "generative/llama-3.3-70b": { type: "RollingUpdate" }, "generative/qwen3-8b": { type: "Recreate" } });
  });

  test("a model at zero replicas frees its GPUs for the others' surges", () => {
    expect(rollouts({ default: 5, "gpu-small": 1 }, "ReadWriteMany", { "generative/llama-3.3-70b": 0 })["generative/qwen3-8b"]).toEqual({ type: "RollingUpdate", surgeGpus: 1 });
  });

  test("a ReadWriteOnce cache always recreates: a surge pod on another node could not mount it", () => {
    expect(rollouts({ default: 100, "gpu-small": 10 }, "ReadWriteOnce")["generative/qwen3-8b"]).toEqual({ type: "Recreate", reason: "its ReadWriteOnce weights volume attaches to one node" });
  });

  test("surge counts a prefill pod too", () => {
    const qwen = plan().find((m) => m.def.ref === "generative/qwen3-8b")!;
    const pd = { ...qwen, def: { ...qwen.def, gpus: { ...qwen.def.gpus, prefillReplicas: 2, perPrefillReplica: 1 } } };
    expect(surgeGpus(pd)).toBe(2);
  });
});

describe("strategy on the rendered Deployments", () => {
  const deployment = { apiVersion: "apps/v1", kind: "Deployment", spec: { replicas: 1, selector: {}, template: {} } };
  test("Recreate, or one surge pod without dropping below the replicas", () => {
    expect((withRollout(deployment, { type: "Recreate", reason: "x" }).spec as Record<string, unknown>).strategy).toEqual({ type: "Recreate" });
    expect(deploymentStrategy({ type: "RollingUpdate", surgeGpus: 1 })).toEqual({ type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  });
  test("other objects pass unchanged", () => {
    const sa = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "x" } };
    expect(withRollout(sa, { type: "Recreate", reason: "x" })).toBe(sa);
  });
});
