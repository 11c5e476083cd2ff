/**
 * The simulated fleet `npm start` runs: a composition root of its own (beside `stacks/`), so the gateway's code
 * imports neither the simulator nor the infrastructure code that reads the model folders.
 */
import { startSimulator, type RunningSimulator, type SimulatorConfigInput } from "../simulator/src";
import { DEFAULT_MODELS_DIR } from "../infra/serving/constants";
import { loadModelFolders, type ModelDefinition } from "../infra/serving/model-folders";
import { flagValue } from "../infra/serving/server-args";
import { parseDurationMs } from "../simulator/src/cli-args";
import type { CatalogInput, CatalogLora, ModelCategory, Routing } from "../gateway/src/config/catalog";
import { catalogLora } from "../infra/serving/lora";
import { LocalScaler, registryView, type ScaleToZero } from "./scaler";
import type { ModelRegistry } from "../gateway/src/upstream/registry";

/** One model of the local fleet: its catalog identity and how its simulated replicas behave. */
export interface LocalModel {
  id: string;
  category: ModelCategory;
  ownedBy: string;
  replicas: number;
  maxConcurrency: number;
  routing?: Routing;
  simulator: Omit<SimulatorConfigInput, "models" | "kind" | "host" | "port" | "podName">;
  /** Starts with no replica; the first request wakes it (local/scaler.ts), and it stops again when idle. */
  scaleToZero?: ScaleToZero;
  /** The gateway's hold of a model at zero (catalog `wake`); its defaults when absent. */
  wake?: { timeoutMs?: number; maxHeld?: number };
  /** Its LoRA adapters (catalog `lora`), each a model of its own; the simulators serve them (`simulator.lora`). */
  lora?: CatalogLora;
}

/** Built-in fleet, used only when no model folder exists under deployments/models. */
export const BUILT_IN_FLEET: LocalModel[] = [
  {
    id: "qwen3-8b",
    category: "generative",
    ownedBy: "ai-platform",
    replicas: 2,
    maxConcurrency: 16,
    // Roughly an 8B model on one H100 (llm-d sim's "8B balanced" profile), so local latencies feel real.
    simulator: { toolCalling: true, maxNumSeqs: 16, latency: { timeToFirstTokenMs: 30, interTokenLatencyMs: 12, prefillTimePerTokenMs: 0.25 } },
  },
  {
    id: "bge-small-en-v1.5",
    category: "embedder",
    ownedBy: "ai-platform",
    replicas: 1,
    maxConcurrency: 32,
    simulator: { embeddingDimensions: 384, maxNumSeqs: 32, latency: { timeToFirstTokenMs: 5, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0.02 } },
  },
];

/** Local replicas per model: enough to see balancing, few enough for a laptop. */
export const MAX_LOCAL_REPLICAS = 2;

/**
 * A model folder as a simulated model: same id, category, owner, concurrency cap and routing as the cluster;
 * replicas capped at MAX_LOCAL_REPLICAS (at least 1, so a model scaled to zero still runs locally); latency from
 * the folder's `local:` block, else the llm-d simulator's own flags when the folder runs the simulator.
 */
export function localModelFromFolder(def: ModelDefinition): LocalModel {
  const ttft = def.local.timeToFirstTokenMs ?? simulatorDuration(def, "time-to-first-token");
  const itl = def.local.interTokenLatencyMs ?? simulatorDuration(def, "inter-token-latency");
  const lora = def.lora && catalogLora(def.lora);
  return {
    id: def.id,
    category: def.category,
    ownedBy: def.ownedBy,
    replicas: def.local.replicas ?? Math.min(Math.max(def.replicas, 1), MAX_LOCAL_REPLICAS),
    maxConcurrency: def.maxConcurrency,
    ...(def.routing ? { routing: def.routing } : {}),
    ...localScaleToZero(def),
    ...(lora ? { lora } : {}),
    simulator: {
      ...(lora ? { lora: simulatorLora(lora) } : {}),
      toolCalling: def.toolCalling,
      maxNumSeqs: def.maxConcurrency,
      ...(def.local.embeddingDimensions !== undefined ? { embeddingDimensions: def.local.embeddingDimensions } : {}),
      latency: {
        ...(ttft !== undefined ? { timeToFirstTokenMs: ttft } : {}),
        ...(itl !== undefined ? { interTokenLatencyMs: itl } : {}),
      },
    },
  };
}

/**
 * The simulator's LoRA settings for a model's adapters, as the cluster gives vLLM: `--enable-lora`, `--max-loras`, the
 * preloaded adapters in `--lora-modules`, runtime loading (`VLLM_ALLOW_RUNTIME_LORA_UPDATING`) when one loads on demand.
 */
export function simulatorLora(lora: CatalogLora): NonNullable<SimulatorConfigInput["lora"]> {
  return {
    enabled: true,
    maxLoras: lora.maxLoras,
    runtimeUpdating: lora.adapters.some((a) => a.loading === "on-demand"),
    modules: lora.adapters.filter((a) => a.loading === "preload").map((a) => ({ name: a.id, path: a.path })),
  };
}

/**
 * Whether the local model scales to zero, and how: the folder's `local.scaleToZero`. The one place to map it, so
 * the folder's `autoscaling.minReplicas: 0` can later turn it on with the schema's defaults (loadMs, idleStopMs).
 */
export function localScaleToZero(def: ModelDefinition): Pick<LocalModel, "scaleToZero"> {
  // Later: `?? (autoscaling.minReplicas === 0 ? LocalScaleToZeroSchema.parse({}) : undefined)` (the schema's defaults).
  const s = def.local.scaleToZero;
  return s ? { scaleToZero: { loadMs: s.loadMs, idleStopMs: s.idleStopMs } } : {};
}

/** A duration flag of the llm-d simulator ("200ms"; the folder check refuses what it cannot read), in ms. */
function simulatorDuration(def: ModelDefinition, flag: string): number | undefined {
  const value = flagValue(def.serverArgs, `--${flag}`);
  return value === undefined ? undefined : parseDurationMs(value, flag);
}

/**
 * The fleet `npm start` runs: every model folder under `dir` (so the local gateway lists the same ids as the
 * cluster), or BUILT_IN_FLEET when there is none. A broken folder fails here as it fails `pulumi preview`.
 */
export function localFleet(dir: string = DEFAULT_MODELS_DIR): LocalModel[] {
  const folders = loadModelFolders(dir);
  return folders.length > 0 ? folders.map(localModelFromFolder) : BUILT_IN_FLEET;
}

export interface RunningFleet {
  catalog: CatalogInput;
  /** The replicas that run from the start (a model that scales to zero has its own, in `scaler`). */
  simulators: RunningSimulator[];
  /** Starts and stops the replicas of the models that scale to zero. */
  scaler: LocalScaler;
  /** Hands the scaler the gateway's model pools: from then on demand wakes a model at zero. */
  attach(registry: Pick<ModelRegistry, "get">): void;
  close(): Promise<void>;
}

/**
 * Starts every replica of every model on loopback and returns the catalog that points at them. A model that scales
 * to zero gets reserved addresses and no replica; the gateway holds its requests (`wake`) until the scaler wakes it.
 */
export async function startLocalFleet(models: readonly LocalModel[] = localFleet(), log?: (line: string) => void): Promise<RunningFleet> {
  const simulators: RunningSimulator[] = [];
  const catalog: CatalogInput = { models: [] };
  const simulatorOf = (m: LocalModel) => ({ ...m.simulator, models: [m.id], kind: m.category === "embedder" ? ("embed" as const) : ("generate" as const) });
  const cold = models.flatMap((m) => (m.scaleToZero ? [{ id: m.id, replicas: m.replicas, scaleToZero: m.scaleToZero, simulator: simulatorOf(m) }] : []));
  const scaler = await LocalScaler.create(cold, log);
  try {
    for (const m of models) {
      const endpoints: { url: string }[] = [];
      if (m.scaleToZero) for (const url of scaler.urls(m.id)) endpoints.push({ url });
      else {
        for (let i = 0; i < m.replicas; i++) {
          const sim = await startSimulator({ ...simulatorOf(m), podName: `${m.id}-${i}` });
          simulators.push(sim);
          endpoints.push({ url: sim.url });
        }
      }
      catalog.models.push({
        id: m.id,
        category: m.category,
        ownedBy: m.ownedBy,
        maxConcurrency: m.maxConcurrency,
        upstream: { mode: "endpoints", endpoints },
        ...(m.routing ? { routing: m.routing } : {}),
        ...(m.scaleToZero ? { wake: m.wake ?? {} } : {}),
        ...(m.lora ? { lora: m.lora } : {}),
      });
    }
  } catch (err) {
    await Promise.all([...simulators.map((s) => s.close()), scaler.close()]);
    throw err;
  }
  return {
    catalog,
    simulators,
    scaler,
    attach: (registry) => scaler.start(registryView(registry)),
    close: async () => void (await Promise.all([...simulators.map((s) => s.close()), scaler.close()])),
  };
}
