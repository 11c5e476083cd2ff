// Who may reach the model servers. vLLM serves anyone who can connect: without a policy any pod in the cluster could
// call it around the gateway's keys, limits and accounting. The policy selects the model-server pods of the namespace
// and admits, on every port they serve, only: the gateway, the endpoint pickers of the pools (they scrape /metrics),
// the inference gateway's proxies (pool mode), the metrics server, and model-server pods themselves (prefill/decode
// disaggregation moves KV cache between them). Egress is left open: downloads and registries differ per site.
// Kubelet probes are not subject to NetworkPolicy.
import { NAMESPACE_NAME_LABEL, PLATFORM_NAME, platformLabelKeys } from "../platform/labels";
import { PART_OF } from "./constants";
import { pickerName } from "./values";

/** A peer the policy admits: pods of a namespace, optionally only those with these labels. */
export interface PolicyPeer {
  readonly namespace: string;
  readonly podLabels?: Readonly<Record<string, string>>;
  /** A full label selector, when labels alone cannot say it. */
  readonly pods?: ReturnType<typeof modelServerSelector>;
}

export const MODEL_SERVER_POLICY_NAME = "model-servers";

/** Label the GAIE chart (v1.3.0) puts on endpoint-picker pods: `inferencepool: <release>-epp`. */
export const EPP_POD_LABEL = "inferencepool";

/** The role label the modelservice chart puts on every model-server pod (decode or prefill), and on nothing else. */
export const ROLE_LABEL = "llm-d.ai/role";

/**
 * The pods of every model server in the namespace: the platform labels values.ts stamps on them, and the chart's role
 * label, which the endpoint pickers and the download Jobs (platform-labelled too) do not carry.
 */
export function modelServerSelector(labelDomain: string): { matchLabels: Record<string, string>; matchExpressions: { key: string; operator: string }[] } {
  return {
    matchLabels: { [platformLabelKeys(labelDomain).platform]: PLATFORM_NAME, "app.kubernetes.io/part-of": PART_OF },
    matchExpressions: [{ key: ROLE_LABEL, operator: "Exists" }],
  };
}

function peer(p: PolicyPeer, own: string): Record<string, unknown> {
  return {
    ...(p.namespace === own ? {} : { namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: p.namespace } } }),
    podSelector: p.pods ? { matchLabels: { ...p.pods.matchLabels }, matchExpressions: p.pods.matchExpressions.map((e) => ({ ...e })) } : p.podLabels ? { matchLabels: { ...p.podLabels } } : {},
  };
}

export interface ModelServerPolicyArgs {
  readonly namespace: string;
  readonly labelDomain: string;
  /** The gateway's pods. */
  readonly gateway: PolicyPeer;
  /** The metrics server's namespace. */
  readonly monitoringNamespace: string;
  /** Namespace of the inference gateway (pool mode), when the models have HTTPRoutes. */
  readonly inferenceGatewayNamespace?: string;
  /** The pools' release names (their endpoint pickers). */
  readonly pools: readonly string[];
}

export function buildModelServerPolicy(args: ModelServerPolicyArgs): Record<string, unknown> {
  const own = args.namespace;
  const servers = modelServerSelector(args.labelDomain);
  const peers: PolicyPeer[] = [
    args.gateway,
    { namespace: args.monitoringNamespace },
    { namespace: own, pods: servers },
    ...args.pools.map((pool) => ({ namespace: own, podLabels: { [EPP_POD_LABEL]: pickerName(pool) } })),
    ...(args.inferenceGatewayNamespace ? [{ namespace: args.inferenceGatewayNamespace }] : []),
  ];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: MODEL_SERVER_POLICY_NAME, namespace: own, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" } },
    spec: {
      podSelector: servers,
      policyTypes: ["Ingress"],
      ingress: [{ from: peers.map((p) => peer(p, own)) }],
    },
  };
}
