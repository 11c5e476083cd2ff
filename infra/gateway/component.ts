// The gateway component: catalog ConfigMap, API keys (random → hash → Secret), optional Redis Secret, Deployment,
// PodDisruptionBudget, HorizontalPodAutoscaler, Service, NetworkPolicy and, when configured, an HTTPRoute.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { CatalogInput } from "../../gateway/src/config/catalog";
import { RETAIN } from "../platform/retain";
import { catalogChecksum, renderCatalog } from "./catalog";
import type { ApiKeySpec, GatewayConfig } from "./config";
import { APP_NAME, CATALOG_FILE, KEYS_FILE, OBJECT_NAMES, PORTS, REDIS_URL_KEY } from "./constants";
import { apiKeyFromBase64, buildKeysFile, KEY_BYTES, keyKeepers } from "./keys";
import { gatewayLabels } from "./labels";
import { buildHttpRouteSpec, buildNetworkPolicySpec, upstreamNamespaces } from "./network";
import { buildDeploymentSpec, buildHpaSpec, buildPdbSpec, buildServiceSpec } from "./workload";

export interface GatewayArgs {
  /** The validated `gateway:` configuration (its catalog and serving namespace are overridden below). */
  readonly config: GatewayConfig;
  readonly namespace: pulumi.Input<string>;
  /** The model catalog, e.g. the serving component's output; validated against the gateway's schema. */
  readonly catalog: pulumi.Input<CatalogInput>;
  /** Where the model servers run: the only upstream the NetworkPolicy lets the gateway reach. */
  readonly servingNamespace: pulumi.Input<string>;
  /** Secret Output; written only into a Kubernetes Secret. */
  readonly redisUrl?: pulumi.Input<string>;
}

export class Gateway extends pulumi.ComponentResource {
  readonly deployment: k8s.apps.v1.Deployment;
  readonly service: k8s.core.v1.Service;
  /** Full API keys by key name, a secret Output (stack output `gateway.apiKeys`). */
  readonly apiKeys: pulumi.Output<Record<string, string>>;
  /** SHA-256 of the mounted catalog: the pod template annotation. */
  readonly catalogChecksum: pulumi.Output<string>;
  /** In-cluster base URL of the OpenAI-style API. */
  readonly url: pulumi.Output<string>;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:gateway:Gateway", name, {}, opts);
    const cfg = args.config;
    const labels = gatewayLabels(cfg.labelDomain);
    const meta = (objectName: string) => ({ name: objectName, namespace: args.namespace, labels });
    const child = { parent: this, ...RETAIN };

    const catalogText = pulumi.output(args.catalog).apply(renderCatalog);
    this.catalogChecksum = catalogText.apply(catalogChecksum);
    const catalog = new k8s.core.v1.ConfigMap(OBJECT_NAMES.catalog, { metadata: meta(OBJECT_NAMES.catalog), data: { [CATALOG_FILE]: catalogText } }, child);

    const { keysFile, fullKeys } = issueKeys(cfg.apiKeys, this);
    this.apiKeys = fullKeys;
    // The data is derived from the secret random bytes: a secret itself, though it holds only hashes.
    const keys = new k8s.core.v1.Secret(
      OBJECT_NAMES.keys,
      { metadata: meta(OBJECT_NAMES.keys), type: "Opaque", stringData: { [KEYS_FILE]: pulumi.secret(keysFile) } },
      child,
    );

    const dependsOn: pulumi.Resource[] = [catalog, keys];
    if (args.redisUrl !== undefined) {
      dependsOn.push(
        new k8s.core.v1.Secret(
          OBJECT_NAMES.redis,
          { metadata: meta(OBJECT_NAMES.redis), type: "Opaque", stringData: { [REDIS_URL_KEY]: pulumi.secret(args.redisUrl) } },
          child,
        ),
      );
    }

    this.deployment = new k8s.apps.v1.Deployment(
      APP_NAME,
      {
        metadata: meta(APP_NAME),
        spec: this.catalogChecksum.apply((checksum) =>
          buildDeploymentSpec({
            labelDomain: cfg.labelDomain,
            image: cfg.image,
            imagePullPolicy: cfg.imagePullPolicy,
            imagePullSecrets: cfg.imagePullSecrets,
            replicas: cfg.replicas,
            resources: cfg.resources,
            shutdownGraceSeconds: cfg.shutdownGraceSeconds,
            logLevel: cfg.logLevel,
            env: cfg.env,
            catalogChecksum: checksum,
            redis: args.redisUrl !== undefined,
          }),
        ),
      },
      // The autoscaler owns the replica count after creation; `pulumi up` must not reset it.
      { ...child, dependsOn, ignoreChanges: ["spec.replicas"] },
    );

    new k8s.policy.v1.PodDisruptionBudget(APP_NAME, { metadata: meta(APP_NAME), spec: buildPdbSpec() }, child);
    new k8s.autoscaling.v2.HorizontalPodAutoscaler(
      APP_NAME,
      { metadata: meta(APP_NAME), spec: buildHpaSpec(cfg) },
      { ...child, dependsOn: [this.deployment] },
    );
    this.service = new k8s.core.v1.Service(APP_NAME, { metadata: meta(APP_NAME), spec: buildServiceSpec() }, child);

    new k8s.networking.v1.NetworkPolicy(
      APP_NAME,
      {
        metadata: meta(APP_NAME),
        spec: pulumi.all([args.servingNamespace, args.catalog]).apply(([servingNamespace, catalogInput]) =>
          buildNetworkPolicySpec({
            servingNamespace,
            upstreamNamespaces: upstreamNamespaces(catalogInput as CatalogInput),
            ingressNamespaces: cfg.ingressNamespaces,
            redis: cfg.redis,
          }),
        ),
      },
      child,
    );

    if (cfg.httpRoute) {
      // Not retained: taking `httpRoute` out of the configuration must really stop exposing the API.
      new k8s.apiextensions.CustomResource(
        APP_NAME,
        { apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata: meta(APP_NAME), spec: buildHttpRouteSpec(cfg.httpRoute) },
        { parent: this, dependsOn: [this.service] },
      );
    }

    this.url = pulumi.interpolate`http://${APP_NAME}.${args.namespace}.svc.cluster.local:${PORTS.service}/v1`;
    this.registerOutputs({ url: this.url, catalogChecksum: this.catalogChecksum, apiKeys: this.apiKeys });
  }
}

/**
 * One RandomBytes per declared key. Removing an entry deletes its resource and its hash (revocation); a new
 * `rotation` value or `pulumi up --replace <urn>` replaces it (rotation). Returns the keys file (hashes only) and
 * the full keys, both secret Outputs.
 */
function issueKeys(specs: readonly ApiKeySpec[], parent: pulumi.Resource) {
  const secrets = specs.map(
    (spec) => new random.RandomBytes(`${APP_NAME}-key-${spec.name}`, { length: KEY_BYTES, keepers: keyKeepers(spec) }, { parent }).base64,
  );
  const fullKeys = pulumi.all(secrets).apply((list) => list.map(apiKeyFromBase64));
  return {
    keysFile: fullKeys.apply((keys) => buildKeysFile(specs, keys)),
    fullKeys: pulumi.secret(fullKeys.apply((keys) => Object.fromEntries(specs.map((s, i) => [s.name, keys[i] as string])))),
  };
}
