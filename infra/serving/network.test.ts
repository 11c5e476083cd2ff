// The model servers' NetworkPolicy admits only the gateway, the endpoint pickers, the inference gateway, the metrics
// server and model servers themselves; it is a valid NetworkPolicy by the Kubernetes schema.
import { validateKubernetesObject } from "../platform/k8s-validate";
import { buildModelServerPolicy } from "./network";

const D = "ai-platform.io";
type Peer = { namespaceSelector?: { matchLabels: Record<string, string> }; podSelector: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } };

describe("model-server NetworkPolicy", () => {
  const policy = buildModelServerPolicy({
    namespace: "app-serving",
    labelDomain: D,
    gateway: { namespace: "ai-gateway", podLabels: { "app.kubernetes.io/name": "gateway" } },
    monitoringNamespace: "monitoring",
    inferenceGatewayNamespace: "gateway-system",
    pools: ["gaie-qwen3-8b", "gaie-bge-small-en"],
  }) as { spec: { podSelector: Peer["podSelector"]; policyTypes: string[]; ingress: { from: Peer[]; ports?: unknown }[] } };
  const servers = { matchLabels: { "ai-platform.io/platform": "ai-platform", "app.kubernetes.io/part-of": "app-serving" }, matchExpressions: [{ key: "llm-d.ai/role", operator: "Exists" }] };

  test("selects every model-server pod (platform labels and the chart's role label, which pickers and Jobs lack), ingress only", () => {
    expect(() => validateKubernetesObject(policy as unknown as Record<string, unknown>)).not.toThrow();
    expect(policy.spec.podSelector).toEqual(servers);
    expect(policy.spec.policyTypes).toEqual(["Ingress"]);
  });

  test("admits exactly: the gateway pods, the metrics server's namespace, model servers, each pool's picker, the inference gateway's namespace", () => {
    const from = policy.spec.ingress[0]?.from ?? [];
    expect(from).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ai-gateway" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: {} },
      { podSelector: servers },
      { podSelector: { matchLabels: { inferencepool: "gaie-qwen3-8b-epp" } } },
      { podSelector: { matchLabels: { inferencepool: "gaie-bge-small-en-epp" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "gateway-system" } }, podSelector: {} },
    ]);
    // No peer is "everything": an empty `from` entry or a bare namespaceSelector {} would admit the cluster.
    for (const p of from) expect(p.namespaceSelector === undefined || Object.keys(p.namespaceSelector.matchLabels).length > 0).toBe(true);
    expect(policy.spec.ingress[0]?.ports).toBeUndefined();
  });

  test("without HTTPRoutes there is no inference-gateway peer", () => {
    const p = buildModelServerPolicy({ namespace: "s", labelDomain: D, gateway: { namespace: "g" }, monitoringNamespace: "m", pools: [] }) as typeof policy;
    expect((p.spec.ingress[0]?.from ?? []).map((f) => f.namespaceSelector?.matchLabels["kubernetes.io/metadata.name"] ?? "(own)")).toEqual(["g", "m", "(own)"]);
  });
});
