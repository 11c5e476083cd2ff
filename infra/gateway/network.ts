// Pure builders of what reaches the gateway and what it reaches: NetworkPolicy and the optional HTTPRoute.
import type { CatalogInput } from "../../gateway/src/config/catalog";
import type { HttpRouteSettings, RedisEgress } from "./config";
import { APP_NAME, CLUSTER_DNS, MONITORING_NAMESPACE, NAMESPACE_NAME_LABEL, PORTS } from "./constants";
import { selectorLabels } from "./labels";

/** `<service>.<namespace>.svc[.cluster.local]` → namespace; anything else (pod IPs, external names) → undefined. */
export function serviceNamespace(host: string): string | undefined {
  return /^[a-z0-9-]+\.([a-z0-9-]+)\.svc(\.|$)/.exec(host)?.[1];
}

/**
 * Namespaces the catalog's upstreams live in, from their in-cluster Service names. In pool mode the URL is the
 * cluster's inference gateway, which often runs outside the serving namespace (e.g. `gateway-system`).
 */
export function upstreamNamespaces(catalog: CatalogInput): string[] {
  const hosts = catalog.models.flatMap((m) => {
    const u = m.upstream;
    if (u.mode === "dns") return [u.host];
    if (u.mode === "pool") return [new URL(u.url).hostname];
    return u.endpoints.map((e) => new URL(e.url).hostname);
  });
  return [...new Set(hosts.map(serviceNamespace).filter((n): n is string => n !== undefined))].sort();
}

export interface NetworkPolicyArgs {
  readonly servingNamespace: string;
  /** More upstream namespaces (see upstreamNamespaces); the serving namespace is always allowed. */
  readonly upstreamNamespaces?: readonly string[];
  /** Namespaces allowed on the API port; undefined = every namespace of the cluster. */
  readonly ingressNamespaces?: readonly string[];
  readonly redis?: RedisEgress;
}

const inNamespace = (name: string) => ({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: name } } });

/**
 * Ingress: the API port from the cluster (or the listed namespaces), the metrics port from the monitoring
 * namespace only. Egress: the model-serving namespace (and the namespaces of the catalog's in-cluster upstreams),
 * cluster DNS, and Redis when configured; nothing else (no internet, no other namespace, not the Kubernetes API).
 */
export function buildNetworkPolicySpec(args: NetworkPolicyArgs) {
  const apiFrom = args.ingressNamespaces ? args.ingressNamespaces.map(inNamespace) : [{ namespaceSelector: {} }];
  const egress: Record<string, unknown>[] = [
    { to: [...new Set([args.servingNamespace, ...(args.upstreamNamespaces ?? [])])].map(inNamespace) },
    {
      to: [{ ...inNamespace(CLUSTER_DNS.namespace), podSelector: { matchLabels: { ...CLUSTER_DNS.podLabels } } }],
      ports: [
        { protocol: "UDP", port: CLUSTER_DNS.port },
        { protocol: "TCP", port: CLUSTER_DNS.port },
      ],
    },
  ];
  if (args.redis) {
    const peer =
      "cidr" in args.redis
        ? { ipBlock: { cidr: args.redis.cidr } }
        : { ...inNamespace(args.redis.namespace), ...(args.redis.podLabels ? { podSelector: { matchLabels: { ...args.redis.podLabels } } } : {}) };
    egress.push({ to: [peer], ports: [{ protocol: "TCP", port: args.redis.port }] });
  }
  return {
    podSelector: { matchLabels: selectorLabels() },
    policyTypes: ["Ingress", "Egress"],
    ingress: [
      { from: apiFrom, ports: [{ protocol: "TCP", port: PORTS.http }] },
      { from: [inNamespace(MONITORING_NAMESPACE)], ports: [{ protocol: "TCP", port: PORTS.metrics }] },
    ],
    egress,
  };
}

/** HTTPRoute spec: everything under `/` to the Service's API port, attached to the configured parent Gateway. */
export function buildHttpRouteSpec(route: HttpRouteSettings) {
  const { name, namespace, sectionName } = route.parentRef;
  return {
    parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name, ...(namespace ? { namespace } : {}), ...(sectionName ? { sectionName } : {}) }],
    ...(route.hostnames ? { hostnames: [...route.hostnames] } : {}),
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/" } }],
        backendRefs: [{ group: "", kind: "Service", name: APP_NAME, port: PORTS.service }],
        ...(route.requestTimeout ? { timeouts: { request: route.requestTimeout } } : {}),
      },
    ],
  };
}
