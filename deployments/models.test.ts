// The sample model folders as shipped: they load, and `npm start` serves the same model ids as the cluster catalog.
import { BUILT_IN_FLEET, localFleet, MAX_LOCAL_REPLICAS } from "../local/fleet";
import { buildCatalog } from "../infra/serving/catalog";
import { loadModelFolders } from "../infra/serving/model-folders";
import { planModels } from "../infra/serving/plan";
import { scratchModels } from "../infra/serving/testing";

const folders = loadModelFolders();

describe("deployments/models", () => {
  test("every folder loads; both categories and a GPU-less simulated model are present", () => {
    expect(folders.map((m) => m.category)).toEqual(expect.arrayContaining(["generative", "embedder"]));
    expect(folders.some((m) => m.gpus.perDecodeReplica === 0 && m.category === "generative")).toBe(true);
  });

  test("the local fleet lists exactly the ids of the catalog a stack referencing every folder exports", () => {
    const catalog = buildCatalog(planModels(folders.map((m) => m.ref), {}, folders, "deployments/models"), { namespace: "app-serving", clusterDomain: "cluster.local" });
    const fleet = localFleet();
    expect(fleet.map((m) => m.id)).toEqual(catalog.models.map((m) => m.id));
    expect(fleet.map((m) => [m.category, m.ownedBy, m.maxConcurrency])).toEqual(catalog.models.map((m) => [m.category, m.ownedBy, m.maxConcurrency]));
    // Their LoRA adapters too, as models of their own.
    expect(fleet.map((m) => m.lora)).toEqual(catalog.models.map((m) => m.lora));
    expect(fleet.flatMap((m) => m.lora?.adapters.map((a) => a.id) ?? [])).toEqual(expect.arrayContaining(["sim-chat-adapter"]));
    // The quickstart chats with the first model: it is generative.
    expect(fleet[0]?.category).toBe("generative");
  });

  test("local replicas follow the folder, capped; simulator flags become local latencies", () => {
    const fleet = Object.fromEntries(localFleet().map((m) => [m.id, m]));
    expect(fleet["sim-chat"]).toMatchObject({ replicas: 2, simulator: { toolCalling: true, maxNumSeqs: 16, latency: { timeToFirstTokenMs: 200, interTokenLatencyMs: 20 } } });
    expect(fleet["qwen3-8b"]).toMatchObject({ replicas: 1, simulator: { latency: { timeToFirstTokenMs: 30, interTokenLatencyMs: 12 } } });
    expect(fleet["bge-small-en-v1.5"]).toMatchObject({ category: "embedder", simulator: { embeddingDimensions: 384 } });
    // sim-chat shows npm start's model at zero; the others run from the start.
    expect(fleet["sim-chat"]?.scaleToZero).toEqual({ loadMs: 5000, idleStopMs: 60_000 });
    expect(Object.values(fleet).filter((m) => m.scaleToZero).map((m) => m.id)).toEqual(["sim-chat"]);
    for (const m of Object.values(fleet)) expect(m.replicas).toBeLessThanOrEqual(MAX_LOCAL_REPLICAS);
  });

  test("without any model folder, npm start falls back to the built-in fleet", () => {
    const { root, cleanup } = scratchModels(false);
    try {
      expect(localFleet(root)).toBe(BUILT_IN_FLEET);
    } finally {
      cleanup();
    }
  });
});
