// The model catalog the gateway reads, built from the deployed models, in the gateway's own schema
// (gateway/src/config/catalog.ts) and validated with it, so the gateway deployment can mount it as is.
import { stringify } from "yaml";
import { type CatalogInput, CatalogSchema } from "../../gateway/src/config/catalog";
import { serviceHost } from "../platform/cluster-config";
import { catalogLora } from "./lora";
import type { PlannedModel } from "./plan";
import { modelObjectName, poolPathPrefix } from "./values";

export interface CatalogArgs {
  readonly namespace: string;
  /** The cluster's DNS domain (`cluster:domain`). */
  readonly clusterDomain: string;
  /** When set, every model goes through its InferencePool behind this Gateway URL (`mode: pool`). */
  readonly inferenceGatewayUrl?: string;
}

/** In-cluster DNS name of a model's headless replica Service. */
export function replicaServiceHost(slug: string, namespace: string, clusterDomain: string): string {
  return serviceHost(modelObjectName(slug), namespace, clusterDomain);
}

type UpstreamInput = CatalogInput["models"][number]["upstream"];

/**
 * dns mode: the headless Service of the ready pods. pool mode: the InferencePool behind the inference gateway, listed
 * while that same Service has an address. Embedders are always dns: an endpoint picker parses only chat and
 * completions bodies.
 */
function upstreamOf(m: PlannedModel, args: CatalogArgs): UpstreamInput {
  const replicas = { host: replicaServiceHost(m.def.slug, args.namespace, args.clusterDomain), port: m.def.servingPort };
  if (args.inferenceGatewayUrl && m.def.category === "generative") {
    return { mode: "pool", url: `${args.inferenceGatewayUrl}${poolPathPrefix(m.def.slug)}`, readiness: replicas };
  }
  return { mode: "dns", ...replicas };
}

/** The catalog of the deployed models (input form: the gateway fills its defaults); throws if the gateway would reject it. */
export function buildCatalog(models: readonly PlannedModel[], args: CatalogArgs): CatalogInput {
  const catalog: CatalogInput = {
    models: models.map((m) => ({
      id: m.def.id,
      category: m.def.category,
      ownedBy: m.def.ownedBy,
      maxConcurrency: m.def.maxConcurrency,
      upstream: upstreamOf(m, args),
      ...(m.def.routing ? { routing: m.def.routing } : {}),
      // A model that may be at zero replicas: the gateway holds its requests while KEDA wakes it.
      ...(m.autoscaling?.minReplicas === 0 ? { wake: { timeoutMs: m.autoscaling.wake.timeoutSeconds * 1000, maxHeld: m.autoscaling.wake.maxHeld } } : {}),
      // Its adapters, each a model id clients send, served by the same replicas (or pool).
      ...(m.def.lora ? { lora: catalogLora(m.def.lora) } : {}),
    })),
  };
  const parsed = CatalogSchema.safeParse(catalog);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`the serving catalog does not match the gateway's CatalogSchema: ${lines.join("; ")}`);
  }
  return catalog;
}

/** The catalog file as the gateway reads it (YAML; the gateway's loader also accepts JSON). */
export function catalogYaml(catalog: CatalogInput): string {
  return stringify(catalog);
}
