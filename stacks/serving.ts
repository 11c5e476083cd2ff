// The model-serving part of the program: every model referenced in `serving:models`, each as an InferencePool
// release then a model-server release, and the model catalog the gateway reads (exported, see README).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CatalogInput } from "../gateway/src/config/catalog";
import { hasNamespace } from "../infra/platform/config";
import { RETAIN } from "../infra/platform/retain";
import {
  assertGpuCapacity,
  buildCatalog,
  catalogYaml,
  CONFIG_NAMESPACE,
  gpuUsage,
  loadModelFolders,
  loadServingConfig,
  PART_OF,
  planModels,
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

export function deployServing(cfg: ServingConfig = loadServingConfig()): ServingOutputs {
  // Everything is checked before anything is declared: folders (all of them), references, then GPU capacity.
  const folders = loadModelFolders(cfg.modelsDir);
  const planned = planModels(cfg.models, cfg.replicas, folders, cfg.modelsDir);
  assertGpuCapacity(planned, cfg.gpuCapacity);
  const catalog = buildCatalog(planned, { namespace: cfg.namespace, inferenceGatewayUrl: cfg.inferenceGatewayUrl });

  // The namespace outlives the stack part (other things may live in it); the models themselves do not.
  const namespace = cfg.createNamespace
    ? new k8s.core.v1.Namespace(
        cfg.namespace,
        { metadata: { name: cfg.namespace, labels: { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" } } },
        RETAIN,
      ).metadata.name
    : cfg.namespace;

  for (const model of planned) {
    new ServedModel(model.def.slug, {
      model,
      namespace,
      namespaceName: cfg.namespace,
      labelDomain: cfg.labelDomain,
      charts: cfg.charts,
      parentGateway: cfg.parentGateway,
      gatewayProvider: cfg.gatewayProvider,
      modelRegistryUrl: cfg.modelRegistryUrl,
    });
  }

  return {
    namespace,
    models: planned.map((m) => m.def.ref),
    catalog,
    catalogYaml: catalogYaml(catalog),
    gpus: Object.fromEntries(gpuUsage(planned, cfg.gpuCapacity).map((u) => [u.pool, { requested: u.requested, capacity: u.capacity ?? 0 }])),
  };
}

/** Deploys the serving part only when the stack has a `serving:` namespace. */
export function deployServingIfConfigured(): ServingOutputs | undefined {
  return hasNamespace(CONFIG_NAMESPACE) ? deployServing() : undefined;
}
