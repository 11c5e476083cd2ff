// The gateway part of the program: namespace `gateway:namespace` (default ai-gateway) and the Gateway component.
// The catalog comes from exactly one place: the serving part of this program, the serving part of another stack
// (`gateway:servingStack`, through a StackReference), or `gateway:catalog`.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CatalogInput } from "../gateway/src/config/catalog";
import { NAMESPACE as MONITORING_NAMESPACE } from "../infra/monitoring/constants";
import type { Cluster } from "../infra/platform/cluster";
import { checkClusterValue } from "../infra/platform/cluster-checks";
import { ConfigError } from "../infra/platform/config";
import { RETAIN } from "../infra/platform/retain";
import { CONFIG_NAMESPACE, DEFAULT_SERVING_NAMESPACE, Gateway, type GatewayConfig } from "../infra/gateway";
import { aliasProblems, type GatewaySecrets, withAliases } from "../infra/gateway/config";
import { keyModelProblems } from "../infra/gateway/key-models";
import { externalUrl } from "../infra/gateway/exposure";
import { gatewayNamespaceLabels, storedNamespaceLabels } from "../infra/gateway/labels";
import { egressProblem, upstreamPeers } from "../infra/gateway/network";

/** What the serving part (of this program or of another stack) hands the gateway. */
export interface ServingSupply {
  readonly catalog: pulumi.Input<CatalogInput>;
  readonly namespace: pulumi.Input<string>;
  /** The key the model servers require (a secret); "" when the serving stack has none. */
  readonly upstreamApiKey: pulumi.Input<string>;
}

export interface GatewayOutputs {
  readonly namespace: pulumi.Output<string>;
  /** In-cluster base URL, e.g. http://gateway.ai-gateway.svc.cluster.local:80/v1 */
  readonly url: pulumi.Output<string>;
  /** With `gateway:exposure`, the base URL clients outside the cluster use (its first host name), e.g. https://llm.example.com/v1 */
  readonly externalUrl?: string;
  /** Key name → full API key. Secret: `pulumi stack output gateway --show-secrets`. */
  readonly apiKeys: pulumi.Output<Record<string, string>>;
  readonly catalogChecksum: pulumi.Output<string>;
  /** With `gateway:usageLedger`: the IAM policy to attach to the gateway's ledger credentials (not secret). */
  readonly usageLedgerPolicy?: Record<string, unknown>;
}

/** Where the gateway's catalog comes from, decided (and checked) before anything is declared. */
export type CatalogSource =
  | { readonly kind: "serving"; readonly catalog: CatalogInput; readonly namespace: string }
  | { readonly kind: "stack"; readonly stack: string }
  | { readonly kind: "config"; readonly catalog: CatalogInput };

export interface GatewayPlan {
  readonly cfg: GatewayConfig;
  readonly source: CatalogSource;
}

/**
 * Exactly one of the serving part of this program, `gateway:servingStack` and `gateway:catalog`; a catalog known now
 * is also checked against what the NetworkPolicy can allow, the aliases and the keys' model lists (one from another
 * stack is checked when it arrives).
 */
export function planGateway(cfg: GatewayConfig, serving?: { catalog: CatalogInput; namespace: string }): GatewayPlan {
  const given = [serving && "the serving part of this program", cfg.servingStack && "gateway:servingStack", cfg.catalog && "gateway:catalog"].filter(Boolean);
  if (given.length > 1) throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:catalog: must come from one source, not ${given.join(" and ")}`]);
  const source: CatalogSource | undefined = serving
    ? { kind: "serving", ...serving }
    : cfg.servingStack
      ? { kind: "stack", stack: cfg.servingStack }
      : cfg.catalog
        ? { kind: "config", catalog: cfg.catalog }
        : undefined;
  if (!source) {
    throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:catalog: required for a standalone gateway (no serving part in this program; or set gateway:servingStack)`]);
  }
  if (source.kind === "serving" && cfg.hasUpstreamApiKey) {
    throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:upstreamApiKey: comes from the serving part of this program: remove it`]);
  }
  if (source.kind !== "stack") {
    const problem = egressProblem(upstreamPeers(source.catalog), cfg.extraEgress);
    if (problem) throw new ConfigError(CONFIG_NAMESPACE, [problem]);
    const problems = [...aliasProblems(source.catalog, cfg.aliases), ...keyModelProblems(cfg.apiKeys, withAliases(source.catalog, cfg.aliases))];
    if (problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, problems);
  }
  return { cfg, source };
}

/** The serving stack's `serving` output (stacks/serving.ts ServingOutputs), read through a StackReference. */
export function servingFromStack(stack: string): ServingSupply {
  const serving = new pulumi.StackReference(stack).requireOutput("serving") as pulumi.Output<{ catalog: CatalogInput; namespace: string; upstreamApiKey?: string }>;
  return {
    catalog: serving.apply((s) => s.catalog),
    namespace: serving.apply((s) => s.namespace),
    // A secret output of the serving stack stays secret here; a serving stack older than the key has none.
    upstreamApiKey: pulumi.secret(serving.apply((s) => s.upstreamApiKey ?? "")),
  };
}

function supplyOf(source: CatalogSource, upstreamApiKey: pulumi.Input<string> | undefined): Partial<ServingSupply> & Pick<ServingSupply, "catalog"> {
  switch (source.kind) {
    case "serving":
      return { ...source, upstreamApiKey };
    case "stack":
      return servingFromStack(source.stack);
    case "config":
      return { catalog: source.catalog, upstreamApiKey };
  }
}

export interface GatewayDeployment {
  readonly cluster: Cluster;
  readonly plan: GatewayPlan;
  /** Secret Output of `gateway:redisUrl`, when set. */
  readonly redisUrl?: pulumi.Output<string>;
  /** The model servers' key: the serving part's output in this program, else `gateway:upstreamApiKey`. */
  readonly upstreamApiKey?: pulumi.Input<string>;
  /** What the exposure waits for: the Gateway API CRDs and cert-manager's. */
  readonly crds: { readonly gatewayApi: readonly pulumi.Resource[]; readonly certManager: readonly pulumi.Resource[] };
  /** The stack's key for secret digests on pod templates. */
  readonly digestKey: pulumi.Input<string>;
  /** Secret Outputs of the usage ledger's keys, when the stack holds them. */
  readonly usageLedgerKeys?: GatewaySecrets["usageLedger"];
}

export function deployGateway(d: GatewayDeployment): GatewayOutputs {
  const { cfg } = d.plan;
  const supply = supplyOf(d.plan.source, d.upstreamApiKey);
  // A catalog from another stack meets the aliases when it arrives (the gateway's catalog render checks them).
  const catalog = pulumi.output(supply.catalog).apply((c) => withAliases(c, cfg.aliases));
  // Keys meet it then too: the serving stack's catalog as of its last update, read at this stack's preview.
  const { source } = d.plan;
  if (source.kind === "stack") checkClusterValue(catalog, (c) => keyModelProblems(cfg.apiKeys, c, `gateway:servingStack ${source.stack}`));
  const ns = new k8s.core.v1.Namespace(
    cfg.namespace,
    { metadata: { name: cfg.namespace, labels: gatewayNamespaceLabels(cfg.namespaceLabels, cfg.exposure) } },
    { ...RETAIN, provider: d.cluster.provider },
  );
  const gateway = new Gateway(
    "gateway",
    {
      config: cfg,
      namespace: ns.metadata.name,
      catalog,
      servingNamespace: cfg.servingNamespace ?? supply.namespace ?? DEFAULT_SERVING_NAMESPACE,
      monitoringNamespace: MONITORING_NAMESPACE,
      redisUrl: d.redisUrl,
      upstreamApiKey: supply.upstreamApiKey,
      clusterDomain: d.cluster.domain,
      dns: d.cluster.dns,
      // What an existing Gateway's allowedRoutes selector is checked against: the labels this update gives the
      // namespace, not the live Namespace's. On the first `pulumi up` the namespace does not exist yet (a read would
      // fail), and on later ones a read would see the labels of the previous update, missing a label added to
      // gateway:namespaceLabels in this one. Labels set outside the stack are not seen: they belong in that key.
      namespaceLabels: storedNamespaceLabels(cfg.namespace, cfg.namespaceLabels, cfg.exposure),
      gatewayApiReady: d.crds.gatewayApi,
      certManagerReady: d.crds.certManager,
      fixedUserIds: d.cluster.fixedUserIds,
      digestKey: d.digestKey,
      usageLedgerKeys: d.usageLedgerKeys,
    },
    { providers: { kubernetes: d.cluster.provider }, dependsOn: [ns] },
  );
  const external = cfg.exposure ? externalUrl(cfg.exposure) : undefined;
  return {
    namespace: ns.metadata.name,
    url: gateway.url,
    ...(external ? { externalUrl: external } : {}),
    apiKeys: gateway.apiKeys,
    catalogChecksum: gateway.catalogChecksum,
    ...(gateway.usageLedgerPolicy ? { usageLedgerPolicy: gateway.usageLedgerPolicy } : {}),
  };
}
