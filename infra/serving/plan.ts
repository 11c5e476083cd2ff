// Which models this stack deploys and at how many replicas: `serving:models` resolved against the model folders,
// with the `serving:replicas` overrides applied, and each model's autoscaling (folder and `serving:autoscaling`).
import * as path from "path";
import { ConfigError } from "../platform/config";
import { type Autoscaling, type AutoscalingOverride, mergeAutoscaling } from "./autoscaling";
import { CONFIG_NAMESPACE, DEFAULT_GPU_POOL } from "./constants";
import type { ModelDefinition } from "./model-folders";
import { displayPath } from "./model-folders";
import { totalGpus } from "./gpus";

export interface PlannedModel {
  readonly def: ModelDefinition;
  /** Decode replicas to deploy (override or folder); an autoscaled model's `minReplicas`, which it is created with. */
  readonly replicas: number;
  /** The most decode replicas it can run: `replicas`, or an autoscaled model's `maxReplicas`. */
  readonly maxReplicas: number;
  /** KEDA scales the decode Deployment between `minReplicas` and `maxReplicas` (never for a model being replaced). */
  readonly autoscaling?: Autoscaling;
  /** `serving:gpuCapacity` key the model's GPUs count against; undefined for models without accelerators. */
  readonly gpuPool?: string;
  /** Accelerators the model requests at `maxReplicas` (what rollouts and the preflight's report count). */
  readonly gpus: number;
  /** Accelerators at `replicas`: what must fit for the model to be created at all. */
  readonly baseGpus: number;
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
  autoscaling: Readonly<Record<string, AutoscalingOverride>> = {},
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
    const scaling = mergeAutoscaling(def.serverValues.decode.autoscaling, autoscaling[ref]);
    const folderKey = `${displayPath(path.join(def.dir, `ms-${def.slug}`, "values.yaml"))} decode.autoscaling`;
    const where = autoscaling[ref] ? `${CONFIG_NAMESPACE}:autoscaling.${ref} (over ${folderKey})` : folderKey;
    problems.push(...scaling.problems.map((p) => `${where}: ${p}`));
    if (scaling.value && def.gpus.prefillReplicas > 0) problems.push(`${where}: autoscaling a model with prefill replicas is not supported (the autoscaler moves decode only)`);
    // A model being replaced runs at zero: it gets no autoscaler, which would wake it again.
    const auto = replaced ? undefined : scaling.value;
    const replicas = replaced ? 0 : (auto?.minReplicas ?? replicaOverrides[ref] ?? def.replicas);
    const maxReplicas = auto?.maxReplicas ?? replicas;
    planned.push({
      def,
      replicas,
      maxReplicas,
      ...(auto ? { autoscaling: auto } : {}),
      gpuPool: gpuPoolOf(def),
      gpus: totalGpus(def.gpus, maxReplicas),
      baseGpus: totalGpus(def.gpus, replicas),
      replaces: replaces[ref],
      replaced,
    });
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
  for (const { def, maxReplicas: replicas } of models) {
    const where = displayPath(def.dir);
    if (def.weightsSource.kind === "hf" && def.weightsInfo?.gated && !cfg.hasHfToken) {
      problems.push(`${where}: model.yaml weights.gated is true but ${CONFIG_NAMESPACE}:hfToken is not set (pulumi config set --secret ${CONFIG_NAMESPACE}:hfToken …): the download would be refused`);
    }
    if (def.weightsSource.kind === "s3" && !cfg.hasS3) {
      problems.push(`${where}: modelArtifacts.uri is s3:// but ${CONFIG_NAMESPACE}:weightsS3 is not set (the object store to download from)`);
    }
    const s3Adapter = def.vllm ? (def.lora?.adapters.findIndex((a) => a.source?.startsWith("s3://")) ?? -1) : -1;
    if (s3Adapter >= 0 && !cfg.hasS3) {
      problems.push(`${where}: model.yaml lora.adapters[${s3Adapter}].source is s3:// but ${CONFIG_NAMESPACE}:weightsS3 is not set (the object store to download from)`);
    }
    if (def.weightsSource.kind !== "volume" && cfg.cacheAccessMode === "ReadWriteOnce" && replicas > 1) {
      problems.push(`${where}: ${replicas} replicas on a ReadWriteOnce weights cache (${CONFIG_NAMESPACE}:weightsCache.accessMode): only pods on one node could mount it; use ReadWriteMany or one replica`);
    }
  }
  return problems;
}
