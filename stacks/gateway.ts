// The gateway part of the program: namespace `gateway:namespace` (default ai-gateway) and the Gateway component.
// The catalog comes from the serving part when it is deployed in the same program, else from `gateway:catalog`.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CatalogInput } from "../gateway/src/config/catalog";
import { ConfigError, hasNamespace } from "../infra/platform/config";
import { RETAIN } from "../infra/platform/retain";
import {
  CONFIG_NAMESPACE,
  DEFAULT_SERVING_NAMESPACE,
  Gateway,
  type GatewayConfig,
  loadGatewayConfig,
  loadGatewaySecrets,
  PART_OF,
} from "../infra/gateway";

/** What the serving part of the program hands the gateway. */
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

/** The catalog source: exactly one of the serving part and `gateway:catalog`. */
export function chooseCatalog(cfg: GatewayConfig, serving?: ServingSupply): pulumi.Input<CatalogInput> {
  if (serving && cfg.catalog) {
    throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:catalog: must not be set when the serving part of this program supplies the catalog`]);
  }
  const catalog = serving?.catalog ?? cfg.catalog;
  if (!catalog) {
    throw new ConfigError(CONFIG_NAMESPACE, [`${CONFIG_NAMESPACE}:catalog: required for a standalone gateway (no serving part in this program)`]);
  }
  return catalog;
}

export function deployGateway(cfg: GatewayConfig = loadGatewayConfig(), serving?: ServingSupply): GatewayOutputs {
  const catalog = chooseCatalog(cfg, serving);
  const { redisUrl } = loadGatewaySecrets();

  const ns = new k8s.core.v1.Namespace(
    cfg.namespace,
    { metadata: { name: cfg.namespace, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" } } },
    RETAIN,
  );
  const gateway = new Gateway(
    "gateway",
    {
      config: cfg,
      namespace: ns.metadata.name,
      catalog,
      servingNamespace: cfg.servingNamespace ?? serving?.namespace ?? DEFAULT_SERVING_NAMESPACE,
      redisUrl,
    },
    { dependsOn: [ns] },
  );
  return { namespace: ns.metadata.name, url: gateway.url, apiKeys: gateway.apiKeys, catalogChecksum: gateway.catalogChecksum };
}

/** Deploys the gateway part only when the stack has a `gateway:` namespace. */
export function deployGatewayIfConfigured(serving?: ServingSupply): GatewayOutputs | undefined {
  return hasNamespace(CONFIG_NAMESPACE) ? deployGateway(loadGatewayConfig(), serving) : undefined;
}
