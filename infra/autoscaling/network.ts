// Who reaches KEDA's pods (the chart's own policies are Cilium's or admit every namespace): the operator's gRPC port
// only from KEDA's metrics server, its metrics port only from the metrics server's namespace; the metrics server's
// API port from anywhere, since the cluster's API server calls it (aggregation) from an address the cluster chooses.
// Ingress only: both call the API server, whose address a policy cannot name portably. No Pulumi here.
import { NAMESPACE_NAME_LABEL } from "../platform/labels";
import { KEDA_OPERATOR_METRICS_PORT } from "./constants";

/** Pod labels the chart (2.20.2) gives the two Deployments' pods. */
export const KEDA_POD_LABELS = { operator: { app: "keda-operator" }, metricsServer: { app: "keda-operator-metrics-apiserver" } } as const;
/** The operator's gRPC port (the metrics server asks it for metric values) and the metrics server's API port. */
export const KEDA_PORTS = { operatorGrpc: 9666, metricsServerApi: 6443 } as const;

export function buildKedaPolicies(namespace: string, monitoringNamespace: string): Record<string, unknown>[] {
  const policy = (name: string, podSelector: Record<string, string>, ingress: Record<string, unknown>[]) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace, labels: { "app.kubernetes.io/part-of": "keda", "app.kubernetes.io/managed-by": "pulumi" } },
    spec: { podSelector: { matchLabels: { ...podSelector } }, policyTypes: ["Ingress"], ingress },
  });
  return [
    policy("keda-operator", KEDA_POD_LABELS.operator, [
      { from: [{ podSelector: { matchLabels: { ...KEDA_POD_LABELS.metricsServer } } }], ports: [{ protocol: "TCP", port: KEDA_PORTS.operatorGrpc }] },
      { from: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: monitoringNamespace } } }], ports: [{ protocol: "TCP", port: KEDA_OPERATOR_METRICS_PORT }] },
    ]),
    policy("keda-operator-metrics-apiserver", KEDA_POD_LABELS.metricsServer, [{ ports: [{ protocol: "TCP", port: KEDA_PORTS.metricsServerApi }] }]),
  ];
}
