// The exported catalog is exactly what the gateway's own loader accepts.
import { parse } from "yaml";
import { CatalogSchema } from "../../gateway/src/config/catalog";
import { parseCatalog } from "../../gateway/src/config/load-catalog";
import { buildCatalog, catalogYaml, replicaServiceHost } from "./catalog";
import { loadModelFolders } from "./model-folders";
import { planModels } from "./plan";
import { SAMPLE_REFS } from "./testing";

const folders = loadModelFolders();
const planned = planModels(SAMPLE_REFS, {}, folders, "deployments/models");

describe("catalog", () => {
  test("dns mode: each model's headless Service, id/category/owner/concurrency from the folders; parses with CatalogSchema", () => {
    const catalog = buildCatalog(planned, { namespace: "app-serving", clusterDomain: "cluster.local" });
    const parsed = CatalogSchema.parse(catalog);
    expect(parsed.models.map((m) => [m.id, m.category, m.ownedBy, m.maxConcurrency])).toEqual([
      ["qwen3-8b", "generative", "ai-platform", 32],
      ["sim-chat", "generative", "ai-platform", 16],
      ["bge-small-en-v1.5", "embedder", "ai-platform", 64],
    ]);
    expect(parsed.models[0]?.upstream).toEqual({ mode: "dns", host: "model-qwen3-8b.app-serving.svc.cluster.local", port: 8000, scheme: "http", refreshIntervalMs: 5000 });
    expect(replicaServiceHost("x", "ns", "cluster.local")).toBe("model-x.ns.svc.cluster.local");
    expect(replicaServiceHost("x", "ns", "corp.internal")).toBe("model-x.ns.svc.corp.internal");
  });

  test("pool mode: one URL per generative model behind the inference gateway, ready while its headless Service has an address; embedders stay dns", () => {
    const catalog = buildCatalog(planned, { namespace: "app-serving", clusterDomain: "cluster.local", inferenceGatewayUrl: "http://igw.gateway-system.svc.cluster.local" });
    const readiness = (slug: string) => ({ host: `model-${slug}.app-serving.svc.cluster.local`, port: 8000, refreshIntervalMs: 5000 });
    expect(CatalogSchema.parse(catalog).models.map((m) => m.upstream)).toEqual([
      { mode: "pool", url: "http://igw.gateway-system.svc.cluster.local/qwen3-8b", readiness: readiness("qwen3-8b") },
      { mode: "pool", url: "http://igw.gateway-system.svc.cluster.local/sim-chat", readiness: readiness("sim-chat") },
      { mode: "dns", scheme: "http", ...readiness("bge-small-en") },
    ]);
  });

  test("the gateway's schema refuses an embedder in pool mode", () => {
    const catalog = buildCatalog(planned, { namespace: "app-serving", clusterDomain: "cluster.local" });
    const bad = { models: catalog.models.map((m) => (m.category === "embedder" ? { ...m, upstream: { mode: "pool" as const, url: "http://igw/bge" } } : m)) };
    expect(CatalogSchema.safeParse(bad).error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["models.2.upstream.mode", "an embedder is reached in dns or endpoints mode: an InferencePool's endpoint picker does not parse embeddings requests"],
    ]);
  });

  test("each model's adapters, from its model.yaml: ids clients send, the path its server loads from, and how; in dns and pool mode alike", () => {
    for (const inferenceGatewayUrl of [undefined, "http://igw.gateway-system.svc.cluster.local"]) {
      const parsed = CatalogSchema.parse(buildCatalog(planned, { namespace: "app-serving", clusterDomain: "cluster.local", inferenceGatewayUrl }));
      expect(parsed.models.map((m) => [m.id, m.lora])).toEqual([
        ["qwen3-8b", { maxLoras: 2, adapters: [{ id: "qwen3-8b-tool-use", path: "/model-cache/lora-adapters/qwen3-8b-tool-use", loading: "on-demand" }] }],
        ["sim-chat", { maxLoras: 1, adapters: [{ id: "sim-chat-adapter", path: "/model-cache/lora-adapters/sim-chat-adapter", loading: "on-demand" }] }],
        ["bge-small-en-v1.5", undefined],
      ]);
    }
  });

  test("the YAML string is a catalog file the gateway loads", () => {
    const catalog = buildCatalog(planned, { namespace: "app-serving", clusterDomain: "cluster.local" });
    expect(parseCatalog(parse(catalogYaml(catalog)), "serving").models.map((m) => m.id)).toEqual(["qwen3-8b", "sim-chat", "bge-small-en-v1.5"]);
  });

  test("a catalog the gateway would reject is refused at build time", () => {
    const dup = [...planned, { ...planned[0]!, def: { ...planned[0]!.def, ref: "generative/copy" } }];
    expect(() => buildCatalog(dup, { namespace: "app-serving", clusterDomain: "cluster.local" })).toThrow(/does not match the gateway's CatalogSchema.*duplicate model id "qwen3-8b"/s);
  });
});
