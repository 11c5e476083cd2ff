// The folder's `local.scaleToZero` as the local fleet reads it: its defaults, its limits, and the fleet's mapping.
import { ModelMetadataSchema } from "../infra/serving/folder-schemas";
import type { ModelDefinition } from "../infra/serving/model-folders";
import { DEFAULT_MODELS_DIR } from "../infra/serving/constants";
import { loadModelFolders } from "../infra/serving/model-folders";
import { localModelFromFolder, localScaleToZero } from "./fleet";

describe("local.scaleToZero", () => {
  test("an empty block turns it on with the defaults (5 s load, 1 min idle)", () => {
    expect(ModelMetadataSchema.parse({ local: { scaleToZero: {} } }).local?.scaleToZero).toEqual({ loadMs: 5000, idleStopMs: 60_000 });
  });

  test("a value out of range or a misspelt key is refused, naming it", () => {
    const tooShort = ModelMetadataSchema.safeParse({ local: { scaleToZero: { idleStopMs: 10 } } });
    expect(tooShort.success).toBe(false);
    expect(tooShort.error?.issues[0]?.path).toEqual(["local", "scaleToZero", "idleStopMs"]);
    const misspelt = ModelMetadataSchema.safeParse({ local: { scaleToZero: { loadMS: 100 } } });
    expect(misspelt.error?.issues[0]?.message).toContain("loadMS");
  });

  test("the fleet maps it only when the folder sets it", () => {
    const def = (local: ModelDefinition["local"]) => ({ local }) as ModelDefinition;
    expect(localScaleToZero(def({ scaleToZero: { loadMs: 800, idleStopMs: 2000 } }))).toEqual({ scaleToZero: { loadMs: 800, idleStopMs: 2000 } });
    expect(localScaleToZero(def({}))).toEqual({});
  });
});

describe("adapters", () => {
  test("sim-chat serves its example adapter on demand: the catalog's lora block and the simulator's LoRA settings", () => {
    const simChat = localModelFromFolder(loadModelFolders(DEFAULT_MODELS_DIR).find((d) => d.id === "sim-chat")!);
    expect(simChat.lora?.adapters).toEqual([{ id: "sim-chat-adapter", path: "/model-cache/lora-adapters/sim-chat-adapter", loading: "on-demand" }]);
    expect(simChat.simulator.lora).toEqual({ enabled: true, maxLoras: simChat.lora!.maxLoras, runtimeUpdating: true, modules: [] });
  });
});
