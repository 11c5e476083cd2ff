// One served model: its InferencePool release, its weights (a persistent cache volume and the Job that fills it),
// then its model-server release (the pool and its endpoint picker exist before pods register, the weights are on the
// volume before a server starts), a headless Service over its ready pods, and an HTTPRoute when a Gateway is given.
// Models are not retainOnDelete: removing one from `serving:models` and applying stops serving it. Its cache volume
// is kept unless `serving:weightsCache.retain` is false. The pool waits for the InferencePool CRDs and the route for
// the Gateway API CRDs (infra/platform/crds.ts). Each server role and the picker have a disruption budget
// (disruption.ts).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { awaitFor, REPLACE_UNREADY_ANNOTATION, SKIP_AWAIT_ANNOTATION } from "../platform/await-annotations";
import { IMMUTABLE_FIELDS } from "../platform/retain";
import { digestAnnotation } from "../platform/secret-digest";
import { containerSecurityContext, type PodIdentity, podSecurityContext } from "../platform/security";
import { SERVER_PREFIX } from "./constants";
import { fixedHealthCheckPortTransform } from "./gke-health-check";
import type { PlannedModel } from "./plan";
import { type Rollout, withRollout } from "./rollout";
import { buildScaledObject, isScaledDeployment } from "./scaled-object";
import { type StartupTimeout, startupTimeoutSeconds } from "./startup";
import {
  buildHttpRoute,
  buildInferencePoolValues,
  buildReplicaService,
  cacheUriOf,
  modelObjectName,
  nodePlacement,
  type ModelServerValuesArgs,
  type ParentGateway,
  platformPodLabels,
  poolReleaseName,
  serverValuesFor,
} from "./values";
import { adapterDownloads, adaptersGiB } from "./lora";
import { modelServerBudgets, pickerBudget } from "./disruption";
import { buildCacheClaimSpec, buildDownloadJobSpec, cacheClaimName, cacheSizeGiB, downloadJobName } from "./weights";

/** Where a model's weights come from and how they are kept (the stack's part; the folder's is in the model). */
export interface WeightsArgs {
  readonly cache: { readonly accessMode: "ReadWriteMany" | "ReadWriteOnce"; readonly storageClass?: string; readonly retain: boolean };
  readonly downloadTimeout: StartupTimeout;
  /** HF-compatible internal registry (HF_ENDPOINT of hf:// downloads); default the Hub. */
  readonly registryUrl?: string;
  /** Secret holding HF_TOKEN, when the stack has one. */
  readonly tokenSecret?: string;
  /** Object store of s3:// weights and the Secret with its credentials. */
  readonly s3?: { readonly endpoint: string; readonly region: string; readonly credentialsSecret: string; readonly image: string };
  /** The download Job's user (cluster:fixedUserIds), so it can write the volume. */
  readonly identity?: PodIdentity;
}

export interface ServedModelArgs {
  readonly model: PlannedModel;
  /** Namespace as an Input (the Namespace resource's name when the stack creates it, so everything waits for it). */
  readonly namespace: pulumi.Input<string>;
  /** The same namespace as plain text, for names built into values (EPP host). */
  readonly namespaceName: string;
  readonly labelDomain: string;
  readonly charts: { readonly modelService: string; readonly inferencePool: string };
  readonly parentGateway?: ParentGateway;
  readonly gatewayProvider?: "none" | "istio" | "gke";
  /** The cluster's DNS domain (`cluster:domain`). */
  readonly clusterDomain: string;
  /** How long a server may take to load (`pulumi up`'s wait and the startup probe), and whether `up` waits at all. */
  readonly startupTimeout: StartupTimeout;
  readonly awaitModelServers: boolean;
  readonly weights: WeightsArgs;
  readonly rollout: Rollout;
  /** How long a stopping server drains (model.yaml `drainSeconds` wins). */
  readonly drainSeconds: number;
  /** vLLM stores Responses API answers (`serving:responsesStore`). */
  readonly responsesStore?: boolean;
  /** The platform's API key for the model servers: its Secret (stacks/serving.ts), and a digest of its value. */
  readonly apiKey: pulumi.Resource;
  /** On the pod template: vLLM reads the key at start, so a rotated key must roll the pods. */
  readonly apiKeyDigest?: pulumi.Input<string>;
  /** What monitoring needs from the releases (the composition root's): scrape annotations, picker pod metadata. */
  readonly observability?: {
    readonly serverPodAnnotations?: ModelServerValuesArgs["podAnnotations"];
    readonly poolTransforms?: pulumi.ResourceTransform[];
    readonly eppMetricsAuth?: boolean;
  };
  /** What an autoscaled model's ScaledObject needs: the metrics server, the gateway's namespace, KEDA's CRDs. */
  readonly autoscaler?: {
    readonly serverAddress: string;
    readonly gatewayNamespace: string;
    readonly ready: pulumi.Input<pulumi.Resource>[];
  };
  /** Created only after these (the outgoing model of a swap, scaled to zero). */
  readonly after?: pulumi.Input<pulumi.Resource>[];
  /** What creates (or proves) the CRDs: the pool release waits for the InferencePool ones, the route for Gateway API's. */
  readonly crds: { readonly inferencePool: pulumi.Input<pulumi.Resource>[]; readonly gatewayApi: pulumi.Input<pulumi.Resource>[] };
}

function inNamespace(obj: Record<string, unknown>, namespace: pulumi.Input<string>): Record<string, unknown> {
  return { ...obj, metadata: { ...(obj.metadata as Record<string, unknown>), namespace } };
}

/** The values with one more pod annotation on every role that has pods (an Input: the digest is an Output). */
function withPodAnnotation(values: Record<string, unknown>, key: string, value: pulumi.Input<string> | undefined): Record<string, unknown> {
  if (value === undefined) return values;
  for (const role of ["decode", "prefill"]) {
    const r = values[role] as { create?: boolean; podAnnotations?: Record<string, unknown> } | undefined;
    if (r && r.create !== false) r.podAnnotations = { ...(r.podAnnotations ?? {}), [key]: value };
  }
  return values;
}

/** Sets the model's rollout strategy on the Deployments the chart renders (the chart has no key for it). */
function rolloutTransform(rollout: Rollout): pulumi.ResourceTransform {
  return (args) => (args.type === "kubernetes:apps/v1:Deployment" ? { props: withRollout(args.props as Record<string, unknown>, rollout), opts: args.opts } : undefined);
}

/**
 * Leaves the scaled decode Deployment's `spec.replicas` to KEDA and its HPA. The chart always renders the field, and
 * with patch force every `pulumi up` would set it back; ignoreChanges makes the provider drop the field from its
 * server-side apply when another manager owns it (and send the live value otherwise), so the count is kept. On
 * create the rendered value (`minReplicas`) is used.
 */
function keepScaledReplicas(model: PlannedModel): pulumi.ResourceTransform {
  return (args) =>
    isScaledDeployment(args.props as Record<string, never>, model.def) ? { props: args.props, opts: pulumi.mergeOptions(args.opts, { ignoreChanges: ["spec.replicas"] }) } : undefined;
}

export class ServedModel extends pulumi.ComponentResource {
  readonly pool: k8s.helm.v4.Chart;
  readonly server: k8s.helm.v4.Chart;
  readonly replicaService: k8s.core.v1.Service;
  readonly route?: k8s.apiextensions.CustomResource;
  readonly cache?: k8s.core.v1.PersistentVolumeClaim;
  readonly download?: k8s.batch.v1.Job;
  readonly scaledObject?: k8s.apiextensions.CustomResource;
  /** The PodDisruptionBudgets of the server roles and of the picker. */
  readonly budgets: k8s.policy.v1.PodDisruptionBudget[];

  constructor(name: string, args: ServedModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:serving:Model", name, {}, opts);
    const { def } = args.model;
    const poolName = poolReleaseName(def.slug);
    const serverName = `${SERVER_PREFIX}${def.slug}`;

    this.pool = new k8s.helm.v4.Chart(
      poolName,
      {
        name: poolName,
        chart: args.charts.inferencePool,
        namespace: args.namespace,
        values: buildInferencePoolValues(def, {
          labelDomain: args.labelDomain,
          namespace: args.namespaceName,
          clusterDomain: args.clusterDomain,
          gatewayProvider: args.gatewayProvider,
          eppMetricsAuth: args.observability?.eppMetricsAuth,
        }),
      },
      {
        parent: this,
        dependsOn: args.crds.inferencePool,
        transforms: [...(args.observability?.poolTransforms ?? []), ...(args.gatewayProvider === "gke" ? [fixedHealthCheckPortTransform] : [])],
      },
    );

    if (cacheUriOf(def) && def.weightsSource.kind !== "volume" && def.weightsInfo) {
      const w = args.weights;
      const immutable = IMMUTABLE_FIELDS["kubernetes:core/v1:PersistentVolumeClaim"] ?? [];
      this.cache = new k8s.core.v1.PersistentVolumeClaim(
        cacheClaimName(def.slug),
        {
          metadata: {
            name: cacheClaimName(def.slug),
            namespace: args.namespace,
            labels: platformPodLabels(def, args.labelDomain),
            // Bound only when the download Job mounts it (WaitForFirstConsumer classes): the Job's wait covers it.
            annotations: { [SKIP_AWAIT_ANNOTATION]: "true" },
          },
          spec: buildCacheClaimSpec({
            slug: def.slug,
            sizeGiB: cacheSizeGiB(def.weightsInfo.sizeGiB, def.weightsInfo.cacheGiB, adaptersGiB(def.lora)),
            accessMode: w.cache.accessMode,
            storageClass: w.cache.storageClass,
          }),
        },
        { parent: this, retainOnDelete: w.cache.retain, ignoreChanges: [...immutable] },
      );
      const placement = nodePlacement(def, args.labelDomain);
      const spec = buildDownloadJobSpec({
        slug: def.slug,
        source: def.weightsSource,
        revision: def.weightsInfo.revision,
        images: { hf: def.serverValues.decode.containers[0]?.image as string, s3: w.s3?.image },
        adapters: adapterDownloads(def.lora),
        registryUrl: w.registryUrl,
        tokenSecret: w.tokenSecret,
        s3: w.s3,
        nodeSelector: placement.nodeSelector,
        tolerations: placement.tolerations,
        podSecurityContext: podSecurityContext(w.identity),
        containerSecurityContext: containerSecurityContext(w.identity),
        labels: { ...platformPodLabels(def, args.labelDomain), "app.kubernetes.io/component": "weights-download" },
      });
      const jobName = downloadJobName(def.slug, spec);
      this.download = new k8s.batch.v1.Job(
        `weights-download-${def.slug}`,
        {
          metadata: {
            name: jobName,
            namespace: args.namespace,
            labels: platformPodLabels(def, args.labelDomain),
            annotations: { ...REPLACE_UNREADY_ANNOTATION, ...awaitFor(startupTimeoutSeconds(def.weightsInfo.sizeGiB, w.downloadTimeout), args.awaitModelServers) },
          },
          spec: spec as unknown as k8s.types.input.batch.v1.JobSpec,
        },
        { parent: this, dependsOn: [this.cache], deleteBeforeReplace: true },
      );
    }

    // llm-d installs gaie before ms (helmfile `needs`): pods join a pool whose picker already watches them.
    this.server = new k8s.helm.v4.Chart(
      serverName,
      {
        name: serverName,
        chart: args.charts.modelService,
        namespace: args.namespace,
        values: withPodAnnotation(
          serverValuesFor(args.model, {
            labelDomain: args.labelDomain,
            startupTimeout: args.startupTimeout,
            awaitModelServers: args.awaitModelServers,
            drainSeconds: args.drainSeconds,
            responsesStore: args.responsesStore,
            podAnnotations: () => args.observability?.serverPodAnnotations,
          }),
          digestAnnotation("api-key"),
          def.vllm ? args.apiKeyDigest : undefined,
        ),
      },
      {
        parent: this,
        dependsOn: [this.pool, args.apiKey, ...(this.download ? [this.download] : []), ...(args.after ?? [])],
        transforms: [rolloutTransform(args.rollout), ...(args.model.autoscaling ? [keepScaledReplicas(args.model)] : [])],
      },
    );

    if (args.model.autoscaling) {
      if (!args.autoscaler) throw new Error(`${def.ref} autoscales but the stack gave no autoscaler (KEDA)`);
      this.scaledObject = new k8s.apiextensions.CustomResource(
        modelObjectName(def.slug),
        inNamespace(
          buildScaledObject(args.model, args.labelDomain, {
            namespace: args.namespaceName,
            labelDomain: args.labelDomain,
            gatewayNamespace: args.autoscaler.gatewayNamespace,
            serverAddress: args.autoscaler.serverAddress,
            startupBudgetSeconds: startupTimeoutSeconds(def.weightsGiB, args.startupTimeout),
          }),
          args.namespace,
        ) as k8s.apiextensions.CustomResourceArgs,
        { parent: this, dependsOn: [this.server, ...args.autoscaler.ready] },
      );
    }

    this.replicaService = new k8s.core.v1.Service(
      modelObjectName(def.slug),
      inNamespace(buildReplicaService(def, args.namespaceName, args.labelDomain), args.namespace) as k8s.core.v1.ServiceArgs,
      { parent: this },
    );

    this.budgets = [...modelServerBudgets(def, args.labelDomain), pickerBudget(def, args.labelDomain)].map(
      (b) => new k8s.policy.v1.PodDisruptionBudget(b.name, { metadata: { name: b.name, namespace: args.namespace, labels: b.labels }, spec: b.spec }, { parent: this }),
    );

    if (args.parentGateway) {
      this.route = new k8s.apiextensions.CustomResource(
        modelObjectName(def.slug),
        inNamespace(buildHttpRoute(def, args.namespaceName, args.labelDomain, args.parentGateway), args.namespace) as k8s.apiextensions.CustomResourceArgs,
        { parent: this, dependsOn: [this.pool, ...args.crds.gatewayApi] },
      );
    }

    this.registerOutputs({
      pool: poolName,
      server: serverName,
      replicaService: modelObjectName(def.slug),
      cache: this.cache ? cacheClaimName(def.slug) : undefined,
      budgets: this.budgets.map((b) => b.metadata.name),
    });
  }
}
