import type { CatalogInput } from "../../gateway/src/config/catalog";
import { closeMatches, keyModelProblems, servedNames } from "./key-models";

const upstream = (slug: string) => ({ mode: "dns" as const, host: `${slug}.app-serving.svc.cluster.local`, port: 8000 });

/** The production example's catalog: Qwen3-8B with its shipped adapter, the embedder, and an alias. */
const CATALOG: CatalogInput = {
  models: [
    { id: "qwen3-8b", category: "generative", upstream: upstream("qwen3-8b"), lora: { maxLoras: 2, adapters: [{ id: "qwen3-8b-tool-use", path: "/model-cache/lora-adapters/qwen3-8b-tool-use", loading: "on-demand" }] } },
    { id: "bge-small-en-v1.5", category: "embedder", upstream: upstream("bge-small-en") },
  ],
  aliases: [{ id: "chat", models: ["qwen3-8b"] }],
};

describe("keys' model lists against the catalog", () => {
  test("model ids, adapters and aliases are names a key may list", () => {
    expect(servedNames(CATALOG)).toEqual(["qwen3-8b", "qwen3-8b-tool-use", "bge-small-en-v1.5", "chat"]);
    expect(keyModelProblems([{ name: "team-a", models: ["qwen3-8b", "qwen3-8b-tool-use", "bge-small-en-v1.5", "chat"] }, { name: "dev" }], CATALOG)).toEqual([]);
  });

  test.each([
    ["a folder name for the embedder's id", "bge-small-en", `; did you mean "bge-small-en-v1.5"?`],
    ["a typo", "qwen3-8d", `; did you mean "qwen3-8b"?`],
    ["another case", "Qwen3-8B-Tool-Use", `; did you mean "qwen3-8b-tool-use"?`],
    ["a removed model, nothing like it", "llama-3.3-70b-instruct", ` (it serves "qwen3-8b", "qwen3-8b-tool-use", "bge-small-en-v1.5", "chat")`],
  ])("%s fails naming gateway:apiKeys, the key, the name and what it may have meant", (_, name, hint) => {
    const keys = [{ name: "dev" }, { name: "team-a", models: ["qwen3-8b", name] }];
    expect(keyModelProblems(keys, CATALOG)).toEqual([`gateway:apiKeys [1.models.1]: key "team-a" names "${name}", which is not a model, adapter or alias of the catalog${hint}`]);
  });

  test("every unknown name of every key is named at once; a catalog from another stack is named as such", () => {
    const keys = [{ name: "a", models: ["bge-small"] }, { name: "b", models: ["qwen3", "chat"] }];
    const problems = keyModelProblems(keys, CATALOG, "gateway:servingStack acme/ai-platform/serving-prod");
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^gateway:apiKeys \[0\.models\.0\]: key "a" names "bge-small", which is not a model, adapter or alias of the catalog of gateway:servingStack acme\/ai-platform\/serving-prod; did you mean "bge-small-en-v1\.5"\?$/);
    // Containment ranks by distance: the model before its adapter.
    expect(problems[1]).toContain(`key "b" names "qwen3"`);
    expect(problems[1]).toContain(`did you mean "qwen3-8b", "qwen3-8b-tool-use"?`);
    expect(keyModelProblems([{ name: "a", models: ["x"] }], { models: [] })).toEqual([`gateway:apiKeys [0.models.0]: key "a" names "x", which is not a model, adapter or alias of the catalog (it serves nothing)`]);
  });

  test("close matches: containment of three characters or more, or edits within a third of the longer name", () => {
    expect(closeMatches("qwen3-14b", ["qwen3-8b", "bge-m3"])).toEqual(["qwen3-8b"]);
    expect(closeMatches("m3", ["bge-m3"])).toEqual([]);
    expect(closeMatches("gpt-4o", ["qwen3-8b", "bge-small-en-v1.5", "chat"])).toEqual([]);
  });
});
