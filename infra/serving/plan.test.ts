// What a model needs from the stack before anything is deployed: each problem names the model folder and the field.
import { checkModelNeeds, planModels } from "./plan";
import { LoraSchema } from "./folder-schemas";
import { loadModelFolders } from "./model-folders";

const folders = loadModelFolders();
const plan = (refs: string[], replicas: Record<string, number> = {}) => planModels(refs, replicas, folders, "deployments/models");
const ok = { hasHfToken: true, hasS3: true, cacheAccessMode: "ReadWriteMany" as const };

describe("model needs", () => {
  test("a gated model without serving:hfToken fails, naming the folder and weights.gated", () => {
    expect(checkModelNeeds(plan(["generative/llama-3.3-70b"]), { ...ok, hasHfToken: false })).toEqual([
      "deployments/models/generative/llama-3.3-70b: model.yaml weights.gated is true but serving:hfToken is not set (pulumi config set --secret serving:hfToken …): the download would be refused",
    ]);
    expect(checkModelNeeds(plan(["generative/qwen3-8b"]), { ...ok, hasHfToken: false })).toEqual([]);
    expect(checkModelNeeds(plan(["generative/llama-3.3-70b"]), ok)).toEqual([]);
  });

  test("an s3:// adapter without serving:weightsS3 fails, naming the folder and the adapter's source", () => {
    const [qwen] = plan(["generative/qwen3-8b"]);
    const lora = LoraSchema.parse({ adapters: [{ name: "a", source: "hf://o/a", rank: 8 }, { name: "b", source: "s3://models/adapters/b", rank: 8 }] });
    const withS3 = [{ ...qwen!, def: { ...qwen!.def, lora } }];
    expect(checkModelNeeds(withS3, { ...ok, hasS3: false })).toEqual([
      "deployments/models/generative/qwen3-8b: model.yaml lora.adapters[1].source is s3:// but serving:weightsS3 is not set (the object store to download from)",
    ]);
    expect(checkModelNeeds(withS3, ok)).toEqual([]);
    expect(checkModelNeeds([qwen!], { ...ok, hasS3: false })).toEqual([]);
  });

  test("several replicas on a ReadWriteOnce cache fail; one replica passes", () => {
    const rwo = { ...ok, cacheAccessMode: "ReadWriteOnce" as const };
    expect(checkModelNeeds(plan(["generative/qwen3-8b"], { "generative/qwen3-8b": 2 }), rwo)[0]).toMatch(
      /^deployments\/models\/generative\/qwen3-8b: 2 replicas on a ReadWriteOnce weights cache \(serving:weightsCache\.accessMode\)/,
    );
    expect(checkModelNeeds(plan(["generative/qwen3-8b"]), rwo)).toEqual([]);
    // The simulator loads nothing: no cache, no constraint.
    expect(checkModelNeeds(plan(["generative/sim-chat"], { "generative/sim-chat": 3 }), rwo)).toEqual([]);
  });
});
