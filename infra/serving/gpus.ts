// GPUs a model-server pod requests, computed as the modelservice chart does (templates/_helpers.tpl
// "llm-d-modelservice.resources"): every container gets `dataLocal × tensor` accelerators unless its limits name
// the accelerator resource explicitly; the simulator image and `accelerator.type: cpu` get none.
import { SIMULATOR_IMAGE_MARKER } from "./constants";
import type { ContainerValues, ModelServerValues, Parallelism, RoleValues } from "./folder-schemas";

/** Accelerator resource names the chart knows by `accelerator.type` (values.yaml `accelerator.resources`). */
const ACCELERATOR_RESOURCES: Readonly<Record<string, string>> = {
  nvidia: "nvidia.com/gpu",
  amd: "amd.com/gpu",
  "intel-i915": "gpu.intel.com/i915",
  "intel-xe": "gpu.intel.com/xe",
  "intel-gaudi": "habana.ai/gaudi",
  google: "google.com/tpu",
};

/** The extended resource the chart requests for this model, or undefined for CPU-only models. */
export function acceleratorResource(values: ModelServerValues): string | undefined {
  const type = values.accelerator?.type ?? "nvidia";
  if (type === "cpu") return undefined;
  return values.accelerator?.resources?.[type] ?? ACCELERATOR_RESOURCES[type] ?? "nvidia.com/gpu";
}

/**
 * The resource a GPU node's taint usually names (the GPU operator taints with `nvidia.com/gpu`), for a model that
 * requests a MIG slice (`nvidia.com/mig-1g.10gb`) or a time-sliced share (`nvidia.com/gpu.shared`) of that vendor.
 */
export function wholeGpuResource(resource: string): string {
  const vendor = resource.split("/")[0];
  return Object.values(ACCELERATOR_RESOURCES).find((r) => r.split("/")[0] === vendor) ?? resource;
}

/** `dataLocal × tensor`, with the chart's fallbacks (dataLocal from data / workers). */
export function gpusPerWorker(p: Parallelism | undefined): number {
  const tensor = p?.tensor ?? 1;
  const dataLocal = p?.dataLocal ?? (p?.data !== undefined ? Math.floor(p.data / (p.workers ?? 1)) : 1);
  return Math.max(1, dataLocal) * tensor;
}

function containerGpus(c: ContainerValues, resource: string | undefined, perWorker: number): number {
  if (resource === undefined || c.image.includes(SIMULATOR_IMAGE_MARKER)) return 0;
  const explicit = c.resources?.limits?.[resource];
  return explicit !== undefined ? Number(explicit) : perWorker;
}

/** Accelerators one pod of a role (decode or prefill) requests. */
export function gpusPerPod(values: ModelServerValues, role: RoleValues): number {
  const resource = acceleratorResource(values);
  const perWorker = gpusPerWorker(role.parallelism);
  return (role.containers ?? []).reduce((sum, c) => sum + containerGpus(c, resource, perWorker), 0);
}

export interface GpuDemand {
  /** Accelerator resource name (e.g. nvidia.com/gpu), undefined for CPU-only models. */
  readonly resource: string | undefined;
  readonly perDecodeReplica: number;
  readonly perPrefillReplica: number;
  /** Prefill replicas as the folder sets them (the chart default is 0). */
  readonly prefillReplicas: number;
}

export function gpuDemand(values: ModelServerValues): GpuDemand {
  const prefillOn = values.prefill !== undefined && values.prefill.create !== false;
  return {
    resource: acceleratorResource(values),
    perDecodeReplica: gpusPerPod(values, values.decode),
    perPrefillReplica: prefillOn && values.prefill ? gpusPerPod(values, values.prefill) : 0,
    prefillReplicas: prefillOn ? (values.prefill?.replicas ?? 0) : 0,
  };
}

/** Total accelerators of a model at a given decode replica count (prefill scales to zero with it). */
export function totalGpus(d: GpuDemand, decodeReplicas: number): number {
  const prefill = decodeReplicas === 0 ? 0 : d.prefillReplicas;
  return decodeReplicas * d.perDecodeReplica + prefill * d.perPrefillReplica;
}
