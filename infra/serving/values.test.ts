// Values builders: what the platform adds to each folder's chart values, and the objects declared beside them.
import { validateAnyObject } from "../platform/crd-validate";
import { loadModelFolders, type ModelDefinition } from "./model-folders";
import { buildHttpRoute, buildInferencePoolValues, buildModelServerValues, buildReplicaService, nodePlacement } from "./values";
import type { YamlDoc } from "./testing";

const D = "ai-platform.io";
const models = loadModelFolders();
const get = (ref: string): ModelDefinition => {
  const m = models.find((x) => x.ref === ref);
  if (!m) throw new Error(ref);
  return m;
};
const qwen = get("generative/qwen3-8b");
const bge = get("embedder/bge-small-en");
const sim = get("generative/sim-chat");

describe("model-server values", () => {
  test("platform labels merged into the pod labels, keeping the folder's (the pool selects on those)", () => {
    const v = buildModelServerValues(bge, { labelDomain: D, replicas: 1 }) as YamlDoc;
    expect(v.modelArtifacts.labels).toEqual({
      "llm-d.ai/inference-serving": "true",
      "llm-d.ai/model": "bge-small-en",
      "ai-platform.io/platform": "ai-platform",
      "ai-platform.io/model-slug": "bge-small-en",
      "ai-platform.io/model-category": "embedder",
      "ai-platform.io/nodegroup": "gpu-small",
      "app.kubernetes.io/part-of": "app-serving",
    });
  });

  test("on-prem GPU model: selects workload=gpu, carries no nodegroup label, tolerates the GPU taint", () => {
    const v = buildModelServerValues(qwen, { labelDomain: D, replicas: 1 }) as YamlDoc;
    expect(Object.keys(v.modelArtifacts.labels)).not.toContain("ai-platform.io/nodegroup");
    expect(v.decode.nodeSelector).toEqual({ workload: "gpu" });
    expect(v.decode.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
  });

  test("node group model selects its group; the simulator runs anywhere", () => {
    expect(nodePlacement(bge, D)).toEqual({ nodeSelector: { "ai-platform.io/nodegroup": "gpu-small" }, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] });
    const v = buildModelServerValues(sim, { labelDomain: D, replicas: 2 }) as YamlDoc;
    expect(v.decode.nodeSelector).toBeUndefined();
    expect(v.decode.tolerations).toBeUndefined();
  });

  test("replicas override and internal registry (HF_ENDPOINT) only where weights are downloaded", () => {
    const v = buildModelServerValues(qwen, { labelDomain: D, replicas: 0, modelRegistryUrl: "https://models.internal/hf" }) as YamlDoc;
    expect(v.decode.replicas).toBe(0);
    expect(v.decode.containers[0].env).toEqual([{ name: "HF_ENDPOINT", value: "https://models.internal/hf" }]);
    const s = buildModelServerValues(sim, { labelDomain: D, replicas: 2, modelRegistryUrl: "https://models.internal/hf" }) as YamlDoc;
    expect(s.decode.containers[0].env).toBeUndefined();
  });

  test("the folder's values are not mutated, and chart keys the platform does not know pass through", () => {
    const before = JSON.stringify(qwen.serverValues);
    const v = buildModelServerValues(qwen, { labelDomain: D, replicas: 5 }) as YamlDoc;
    expect(JSON.stringify(qwen.serverValues)).toBe(before);
    expect(v.decode.volumes.map((x: { name: string }) => x.name)).toEqual(["metrics-volume", "torch-compile-cache", "shm"]);
    expect(v.modelArtifacts.size).toBe("20Gi");
  });
});

describe("InferencePool values", () => {
  test("the pool selector is narrowed to the model's slug; the folder's entries stay", () => {
    const v = buildInferencePoolValues(qwen, { labelDomain: D, namespace: "app-serving", clusterDomain: "cluster.local" }) as YamlDoc;
    expect(v.inferencePool.modelServers.matchLabels).toEqual({ "llm-d.ai/inference-serving": "true", "llm-d.ai/model": "qwen3-8b", "ai-platform.io/model-slug": "qwen3-8b" });
    expect(v.provider).toBeUndefined();
    // The narrowed selector still matches the pods (labels ⊇ selector after the merge).
    const labels = (buildModelServerValues(qwen, { labelDomain: D, replicas: 1 }) as YamlDoc).modelArtifacts.labels;
    for (const [k, val] of Object.entries(v.inferencePool.modelServers.matchLabels)) expect(labels[k]).toBe(val);
  });

  test("istio provider gets the EPP DestinationRule host, as in the llm-d helmfiles", () => {
    const v = buildInferencePoolValues(qwen, { labelDomain: D, namespace: "llm", clusterDomain: "cluster.local", gatewayProvider: "istio" }) as YamlDoc;
    expect(v.provider).toEqual({ name: "istio", istio: { destinationRule: { host: "gaie-qwen3-8b-epp.llm.svc.cluster.local" } } });
    expect((buildInferencePoolValues(qwen, { labelDomain: D, namespace: "llm", clusterDomain: "cluster.local", gatewayProvider: "gke" }) as YamlDoc).provider).toEqual({ name: "gke" });
  });
});

describe("replica Service and HTTPRoute", () => {
  test("headless Service selects the model's decode pods on the serving port and is a valid Service", () => {
    const svc = buildReplicaService(qwen, "app-serving", D) as YamlDoc;
    expect(() => validateAnyObject(svc)).not.toThrow();
    expect(svc.metadata).toMatchObject({ name: "model-qwen3-8b", namespace: "app-serving" });
    expect(svc.spec).toEqual({
      clusterIP: "None",
      publishNotReadyAddresses: false,
      selector: { "ai-platform.io/platform": "ai-platform", "ai-platform.io/model-slug": "qwen3-8b", "llm-d.ai/role": "decode" },
      ports: [{ name: "http", protocol: "TCP", port: 8000, targetPort: 8000 }],
    });
  });

  test("HTTPRoute: parent Gateway, /<slug> prefix rewritten to /, backend the InferencePool; valid per the Gateway API schema", () => {
    const route = buildHttpRoute(qwen, "app-serving", D, { name: "inference-gateway", namespace: "gateway-system" }) as YamlDoc;
    expect(() => validateAnyObject(route)).not.toThrow();
    expect(route.spec.parentRefs).toEqual([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "inference-gateway", namespace: "gateway-system" }]);
    expect(route.spec.rules[0]).toMatchObject({
      matches: [{ path: { type: "PathPrefix", value: "/qwen3-8b" } }],
      filters: [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } }],
      backendRefs: [{ group: "inference.networking.k8s.io", kind: "InferencePool", name: "gaie-qwen3-8b", port: 8000 }],
    });
  });

  test("the HTTPRoute schema rejects what the Gateway API would", () => {
    const route = buildHttpRoute(qwen, "app-serving", D, { name: "gw" }) as YamlDoc;
    route.spec.rules[0].backendRefs[0].kind = "Deployment";
    expect(() => validateAnyObject(route)).toThrow(/HTTPRoute model-qwen3-8b is not a valid gateway\.networking\.k8s\.io\/v1\/HTTPRoute: spec\.rules\.0\.backendRefs\.0/);
    expect(() => validateAnyObject({ apiVersion: "example.com/v1", kind: "Widget" })).toThrow(/no schema known/);
  });
});
