// GPU preflight (spec "States and transitions"): on a GPU that holds one large model, a replacement stays Pending
// until the old model is scaled to zero. So before anything is declared, the GPUs all referenced models request
// (replicas × GPUs per replica) must fit each node group's configured capacity; otherwise preview fails here,
// naming the models and the numbers, instead of an operator meeting a Pending pod. An autoscaled model must fit at
// its `minReplicas`; the replicas it may add up to `maxReplicas` are reported when the node group cannot hold them
// (cluster autoscaling must then add the nodes, else they stay Pending), without failing the preview.
import { CONFIG_NAMESPACE } from "./constants";
import type { PlannedModel } from "./plan";

export class GpuCapacityError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `GPU preflight failed: the referenced models request more GPUs than serving:gpuCapacity allows.\n${problems.map((p) => `  - ${p}`).join("\n")}\n` +
        `To replace a model on a full GPU in one apply, name the pair in serving:replaces ({"<incoming>": "<outgoing>"}): the outgoing model counts as zero GPUs (docs/operations.md, "Swap models on a full GPU").`,
    );
    this.name = "GpuCapacityError";
  }
}

export interface GpuPoolUsage {
  readonly pool: string;
  /** At every model's `maxReplicas`. */
  readonly requested: number;
  /** At the replicas the models are created with (`minReplicas` for autoscaled ones). */
  readonly base: number;
  readonly capacity: number | undefined;
  readonly models: readonly PlannedModel[];
}

/** GPUs requested per `serving:gpuCapacity` key, with the models behind each number. */
export function gpuUsage(models: readonly PlannedModel[], capacity: Readonly<Record<string, number>>): GpuPoolUsage[] {
  const pools = new Map<string, PlannedModel[]>();
  for (const m of models) {
    if (m.gpuPool === undefined || m.gpus === 0) continue;
    pools.set(m.gpuPool, [...(pools.get(m.gpuPool) ?? []), m]);
  }
  return [...pools.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pool, ms]) => ({ pool, requested: ms.reduce((s, m) => s + m.gpus, 0), base: ms.reduce((s, m) => s + m.baseGpus, 0), capacity: capacity[pool], models: ms }));
}

function breakdown(m: PlannedModel, atMax: boolean): string {
  const g = m.def.gpus;
  const replicas = atMax ? m.maxReplicas : m.replicas;
  const prefill = replicas > 0 && g.prefillReplicas > 0 ? ` + ${g.prefillReplicas} prefill × ${g.perPrefillReplica}` : "";
  const count = `${m.autoscaling ? (atMax ? "up to " : "at least ") : ""}${replicas} replica${replicas === 1 ? "" : "s"}`;
  return `${m.def.ref} ${count} × ${g.perDecodeReplica} GPU${prefill} = ${atMax ? m.gpus : m.baseGpus}`;
}

function capacityText(u: GpuPoolUsage): string {
  return u.capacity === undefined ? `0 (no ${CONFIG_NAMESPACE}:gpuCapacity.${u.pool} entry)` : String(u.capacity);
}

/** One line per node group whose models do not fit at the replicas they are created with (empty when they do). */
export function checkGpuCapacity(models: readonly PlannedModel[], capacity: Readonly<Record<string, number>>): string[] {
  return gpuUsage(models, capacity)
    .filter((u) => u.base > (u.capacity ?? 0))
    .map((u) => `node group "${u.pool}": ${u.base} GPUs requested > capacity ${capacityText(u)}: ${u.models.map((m) => breakdown(m, false)).join(", ")}`);
}

/**
 * One line per node group that fits its models as created but not at their `maxReplicas`: the autoscaler's extra
 * replicas stay Pending unless cluster autoscaling adds GPU nodes. A report, not a failure.
 */
export function gpuHeadroomWarnings(models: readonly PlannedModel[], capacity: Readonly<Record<string, number>>): string[] {
  return gpuUsage(models, capacity)
    .filter((u) => u.requested > (u.capacity ?? 0) && u.base <= (u.capacity ?? 0))
    .map(
      (u) =>
        `node group "${u.pool}": at maxReplicas the models request ${u.requested} GPUs > capacity ${capacityText(u)} (${u.models
          .filter((m) => m.gpus > 0)
          .map((m) => breakdown(m, true))
          .join(", ")}): the cluster cannot hold them, so cluster autoscaling must add the nodes, or the replicas beyond capacity stay Pending`,
    );
}

export function assertGpuCapacity(models: readonly PlannedModel[], capacity: Readonly<Record<string, number>>): void {
  const problems = checkGpuCapacity(models, capacity);
  if (problems.length > 0) throw new GpuCapacityError(problems);
}
