// Which models this stack deploys and at how many replicas: `serving:models` resolved against the model folders,
// with the `serving:replicas` overrides applied.
import * as path from "path";
import { ConfigError } from "../platform/config";
import { CONFIG_NAMESPACE, DEFAULT_GPU_POOL } from "./constants";
import type { ModelDefinition } from "./model-folders";
import { displayPath } from "./model-folders";
import { totalGpus } from "./gpus";

export interface PlannedModel {
  readonly def: ModelDefinition;
  /** Decode replicas to deploy (override or folder). */
  readonly replicas: number;
  /** `serving:gpuCapacity` key the model's GPUs count against; undefined for models without accelerators. */
  readonly gpuPool?: string;
  /** Accelerators the model requests at that replica count. */
  readonly gpus: number;
}

/** The node group a model's GPUs come from: its `nodeGroup`, else the on-prem GPU nodes. */
export function gpuPoolOf(def: ModelDefinition): string | undefined {
  if (def.gpus.resource === undefined || (def.gpus.perDecodeReplica === 0 && def.gpus.perPrefillReplica === 0)) return def.nodeGroup;
  return def.nodeGroup ?? DEFAULT_GPU_POOL;
}

/** Resolves the references; an unknown reference is a configuration error naming the key and the folder. */
export function planModels(
  refs: readonly string[],
  replicaOverrides: Readonly<Record<string, number>>,
  folders: readonly ModelDefinition[],
  modelsDir: string,
): PlannedModel[] {
  const byRef = new Map(folders.map((f) => [f.ref, f]));
  const problems: string[] = [];
  const planned: PlannedModel[] = [];
  refs.forEach((ref, i) => {
    const def = byRef.get(ref);
    if (!def) {
      problems.push(`${CONFIG_NAMESPACE}:models [${i}]: no model folder ${displayPath(path.join(modelsDir, ref))}`);
      return;
    }
    const replicas = replicaOverrides[ref] ?? def.replicas;
    planned.push({ def, replicas, gpuPool: gpuPoolOf(def), gpus: totalGpus(def.gpus, replicas) });
  });
  if (problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, problems);
  return planned;
}
