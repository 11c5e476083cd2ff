// One served model: its InferencePool release, then its model-server release (the pool and its endpoint picker
// exist before pods register), a headless Service over its ready pods, and an HTTPRoute when a Gateway is given.
// Nothing here is retainOnDelete: removing a model from `serving:models` and applying stops serving it.
// The pool waits for the InferencePool CRDs and the route for the Gateway API CRDs (infra/platform/crds.ts).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SERVER_PREFIX } from "./constants";
import { awaitAnnotations, type StartupTimeout } from "./startup";
import type { PlannedModel } from "./plan";
import {
  buildHttpRoute,
  buildInferencePoolValues,
  buildModelServerValues,
  buildReplicaService,
  modelObjectName,
  type ParentGateway,
  poolReleaseName,
} from "./values";

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
  readonly modelRegistryUrl?: string;
  /** The cluster's DNS domain (`cluster:domain`). */
  readonly clusterDomain: string;
  /** How long `pulumi up` waits for the model servers (startup.ts), or not at all. */
  readonly startupTimeout: StartupTimeout;
  readonly awaitModelServers: boolean;
  /** What creates (or proves) the CRDs: the pool release waits for the InferencePool ones, the route for Gateway API's. */
  readonly crds: { readonly inferencePool: pulumi.Input<pulumi.Resource>[]; readonly gatewayApi: pulumi.Input<pulumi.Resource>[] };
}

function inNamespace(obj: Record<string, unknown>, namespace: pulumi.Input<string>): Record<string, unknown> {
  return { ...obj, metadata: { ...(obj.metadata as Record<string, unknown>), namespace } };
}

export class ServedModel extends pulumi.ComponentResource {
  readonly pool: k8s.helm.v4.Chart;
  readonly server: k8s.helm.v4.Chart;
  readonly replicaService: k8s.core.v1.Service;
  readonly route?: k8s.apiextensions.CustomResource;

  constructor(name: string, args: ServedModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:serving:Model", name, {}, opts);
    const { def, replicas } = args.model;
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
        }),
      },
      { parent: this, dependsOn: args.crds.inferencePool },
    );

    // llm-d installs gaie before ms (helmfile `needs`): pods join a pool whose picker already watches them.
    this.server = new k8s.helm.v4.Chart(
      serverName,
      {
        name: serverName,
        chart: args.charts.modelService,
        namespace: args.namespace,
        values: buildModelServerValues(def, {
          labelDomain: args.labelDomain,
          replicas,
          modelRegistryUrl: args.modelRegistryUrl,
          deploymentAnnotations: awaitAnnotations(def.weightsGiB, args.startupTimeout, args.awaitModelServers),
        }),
      },
      { parent: this, dependsOn: [this.pool] },
    );

    this.replicaService = new k8s.core.v1.Service(
      modelObjectName(def.slug),
      inNamespace(buildReplicaService(def, args.namespaceName, args.labelDomain), args.namespace) as k8s.core.v1.ServiceArgs,
      { parent: this },
    );

    if (args.parentGateway) {
      this.route = new k8s.apiextensions.CustomResource(
        modelObjectName(def.slug),
        inNamespace(buildHttpRoute(def, args.namespaceName, args.labelDomain, args.parentGateway), args.namespace) as k8s.apiextensions.CustomResourceArgs,
        { parent: this, dependsOn: [this.pool, ...args.crds.gatewayApi] },
      );
    }

    this.registerOutputs({ pool: poolName, server: serverName, replicaService: modelObjectName(def.slug) });
  }
}
