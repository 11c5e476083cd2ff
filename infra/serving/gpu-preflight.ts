// GPU preflight (spec "States and transitions"): on a GPU that holds one large model, a replacement stays Pending
// until the old model is scaled to zero. So before anything is declared, the GPUs all referenced models request
// (replicas × GPUs per replica) must fit each node group's configured capacity; otherwise preview fails here,
// naming the models and the numbers, instead of an operator meeting a Pending pod.
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
  readonly requested: number;
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
    .map(([pool, ms]) => ({ pool, requested: ms.reduce((s, m) => s + m.gpus, 0), capacity: capacity[pool], models: ms }));
}

function breakdown(m: PlannedModel): string {
  const g = m.def.gpus;
  const prefill = m.replicas > 0 && g.prefillReplicas > 0 ? ` + ${g.prefillReplicas} prefill × ${g.perPrefillReplica}` : "";
  return `${m.def.ref} ${m.replicas} replica${m.replicas === 1 ? "" : "s"} × ${g.perDecodeReplica} GPU${prefill} = ${m.gpus}`;
}

/** One line per node group over capacity (empty when everything fits). */
export function checkGpuCapacity(models: readonly PlannedModel[], capacity: Readonly<Record<string, number>>): string[] {
  return gpuUsage(models, capacity)
    .filter((u) => u.requested > (u.capacity ?? 0))
    .map((u) => {
      const cap = u.capacity === undefined ? `0 (no ${CONFIG_NAMESPACE}:gpuCapacity.${u.pool} entry)` : String(u.capacity);
      return `node group "${u.pool}": ${u.requested} GPUs requested > capacity ${cap}: ${u.models.map(breakdown).join(", ")}`;
    });
}

export function assertGpuCapacity(models: readonly PlannedModel[], capacity: Readonly<Record<string, number>>): void {
  const problems = checkGpuCapacity(models, capacity);
  if (problems.length > 0) throw new GpuCapacityError(problems);
}
