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
  /** `serving:replaces`: the model this one replaces; its server is created only after that one has scaled to zero. */
  readonly replaces?: string;
  /** Another model replaces this one (`serving:replaces`): it runs at zero replicas. */
  readonly replaced: boolean;
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
  replaces: Readonly<Record<string, string>> = {},
): PlannedModel[] {
  const outgoing = new Set(Object.values(replaces));
  const byRef = new Map(folders.map((f) => [f.ref, f]));
  const problems: string[] = [];
  const planned: PlannedModel[] = [];
  refs.forEach((ref, i) => {
    const def = byRef.get(ref);
    if (!def) {
      problems.push(`${CONFIG_NAMESPACE}:models [${i}]: no model folder ${displayPath(path.join(modelsDir, ref))}`);
      return;
    }
    const replaced = outgoing.has(ref);
    const replicas = replaced ? 0 : (replicaOverrides[ref] ?? def.replicas);
    planned.push({ def, replicas, gpuPool: gpuPoolOf(def), gpus: totalGpus(def.gpus, replicas), replaces: replaces[ref], replaced });
  });
  if (problems.length > 0) throw new ConfigError(CONFIG_NAMESPACE, problems);
  return planned;
}

export interface WeightsConfig {
  readonly hasHfToken: boolean;
  readonly hasS3: boolean;
  readonly cacheAccessMode: "ReadWriteMany" | "ReadWriteOnce";
}

/**
 * What a model needs from the stack to start at all: a token for gated weights, an object store for s3:// weights,
 * and one replica at most on a ReadWriteOnce cache. Each line names the model folder and the field.
 */
export function checkModelNeeds(models: readonly PlannedModel[], cfg: WeightsConfig): string[] {
  const problems: string[] = [];
  for (const { def, replicas } of models) {
    const where = displayPath(def.dir);
    if (def.weightsSource.kind === "hf" && def.weightsInfo?.gated && !cfg.hasHfToken) {
      problems.push(`${where}: model.yaml weights.gated is true but ${CONFIG_NAMESPACE}:hfToken is not set (pulumi config set --secret ${CONFIG_NAMESPACE}:hfToken …): the download would be refused`);
    }
    if (def.weightsSource.kind === "s3" && !cfg.hasS3) {
      problems.push(`${where}: modelArtifacts.uri is s3:// but ${CONFIG_NAMESPACE}:weightsS3 is not set (the object store to download from)`);
    }
    if (def.weightsSource.kind !== "volume" && cfg.cacheAccessMode === "ReadWriteOnce" && replicas > 1) {
      problems.push(`${where}: ${replicas} replicas on a ReadWriteOnce weights cache (${CONFIG_NAMESPACE}:weightsCache.accessMode): only pods on one node could mount it; use ReadWriteMany or one replica`);
    }
  }
  return problems;
}
