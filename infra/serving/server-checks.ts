// The rules a vLLM model folder must meet to run well on a real GPU, checked before anything is deployed. Each broken
// rule is a `[rule] detail` line naming the field, which the loader prefixes with the folder (model-folders.ts).
import type { Category } from "./constants";
import { MODEL_FAMILIES } from "./families";
import type { ContainerValues, ModelMetadata, ModelServerValues } from "./folder-schemas";
import { acceleratorResource, gpusPerWorker } from "./gpus";
import { LLMD_INFERENCE_SIM, VLLM, VLLM_CONVERSIONS, VLLM_RUNNERS } from "./model-server-facts";
import { flagValue, hasFlag, numericFlag } from "./server-args";
import { weightsSource } from "./weights";
import { SIMULATOR_IMAGE_MARKER } from "./constants";
import { quantityGiB } from "./startup";

export const SERVER_RULES = {
  maxModelLen: "max model len",
  tensorParallel: "tensor parallel",
  sharedMemory: "shared memory",
  gpuMemory: "gpu memory",
  parsers: "parsers",
  weights: "weights",
  embedder: "embedder",
  runner: "runner",
  simulator: "simulator",
  probes: "probes",
} as const;

/** A folder served by vLLM (the llm-d simulator is exempt: it loads nothing and ignores these flags). */
export function isVllm(ms: ModelServerValues): boolean {
  return !(ms.decode.containers[0]?.image ?? "").includes(SIMULATOR_IMAGE_MARKER);
}

/** Tensor-parallel degree as the chart passes it (`parallelism.tensor`). */
export function tensorParallel(ms: ModelServerValues): number {
  return ms.decode.parallelism?.tensor ?? 1;
}

/** Shared memory for NCCL between the tensor-parallel workers: 8 GiB per GPU, at most 64 GiB. */
export function sharedMemoryGiB(tp: number): number {
  return Math.min(64, 8 * tp);
}

function shmVolume(ms: ModelServerValues): Record<string, unknown> | undefined {
  return ((ms.decode as { volumes?: Record<string, unknown>[] }).volumes ?? []).find((v) => v.name === "shm");
}

function memoryLimitGiB(c: ContainerValues): number | undefined {
  return quantityGiB(c.resources?.limits?.memory);
}

export function serverChecks(ms: ModelServerValues, meta: ModelMetadata, category: Category): string[] {
  if (!isVllm(ms)) return simulatorChecks(ms, category);
  const problems: string[] = [];
  const server = ms.decode.containers[0] as ContainerValues;
  const args = server.args ?? [];
  const at = "decode.containers[0].args";

  const maxLen = numericFlag(args, "--max-model-len");
  if (maxLen === undefined) {
    problems.push(`[${SERVER_RULES.maxModelLen}] ${at} must set --max-model-len: without it vLLM reserves KV cache for the model's whole context, which may not fit the GPU`);
  } else if (!(Number.isInteger(maxLen) && maxLen > 0)) {
    problems.push(`[${SERVER_RULES.maxModelLen}] --max-model-len must be a positive integer, got ${flagValue(args, "--max-model-len")}`);
  } else if (meta.contextLength === undefined) {
    problems.push(`[${SERVER_RULES.maxModelLen}] model.yaml contextLength is required (the model's maximum context, max_position_embeddings), to check --max-model-len ${maxLen} against it`);
  } else if (maxLen > meta.contextLength) {
    problems.push(`[${SERVER_RULES.maxModelLen}] --max-model-len ${maxLen} exceeds the model's context (model.yaml contextLength ${meta.contextLength})`);
  }

  const util = numericFlag(args, "--gpu-memory-utilization");
  if (util !== undefined && !(util > 0 && util <= 1)) problems.push(`[${SERVER_RULES.gpuMemory}] --gpu-memory-utilization must be in (0, 1], got ${flagValue(args, "--gpu-memory-utilization")}`);

  const tp = tensorParallel(ms);
  if (hasFlag(args, "--tensor-parallel-size") && numericFlag(args, "--tensor-parallel-size") !== tp) {
    problems.push(`[${SERVER_RULES.tensorParallel}] ${at} sets --tensor-parallel-size ${flagValue(args, "--tensor-parallel-size")} but decode.parallelism.tensor is ${tp} (the chart passes it; remove the flag)`);
  }
  const resource = acceleratorResource(ms);
  const explicit = resource ? server.resources?.limits?.[resource] : undefined;
  const needed = gpusPerWorker(ms.decode.parallelism);
  if (resource && explicit !== undefined && Number(explicit) < needed) {
    problems.push(`[${SERVER_RULES.tensorParallel}] decode.parallelism asks for ${needed} GPUs per pod (tensor ${tp}) but decode.containers[0].resources.limits ${resource} is ${explicit}`);
  }
  if (tp > 1) {
    const shm = shmVolume(ms);
    const medium = (shm?.emptyDir as { medium?: string } | undefined)?.medium;
    if (shm && medium !== "Memory") problems.push(`[${SERVER_RULES.sharedMemory}] decode.volumes shm must be an emptyDir with medium Memory for tensor parallel ${tp}`);
    const limit = memoryLimitGiB(server);
    const shmGiB = quantityGiB((shm?.emptyDir as { sizeLimit?: string } | undefined)?.sizeLimit) ?? sharedMemoryGiB(tp);
    if (limit !== undefined && limit <= shmGiB) {
      problems.push(`[${SERVER_RULES.sharedMemory}] decode.containers[0].resources.limits.memory ${server.resources?.limits?.memory} must exceed the ${shmGiB}Gi of /dev/shm (it counts against the limit)`);
    }
  }

  problems.push(...runnerChecks(args, category));

  const family = meta.family ? MODEL_FAMILIES[meta.family] : undefined;
  if (category === "embedder") {
    if (flagValue(args, "--runner") !== "pooling" && !hasFlag(args, "--task")) {
      problems.push(`[${SERVER_RULES.embedder}] an embedder runs vLLM's pooling runner: add --runner=pooling to ${at}`);
    }
    if (hasFlag(args, "--enable-auto-tool-choice")) problems.push(`[${SERVER_RULES.embedder}] an embedder takes no tools: remove --enable-auto-tool-choice`);
    if (meta.family && !("embedding" in (family ?? {}))) problems.push(`[${SERVER_RULES.embedder}] model.yaml family ${meta.family} is not an embedding family`);
    if (acceleratorResource(ms) !== undefined && util === undefined) {
      problems.push(`[${SERVER_RULES.embedder}] set --gpu-memory-utilization in ${at} (e.g. 0.10): by default vLLM takes 90 % of the GPU, which a small embedding model never uses and nothing else can then share`);
    }
  } else if (meta.family === undefined) {
    problems.push(`[${SERVER_RULES.parsers}] model.yaml family is required for a vLLM model (which tool-call and reasoning parsers it needs; "other" if none)`);
  } else if (family) {
    const tool = "toolParser" in family ? family.toolParser : undefined;
    const reasoning = "reasoningParser" in family ? family.reasoningParser : undefined;
    if (hasFlag(args, "--enable-auto-tool-choice")) {
      if (!tool && meta.family !== "other") problems.push(`[${SERVER_RULES.parsers}] family ${meta.family} is not trained for tools: remove --enable-auto-tool-choice`);
      else if (tool && flagValue(args, "--tool-call-parser") !== tool) problems.push(`[${SERVER_RULES.parsers}] family ${meta.family} needs --tool-call-parser=${tool} with --enable-auto-tool-choice`);
    }
    if (reasoning && flagValue(args, "--reasoning-parser") !== reasoning) {
      problems.push(`[${SERVER_RULES.parsers}] family ${meta.family} needs --reasoning-parser=${reasoning} (else its reasoning ends up in the answer)`);
    }
  }

  for (const kind of ["startupProbe", "readinessProbe"] as const) {
    if ((server as Record<string, unknown>)[kind] === undefined) {
      const why = kind === "startupProbe" ? "the platform sizes its budget from the weights, so a loading server is not restarted" : "without it a pod is routed to before vLLM answers";
      problems.push(`[${SERVER_RULES.probes}] decode.containers[0].${kind} is required (httpGet /health): ${why}`);
    }
  }
  for (const kind of ["startupProbe", "readinessProbe", "livenessProbe"] as const) {
    const probePath = (server as Record<string, { httpGet?: { path?: string } } | undefined>)[kind]?.httpGet?.path;
    if (probePath?.startsWith("/v1")) {
      problems.push(`[${SERVER_RULES.probes}] decode.containers[0].${kind} probes ${probePath}, which vLLM answers 401 once it has an API key (the platform gives it one): probe /health`);
    }
  }

  const source = weightsSource(ms.modelArtifacts.uri);
  if (source.kind !== "volume" && meta.weights === undefined) {
    problems.push(`[${SERVER_RULES.weights}] model.yaml weights.sizeGiB is required: the cache volume and the startup waits are sized from it`);
  } else if (meta.weights?.cacheGiB !== undefined && meta.weights.cacheGiB < meta.weights.sizeGiB) {
    problems.push(`[${SERVER_RULES.weights}] model.yaml weights.cacheGiB ${meta.weights.cacheGiB} is smaller than weights.sizeGiB ${meta.weights.sizeGiB}`);
  }
  return problems;
}

/**
 * `--task`, `--runner` and `--convert` as the deployed vLLM parses them: an argument it does not know stops it at
 * start (argparse), so the pod would crash-loop where the preview could have said it.
 */
function runnerChecks(args: readonly string[], category: Category): string[] {
  const problems: string[] = [];
  const at = "decode.containers[0].args";
  const vllm = `vLLM ${VLLM.version} (${VLLM.image})`;
  if (hasFlag(args, "--task")) {
    const instead = category === "embedder" ? "write --runner=pooling instead (and --convert=embed for a model that is not an embedding model)" : "remove it (a generative model needs no runner flag)";
    const task = flagValue(args, "--task");
    problems.push(`[${SERVER_RULES.runner}] ${at} passes ${task ? `--task ${task}` : "--task"}, which ${vllm} no longer parses, so it would refuse to start: ${instead}`);
  }
  const runner = flagValue(args, "--runner");
  const expectedRunners: readonly string[] = category === "embedder" ? ["pooling"] : ["auto", "generate"];
  if (runner !== undefined && !(VLLM_RUNNERS as readonly string[]).includes(runner)) {
    problems.push(`[${SERVER_RULES.runner}] --runner ${runner} is not one ${vllm} parses (${VLLM_RUNNERS.join(", ")}): use --runner=${expectedRunners[0]}`);
  } else if (runner !== undefined && !expectedRunners.includes(runner)) {
    problems.push(`[${SERVER_RULES.runner}] a ${category} model runs --runner=${category === "embedder" ? "pooling" : "generate"}, not --runner=${runner}`);
  }
  const convert = flagValue(args, "--convert");
  const expectedConversions: readonly string[] = category === "embedder" ? ["auto", "none", "embed"] : ["auto", "none"];
  if (convert !== undefined && !(VLLM_CONVERSIONS as readonly string[]).includes(convert)) {
    problems.push(`[${SERVER_RULES.runner}] --convert ${convert} is not one ${vllm} parses (${VLLM_CONVERSIONS.join(", ")})`);
  } else if (convert !== undefined && !expectedConversions.includes(convert)) {
    problems.push(`[${SERVER_RULES.runner}] --convert=${convert} does not make ${category === "embedder" ? "embeddings: use --convert=embed, or none for an embedding model" : "a generative model: remove it"}`);
  }
  return problems;
}

/** Go's time.ParseDuration syntax, which the simulator's duration flags take ("200ms", "1.5s"). */
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

/**
 * A folder running the pinned llm-d simulator: the flags it passes must be ones that version parses (pflag stops at an
 * unknown one, so the pod would crash-loop), and it must not be asked for what it does not serve.
 */
function simulatorChecks(ms: ModelServerValues, category: Category): string[] {
  const server = ms.decode.containers[0];
  if (server?.image !== LLMD_INFERENCE_SIM.image) return [];
  const problems: string[] = [];
  const sim = `llm-d-inference-sim ${LLMD_INFERENCE_SIM.version}`;
  if (category === "embedder") {
    problems.push(`[${SERVER_RULES.simulator}] ${sim} serves no /v1/embeddings: an embedder runs vLLM with --runner=pooling (npm start simulates it locally either way)`);
  }
  const args = server.args ?? [];
  for (const arg of args) {
    if (!arg.startsWith("--")) continue;
    const flag = arg.slice(2).split("=")[0] as string;
    if (!LLMD_INFERENCE_SIM.flags.includes(flag)) {
      problems.push(`[${SERVER_RULES.simulator}] decode.containers[0].args passes --${flag}, which ${sim} does not parse: it would refuse to start`);
    } else if (LLMD_INFERENCE_SIM.durationFlags.includes(flag)) {
      const value = flagValue(args, `--${flag}`) ?? "";
      if (!GO_DURATION.test(value)) problems.push(`[${SERVER_RULES.simulator}] --${flag} ${value} is not a duration ${sim} reads: write it with a unit, e.g. ${/^\d+$/.test(value) ? `${value}ms` : "200ms"}`);
    }
  }
  return problems;
}
