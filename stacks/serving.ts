// The model-serving part of the program: every model referenced in `serving:models`, each as an InferencePool
// release then a model-server release, and the model catalog the gateway reads (exported, see docs/models.md).
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { CatalogInput } from "../gateway/src/config/catalog";
import type { Cluster } from "../infra/platform/cluster";
import { RETAIN } from "../infra/platform/retain";
import {
  assertGpuCapacity,
  buildCatalog,
  catalogYaml,
  gpuUsage,
  loadModelFolders,
  PART_OF,
  planModels,
  type PlannedModel,
  ServedModel,
  type ServingConfig,
} from "../infra/serving";

export interface ServingOutputs {
  readonly namespace: pulumi.Output<string> | string;
  /** `<category>/<model>` of every deployed model. */
  readonly models: string[];
  /** The gateway's catalog (CatalogSchema input form) and the same as YAML, ready for a ConfigMap. */
  readonly catalog: CatalogInput;
  readonly catalogYaml: string;
  /** GPUs requested per node group against `serving:gpuCapacity` (what the preflight checked). */
  readonly gpus: Record<string, { requested: number; capacity: number }>;
}

/** What the serving part will deploy, checked before anything is declared. */
export interface ServingPlan {
  readonly cfg: ServingConfig;
  readonly models: readonly PlannedModel[];
  /** The gateway's catalog of these models (CatalogSchema input form). */
  readonly catalog: CatalogInput;
}

/**
 * Folders (all of them), references, GPU capacity, then the catalog the gateway will read: any problem fails here,
 * before a resource exists. `clusterDomain` places the models' in-cluster addresses.
 */
export function planServing(cfg: ServingConfig, clusterDomain: string): ServingPlan {
  const folders = loadModelFolders(cfg.modelsDir);
  const models = planModels(cfg.models, cfg.replicas, folders, cfg.modelsDir);
  assertGpuCapacity(models, cfg.gpuCapacity);
  const catalog = buildCatalog(models, { namespace: cfg.namespace, clusterDomain, inferenceGatewayUrl: cfg.inferenceGatewayUrl });
  return { cfg, models, catalog };
}

/** The CRDs the plan's objects need: the InferencePool kinds the folders use, and HTTPRoute when routes are on. */
export function servingCrdNeeds(plan: ServingPlan): { inferencePool: string[]; gatewayApi: boolean } {
  const groups = [...new Set(plan.models.map((m) => m.def.poolApiGroup))].sort();
  return { inferencePool: groups.map((g) => `inferencepools.${g}`), gatewayApi: plan.cfg.parentGateway !== undefined };
}

export interface ServingCrds {
  readonly inferencePool: pulumi.Resource[];
  readonly gatewayApi: pulumi.Resource[];
}

export function deployServing(cluster: Cluster, plan: ServingPlan, crds: ServingCrds): ServingOutputs {
  const { cfg, models: planned, catalog } = plan;

  // The namespace outlives the stack part (other things may live in it); the models themselves do not.
  const namespace = cfg.createNamespace
    ? new k8s.core.v1.Namespace(
        cfg.namespace,
        { metadata: { name: cfg.namespace, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" } } },
        { ...RETAIN, provider: cluster.provider },
      ).metadata.name
    : cfg.namespace;

  for (const model of planned) {
    new ServedModel(
      model.def.slug,
      {
        model,
        namespace,
        namespaceName: cfg.namespace,
        labelDomain: cfg.labelDomain,
        charts: cfg.charts,
        parentGateway: cfg.parentGateway,
        gatewayProvider: cfg.gatewayProvider,
        modelRegistryUrl: cfg.modelRegistryUrl,
        clusterDomain: cluster.domain,
        startupTimeout: cfg.startupTimeout,
        awaitModelServers: cfg.awaitModelServers,
        crds,
      },
      { providers: { kubernetes: cluster.provider } },
    );
  }

  return {
    namespace,
    models: planned.map((m) => m.def.ref),
    catalog,
    catalogYaml: catalogYaml(catalog),
    gpus: Object.fromEntries(gpuUsage(planned, cfg.gpuCapacity).map((u) => [u.pool, { requested: u.requested, capacity: u.capacity ?? 0 }])),
  };
}
