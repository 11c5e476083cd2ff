// Pure builders of what reaches the gateway and what it reaches: its NetworkPolicy.
import { isIP } from "net";
import type { CatalogInput } from "../../gateway/src/config/catalog";
import type { DnsSettings } from "../platform/cluster-config";
import { dnsEgressRules } from "../platform/cluster";
import type { ExtraEgress, RedisEgress, RedisSetting, TracesSetting } from "./config";
import type { UsageLedgerSetting } from "./usage-ledger-config";
import type { ExposureFrom } from "./exposure-config";
import { NAMESPACE_NAME_LABEL, PORTS } from "./constants";
import { selectorLabels } from "./labels";
import { REDIS_PORT, redisSelectorLabels } from "./redis-builders";

/** `<service>.<namespace>.svc[.<cluster domain>]` → namespace; anything else (IPs, external names) → undefined. */
export function serviceNamespace(host: string): string | undefined {
  return /^[a-z0-9-]+\.([a-z0-9-]+)\.svc(\.|$)/.exec(host)?.[1];
}

/** Where the catalog's upstreams are, as a NetworkPolicy can name them. */
export interface UpstreamPeers {
  /** Namespaces of in-cluster Services. */
  readonly namespaces: string[];
  /** IP-literal upstreams: allowed by address and port. */
  readonly addresses: { readonly cidr: string; readonly port: number }[];
  /** Host names outside the cluster: a NetworkPolicy cannot allow them by name (gateway:extraEgress). */
  readonly external: string[];
}

function hostAndPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || (u.protocol === "https:" ? 443 : 80)) };
}

/**
 * The catalog's upstreams by kind. In pool mode the URL is the cluster's inference gateway, which often runs outside
 * the serving namespace (e.g. `gateway-system`); static endpoints may be pod or VM addresses.
 */
export function upstreamPeers(catalog: CatalogInput): UpstreamPeers {
  const targets = catalog.models.flatMap((m) => {
    const u = m.upstream;
    if (u.mode === "dns") return [{ host: u.host, port: u.port }];
    if (u.mode === "pool") return [hostAndPort(u.url)];
    return u.endpoints.map((e) => hostAndPort(e.url));
  });
  const namespaces = new Set<string>();
  const addresses = new Map<string, { cidr: string; port: number }>();
  const external = new Set<string>();
  for (const t of targets) {
    const ns = serviceNamespace(t.host);
    const family = isIP(t.host);
    if (ns) namespaces.add(ns);
    else if (family !== 0) {
      const cidr = `${t.host}/${family === 4 ? 32 : 128}`;
      addresses.set(`${cidr}:${t.port}`, { cidr, port: t.port });
    } else external.add(t.host);
  }
  return { namespaces: [...namespaces].sort(), addresses: [...addresses.values()], external: [...external].sort() };
}

/** The problem with a catalog whose upstreams the NetworkPolicy could not allow, as a config error line. */
export function egressProblem(upstreams: UpstreamPeers, extraEgress: ExtraEgress): string | undefined {
  if (upstreams.external.length === 0 || extraEgress.length > 0) return undefined;
  return (
    `gateway:extraEgress: required: the catalog names upstreams outside the cluster by host name (${upstreams.external.join(", ")}); ` +
    "a NetworkPolicy can only allow addresses, so list their CIDRs and ports"
  );
}

export interface NetworkPolicyArgs {
  readonly servingNamespace: string;
  readonly upstreams: UpstreamPeers;
  /** Addresses outside the cluster the operator allows (`gateway:extraEgress`). */
  readonly extraEgress: ExtraEgress;
  /** Namespaces allowed on the API port; undefined = every namespace of the cluster. */
  readonly ingressNamespaces?: readonly string[];
  /** Where the proxy of `gateway:exposure` forwards from (`gateway:exposure.from`), also allowed on the API port. */
  readonly exposureFrom?: ExposureFrom;
  /** The namespace of the metrics server: the only one that may scrape the metrics port. */
  readonly monitoringNamespace: string;
  readonly dns: DnsSettings;
  readonly redis: RedisSetting;
  /** The trace collector, when traces are on. */
  readonly traces?: TracesSetting;
  /** The usage ledger's object store, when the ledger is on. */
  readonly usageLedger?: Pick<UsageLedgerSetting, "egress">;
}

const inNamespace = (name: string) => ({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: name } } });
const tcp = (port: number) => ({ protocol: "TCP", port });

/** An egress rule to a peer the operator names: pods of a namespace (optionally by labels), or an address range. */
function peerEgress(e: RedisEgress | TracesSetting["egress"] | UsageLedgerSetting["egress"]): Record<string, unknown> {
  const peer = "cidr" in e ? { ipBlock: { cidr: e.cidr } } : { ...inNamespace(e.namespace), ...(e.podLabels ? { podSelector: { matchLabels: { ...e.podLabels } } } : {}) };
  return { to: [peer], ports: [tcp(e.port)] };
}

function redisEgress(redis: RedisSetting): Record<string, unknown>[] {
  if (!redis) return [];
  if (redis.mode === "deployed") return [{ to: [{ podSelector: { matchLabels: redisSelectorLabels() } }], ports: [tcp(REDIS_PORT)] }];
  return [peerEgress(redis.egress)];
}

/**
 * Ingress: the API port from the cluster (or the listed namespaces), the metrics port from the monitoring namespace
 * only. Egress: the model-serving namespace (and the namespaces of the catalog's in-cluster upstreams), IP-literal
 * upstreams on their ports, the listed extra addresses, cluster DNS, Redis, the trace collector and the ledger's store when used; nothing else (no internet,
 * no other namespace, not the Kubernetes API).
 */
export function buildNetworkPolicySpec(args: NetworkPolicyArgs) {
  const problem = egressProblem(args.upstreams, args.extraEgress);
  if (problem) throw new Error(problem);
  const apiFrom = [...(args.ingressNamespaces ? args.ingressNamespaces.map(inNamespace) : [{ namespaceSelector: {} }]), ...proxyPeers(args.exposureFrom, args.ingressNamespaces)];
  const egress: Record<string, unknown>[] = [
    { to: [...new Set([args.servingNamespace, ...args.upstreams.namespaces])].map(inNamespace) },
    ...args.upstreams.addresses.map((a) => ({ to: [{ ipBlock: { cidr: a.cidr } }], ports: [tcp(a.port)] })),
    ...args.extraEgress.map((e) => ({ to: [{ ipBlock: { cidr: e.cidr } }], ports: e.ports.map(tcp) })),
    ...dnsEgressRules(args.dns),
    ...redisEgress(args.redis),
    ...(args.traces ? [peerEgress(args.traces.egress)] : []),
    ...(args.usageLedger ? [peerEgress(args.usageLedger.egress)] : []),
  ];
  return {
    podSelector: { matchLabels: selectorLabels() },
    policyTypes: ["Ingress", "Egress"],
    ingress: [
      { from: apiFrom, ports: [tcp(PORTS.http)] },
      { from: [inNamespace(args.monitoringNamespace)], ports: [tcp(PORTS.metrics)] },
    ],
    egress,
  };
}

/**
 * The exposure proxy's peers on the API port. Without `gateway:ingressNamespaces` every pod of the cluster is allowed
 * already, so only addresses outside it (a cloud load balancer connecting to pods directly) add anything.
 */
function proxyPeers(from: ExposureFrom | undefined, ingressNamespaces: readonly string[] | undefined): Record<string, unknown>[] {
  if (!from) return [];
  if ("cidrs" in from) return from.cidrs.map((c) => ({ ipBlock: { cidr: c } }));
  if (!ingressNamespaces || (ingressNamespaces.includes(from.namespace) && !from.podLabels)) return [];
  return [{ ...inNamespace(from.namespace), ...(from.podLabels ? { podSelector: { matchLabels: { ...from.podLabels } } } : {}) }];
}
