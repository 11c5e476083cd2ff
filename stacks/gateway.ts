// The gateway part of the program: namespace `gateway:namespace` (default ai-gateway) and the Gateway component.
// The catalog comes from exactly one place: the serving part of this program, the serving part of another stack
// (`gateway:servingStack`, through a StackReference), or `gateway:catalog`.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CatalogInput } from "../gateway/src/config/catalog";
import { NAMESPACE as MONITORING_NAMESPACE } from "../infra/monitoring/constants";
import type { Cluster } from "../infra/platform/cluster";
import { ConfigError } from "../infra/platform/config";
import { RETAIN } from "../infra/platform/retain";
import { CONFIG_NAMESPACE, DEFAULT_SERVING_NAMESPACE, Gateway, type GatewayConfig, loadGatewaySecrets, PART_OF } from "../infra/gateway";
import { egressProblem, upstreamPeers } from "../infra/gateway/network";

/** What the serving part (of this program or of another stack) hands the gateway. */
export interface ServingSupply {
  readonly catalog: pulumi.Input<CatalogInput>;
  readonly namespace: pulumi.Input<string>;
}

export interface GatewayOutputs {
  readonly namespace: pulumi.Output<string>;
  /** In-cluster base URL, e.g. http://gateway.ai-gateway.svc.cluster.local:80/v1 */
  readonly url: pulumi.Output<string>;
  /** Key name → full API key. Secret: `pulumi stack output gateway --show-secrets`. */
  readonly apiKeys: pulumi.Output<Record<string, string>>;
  readonly catalogChecksum: pulumi.Output<string>;
}

/** The serving stack's `serving` output (stacks/serving.ts ServingOutputs), read through a StackReference. */
export function servingFromStack(stack: string): ServingSupply {
  const serving = new pulumi.StackReference(stack).requireOutput("serving") as pulumi.Output<{ catalog: CatalogInput; namespace: string }>;
  return { catalog: serving.apply((s) => s.catalog), namespace: serving.apply((s) => s.namespace) };
}

/** The catalog source: exactly one of the serving part, `gateway:servingStack` and `gateway:catalog`. */
export function chooseSupply(cfg: GatewayConfig, serving?: ServingSupply): ServingSupply | { catalog: CatalogInput; namespace?: undefined } {
  const given = [serving && "the serving part of this program", cfg.servingStack && "gateway:servingStack", cfg.catalog && "gateway:catalog"].filter(Boolean);
  if (given.length > 1) {
    throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:catalog: must come from one source, not ${given.join(" and ")}`]);
  }
  if (serving) return serving;
  if (cfg.servingStack) return servingFromStack(cfg.servingStack);
  if (cfg.catalog) return { catalog: cfg.catalog };
  throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:catalog: required for a standalone gateway (no serving part in this program; or set gateway:servingStack)`]);
}

export function deployGateway(cluster: Cluster, cfg: GatewayConfig, serving?: ServingSupply, routeCrds: pulumi.Resource[] = []): GatewayOutputs {
  const supply = chooseSupply(cfg, serving);
  // A catalog known now is checked now (a preview error naming the key); one from another stack when it arrives.
  if (!pulumi.Output.isInstance(supply.catalog)) {
    const problem = egressProblem(upstreamPeers(supply.catalog as CatalogInput), cfg.extraEgress);
    if (problem) throw new ConfigError(CONFIG_NAMESPACE, [problem]);
  }
  const { redisUrl } = loadGatewaySecrets();

  const ns = new k8s.core.v1.Namespace(
    cfg.namespace,
    { metadata: { name: cfg.namespace, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" } } },
    { ...RETAIN, provider: cluster.provider },
  );
  const gateway = new Gateway(
    "gateway",
    {
      config: cfg,
      namespace: ns.metadata.name,
      catalog: supply.catalog,
      servingNamespace: cfg.servingNamespace ?? supply.namespace ?? DEFAULT_SERVING_NAMESPACE,
      monitoringNamespace: MONITORING_NAMESPACE,
      redisUrl,
      clusterDomain: cluster.domain,
      dns: cluster.dns,
      routeDependsOn: routeCrds,
    },
    { providers: { kubernetes: cluster.provider }, dependsOn: [ns] },
  );
  return { namespace: ns.metadata.name, url: gateway.url, apiKeys: gateway.apiKeys, catalogChecksum: gateway.catalogChecksum };
}
