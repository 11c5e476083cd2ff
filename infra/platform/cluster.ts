// The one Kubernetes provider of a stack and the facts of its cluster, made once by the composition root and handed
// to every part. A resource that was not handed this provider fails the preview (provider-guard.ts, and the stack
// setting `pulumi:disable-default-providers`) instead of changing whatever cluster the current kube context points at.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ClusterConfig, DnsSettings } from "./cluster-config";
import { NAMESPACE_NAME_LABEL } from "./labels";

/** What every part needs to know about the cluster it deploys to. */
export interface Cluster {
  readonly provider: k8s.Provider;
  /** DNS domain of Services (`<svc>.<ns>.svc.<domain>`). */
  readonly domain: string;
  /** Where cluster DNS answers (NetworkPolicies allow it). */
  readonly dns: DnsSettings;
  /** Pods set their images' fixed user ids (false where the cluster assigns them, e.g. OpenShift). */
  readonly fixedUserIds: boolean;
}

/** Name of the provider resource (`pulumi:providers:kubernetes::cluster`). */
export const PROVIDER_NAME = "cluster";

/** Provider arguments: pure, so tests and the lifecycle documentation read the same values the program sets. */
export function providerArgs(cfg: ClusterConfig, kubeconfig?: pulumi.Input<string>): k8s.ProviderArgs {
  return {
    ...(cfg.context ? { context: cfg.context } : {}),
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    // Set from `cluster:name` only: the provider is replaced exactly when this value changes.
    ...(cfg.identifier ? { clusterIdentifier: cfg.identifier } : {}),
    enableServerSideApply: true,
    // Objects left in the cluster on purpose (retainOnDelete) are adopted when their component returns, instead of
    // failing with AlreadyExists (provider >= 4.29 creates with a client-side create unless this is on).
    upsertExistingObjects: true,
    enablePatchForce: cfg.forceConflicts,
    // ConfigMaps (the gateway catalog, the dashboards) are updated in place, as Kubernetes allows; otherwise the
    // provider replaces them on every data change, and a named ConfigMap is deleted before it is recreated.
    enableConfigMapMutable: true,
    // Secrets too (keys file, credentials): a replacement would delete the Secret before recreating it.
    enableSecretMutable: true,
  };
}

export function createCluster(cfg: ClusterConfig, kubeconfig?: pulumi.Input<string>): Cluster {
  const provider = new k8s.Provider(PROVIDER_NAME, providerArgs(cfg, kubeconfig));
  return { provider, domain: cfg.domain, dns: cfg.dns, fixedUserIds: cfg.fixedUserIds };
}

/** NetworkPolicy egress rules that let a pod resolve names through the cluster's DNS. */
export function dnsEgressRules(dns: DnsSettings): Record<string, unknown>[] {
  const ports = dns.ports.flatMap((port) => [
    { protocol: "UDP", port },
    { protocol: "TCP", port },
  ]);
  const peers: Record<string, unknown>[] = [];
  if (dns.namespace && dns.podLabels) {
    peers.push({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: dns.namespace } }, podSelector: { matchLabels: { ...dns.podLabels } } });
  }
  for (const cidr of dns.cidrs ?? []) peers.push({ ipBlock: { cidr } });
  return [{ to: peers, ports }];
}
