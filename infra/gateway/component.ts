// The gateway component: catalog ConfigMap, API keys (random → hash → Secret), the rate-limit store (a deployed
// Valkey, or an external Redis's URL in a Secret), Deployment, PodDisruptionBudget, HorizontalPodAutoscaler, Service,
// NetworkPolicy, when `gateway:exposure` is set what exposes it outside the cluster (exposure-resources.ts), and when
// `gateway:usageLedger` is set the ledger's credentials and its bucket Job (usage-ledger-resources.ts).
//
// Nothing here is retained (docs/lifecycle.md): removing the gateway from the stack must stop the API; an orphaned
// gateway would keep serving keys the stack can no longer revoke. Its namespace is created (and retained) by the root.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { CatalogInput } from "../../gateway/src/config/catalog";
import type { DnsSettings } from "../platform/cluster-config";
import { digestAnnotation, secretDigest } from "../platform/secret-digest";
import { catalogChecksum, renderCatalog } from "./catalog";
import type { ApiKeySpec, GatewayConfig, GatewaySecrets } from "./config";
import { APP_NAME, CATALOG_FILE, KEYS_FILE, OBJECT_NAMES, PORTS, REDIS_URL_KEY, RESPONSE_ID_SECRET_KEY, UPSTREAM_API_KEY_KEY } from "./constants";
import { apiKeyFromBase64, buildKeysFile, KEY_BYTES, keyKeepers } from "./keys";
import { gatewayLabels } from "./labels";
import { providedTlsSecret } from "./exposure-config";
import { declareExposure } from "./exposure-resources";
import { buildNetworkPolicySpec, upstreamPeers } from "./network";
import {
  buildRedisDeploymentSpec,
  buildRedisNetworkPolicySpec,
  buildRedisServiceSpec,
  REDIS_CONF_KEY,
  REDIS_NAME,
  redisConf,
  redisLabels,
  redisUrl,
} from "./redis-builders";
import { buildDeploymentSpec, buildHpaSpec, buildPdbSpec, buildServiceSpec } from "./workload";
import { declareUsageLedger } from "./usage-ledger-resources";

export interface GatewayArgs {
  /** The validated `gateway:` configuration (its catalog and serving namespace are overridden below). */
  readonly config: GatewayConfig;
  readonly namespace: pulumi.Input<string>;
  /** The model catalog, e.g. the serving part's output; validated against the gateway's schema. */
  readonly catalog: pulumi.Input<CatalogInput>;
  /** Where the model servers run: the only upstream namespace the NetworkPolicy always allows. */
  readonly servingNamespace: pulumi.Input<string>;
  /** Namespace of the metrics server, the only one allowed on the metrics port. */
  readonly monitoringNamespace: string;
  /** Secret Output of an external Redis (`gateway:redisUrl`); written only into a Kubernetes Secret. */
  readonly redisUrl?: pulumi.Input<string>;
  /** Secret: the key the model servers require, sent upstream; "" or undefined for none. */
  readonly upstreamApiKey?: pulumi.Input<string>;
  /** The cluster's DNS domain and DNS servers. */
  readonly clusterDomain: string;
  readonly dns: DnsSettings;
  /** The gateway namespace's labels as the cluster holds them (an existing Gateway's `allowedRoutes` may select them). */
  readonly namespaceLabels: Readonly<Record<string, string>>;
  /** What the exposure waits for: the Gateway API CRDs and cert-manager's (installed or proved present). */
  readonly gatewayApiReady?: readonly pulumi.Resource[];
  readonly certManagerReady?: readonly pulumi.Resource[];
  /** Set the images' user ids (false where the cluster assigns them). */
  readonly fixedUserIds: boolean;
  /** The stack's key for secret digests on pod templates (platform/secret-digest.ts). */
  readonly digestKey: pulumi.Input<string>;
  /** Secret Outputs of the usage ledger's keys (`gateway:usageLedger*` secrets), when the stack holds them. */
  readonly usageLedgerKeys?: GatewaySecrets["usageLedger"];
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
  /** With `gateway:usageLedger`: the IAM policy (JSON document) to attach to the gateway's ledger credentials. */
  readonly usageLedgerPolicy?: Record<string, unknown>;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:gateway:Gateway", name, {}, opts);
    const cfg = args.config;
    const labels = gatewayLabels(cfg.labelDomain);
    const meta = (objectName: string, objectLabels = labels) => ({ name: objectName, namespace: args.namespace, labels: objectLabels });
    const child = { parent: this };

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

    const redis = this.rateLimitStore(args, meta);
    const upstream = args.upstreamApiKey === undefined ? undefined : this.upstreamKey(args.upstreamApiKey, args.digestKey, meta);
    const responseIds = this.responseIdSecret(args.digestKey, meta);
    const ledger = cfg.usageLedger
      ? declareUsageLedger(this, { ledger: cfg.usageLedger, keys: args.usageLedgerKeys, namespace: args.namespace, labelDomain: cfg.labelDomain, labels, digestKey: args.digestKey, fixedUserIds: args.fixedUserIds })
      : undefined;
    this.usageLedgerPolicy = ledger?.policy;
    const dependsOn: pulumi.Resource[] = [catalog, keys, responseIds.secret, ...(redis?.resources ?? []), ...(upstream ? [upstream.secret] : []), ...(ledger?.resources ?? [])];

    this.deployment = new k8s.apps.v1.Deployment(
      APP_NAME,
      {
        metadata: meta(APP_NAME),
        spec: pulumi.all([this.catalogChecksum, redis?.urlDigest, upstream?.digest, responseIds.digest, ledger?.digest]).apply(([checksum, redisDigest, upstreamDigest, responseIdsDigest, ledgerDigest]) =>
          buildDeploymentSpec({
            labelDomain: cfg.labelDomain,
            image: cfg.image,
            imagePullPolicy: cfg.imagePullPolicy,
            imagePullSecrets: cfg.imagePullSecrets,
            resources: cfg.resources,
            shutdownGraceSeconds: cfg.shutdownGraceSeconds,
            logLevel: cfg.logLevel,
            corsOrigins: cfg.corsOrigins,
            traces: cfg.traces,
            env: cfg.env,
            catalogChecksum: checksum,
            redis: redis !== undefined,
            upstreamApiKey: upstream !== undefined,
            tlsCertSecret: providedTlsSecret(cfg.exposure),
            fixedUserIds: args.fixedUserIds,
            usageLedger: cfg.usageLedger,
            serviceAccountName: ledger?.serviceAccountName,
            extraAnnotations: {
              ...(redisDigest ? { [digestAnnotation("redis-url")]: redisDigest } : {}),
              // The key is read at start: a new one must roll the pods.
              ...(upstreamDigest ? { [digestAnnotation("upstream-api-key")]: upstreamDigest } : {}),
              [digestAnnotation("response-id-secret")]: responseIdsDigest,
              // Keys and role are read at start: new ones must roll the pods.
              ...(ledgerDigest ? { [digestAnnotation("usage-ledger-credentials")]: ledgerDigest } : {}),
            },
          }),
        ),
      },
      { ...child, dependsOn },
    );

    new k8s.policy.v1.PodDisruptionBudget(APP_NAME, { metadata: meta(APP_NAME), spec: buildPdbSpec() }, child);
    new k8s.autoscaling.v2.HorizontalPodAutoscaler(APP_NAME, { metadata: meta(APP_NAME), spec: buildHpaSpec(cfg) }, { ...child, dependsOn: [this.deployment] });
    this.service = new k8s.core.v1.Service(APP_NAME, { metadata: meta(APP_NAME), spec: buildServiceSpec() }, child);

    new k8s.networking.v1.NetworkPolicy(
      APP_NAME,
      {
        metadata: meta(APP_NAME),
        spec: pulumi.all([args.servingNamespace, args.catalog]).apply(([servingNamespace, catalogInput]) =>
          buildNetworkPolicySpec({
            servingNamespace,
            upstreams: upstreamPeers(catalogInput as CatalogInput),
            extraEgress: cfg.extraEgress,
            ingressNamespaces: cfg.ingressNamespaces,
            exposureFrom: cfg.exposure?.from,
            monitoringNamespace: args.monitoringNamespace,
            dns: args.dns,
            redis: cfg.redis,
            traces: cfg.traces,
            usageLedger: cfg.usageLedger,
          }),
        ),
      },
      child,
    );

    if (cfg.exposure) {
      declareExposure(this, {
        exposure: cfg.exposure,
        namespace: args.namespace,
        namespaceName: cfg.namespace,
        namespaceLabels: args.namespaceLabels,
        labels,
        gatewayEnv: cfg.env,
        service: this.service,
        gatewayApiReady: args.gatewayApiReady ?? [],
        certManagerReady: args.certManagerReady ?? [],
      });
    }

    this.url = pulumi.output(args.namespace).apply((ns) => `http://${APP_NAME}.${ns}.svc.${args.clusterDomain}:${PORTS.service}/v1`);
    this.registerOutputs({ url: this.url, catalogChecksum: this.catalogChecksum, apiKeys: this.apiKeys, usageLedgerPolicy: this.usageLedgerPolicy });
  }

  /**
   * The Secret with the Redis URL the gateway reads (GATEWAY_REDIS_URL), and for a deployed store its server:
   * random password → config and URL in one Secret → Deployment, Service, NetworkPolicy.
   */
  /**
   * The secret every replica signs stored-response ids with (GATEWAY_RESPONSE_ID_SECRET), so a follow-up reaches the
   * model server that holds the response through any replica, restarted or not, without Redis. Generated once and
   * kept in the stack's state; replacing it makes earlier ids unknown (404), so nothing rotates it by itself.
   */
  private responseIdSecret(digestKey: pulumi.Input<string>, meta: (name: string) => Record<string, unknown>) {
    const value = new random.RandomPassword(`${APP_NAME}-response-id-secret`, { length: 48, special: false }, { parent: this }).result;
    const secret = new k8s.core.v1.Secret(
      OBJECT_NAMES.responseIds,
      { metadata: meta(OBJECT_NAMES.responseIds), type: "Opaque", stringData: { [RESPONSE_ID_SECRET_KEY]: value } },
      { parent: this },
    );
    return { secret, digest: secretDigest(digestKey, "response-id-secret", value) };
  }

  /** The model servers' key, only ever in a Secret the gateway's env reads; an empty one (none upstream) is left out. */
  private upstreamKey(key: pulumi.Input<string>, digestKey: pulumi.Input<string>, meta: (name: string) => Record<string, unknown>) {
    const secret = new k8s.core.v1.Secret(
      OBJECT_NAMES.upstream,
      { metadata: meta(OBJECT_NAMES.upstream), type: "Opaque", stringData: { [UPSTREAM_API_KEY_KEY]: pulumi.secret(key) } },
      { parent: this },
    );
    return { secret, digest: secretDigest(digestKey, "upstream-api-key", key) };
  }

  private rateLimitStore(
    args: GatewayArgs,
    meta: (name: string, labels?: Record<string, string>) => Record<string, unknown>,
  ): { resources: pulumi.Resource[]; urlDigest: pulumi.Output<string> } | undefined {
    const setting = args.config.redis;
    const child = { parent: this };
    if (!setting) return undefined;
    if (setting.mode === "external") {
      // External mode exists only with gateway:redisUrl set (config.ts), so the URL is there.
      const url = args.redisUrl as pulumi.Input<string>;
      const secret = new k8s.core.v1.Secret(
        OBJECT_NAMES.redis,
        { metadata: meta(OBJECT_NAMES.redis), type: "Opaque", stringData: { [REDIS_URL_KEY]: pulumi.secret(url) } },
        child,
      );
      return { resources: [secret], urlDigest: secretDigest(args.digestKey, "redis-url", url) };
    }
    const password = new random.RandomPassword(`${REDIS_NAME}-password`, { length: 32, special: false }, child).result;
    const url = pulumi.all([password, args.namespace]).apply(([pw, ns]) => redisUrl(pw, ns, args.clusterDomain));
    const conf = password.apply(redisConf);
    const secret = new k8s.core.v1.Secret(
      REDIS_NAME,
      { metadata: meta(REDIS_NAME, redisLabels()), type: "Opaque", stringData: { [REDIS_URL_KEY]: pulumi.secret(url), [REDIS_CONF_KEY]: pulumi.secret(conf) } },
      child,
    );
    const deployment = new k8s.apps.v1.Deployment(
      REDIS_NAME,
      {
        metadata: meta(REDIS_NAME, redisLabels()),
        spec: secretDigest(args.digestKey, "redis-config", conf).apply((configDigest) =>
          buildRedisDeploymentSpec({ image: setting.image, configDigest, secretName: REDIS_NAME, fixedUserIds: args.fixedUserIds, labelDomain: args.config.labelDomain }),
        ),
      },
      { ...child, dependsOn: [secret] },
    );
    const service = new k8s.core.v1.Service(REDIS_NAME, { metadata: meta(REDIS_NAME, redisLabels()), spec: buildRedisServiceSpec() }, child);
    new k8s.networking.v1.NetworkPolicy(REDIS_NAME, { metadata: meta(REDIS_NAME, redisLabels()), spec: buildRedisNetworkPolicySpec() }, child);
    return { resources: [secret, deployment, service], urlDigest: secretDigest(args.digestKey, "redis-url", url) };
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
