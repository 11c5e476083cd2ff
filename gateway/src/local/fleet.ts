import { startSimulator, type RunningSimulator, type SimulatorConfigInput } from "../../../simulator/src";
import type { CatalogInput, ModelCategory } from "../config/catalog";

/** One model of the local fleet: its catalog identity and how its simulated replicas behave. */
export interface LocalModel {
  id: string;
  category: ModelCategory;
  ownedBy: string;
  replicas: number;
  maxConcurrency: number;
  simulator: Omit<SimulatorConfigInput, "models" | "kind" | "host" | "port" | "podName">;
}

/** Built-in fleet, used until model folders exist under deployments/models. */
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

export interface RunningFleet {
  catalog: CatalogInput;
  simulators: RunningSimulator[];
  close(): Promise<void>;
}

/** Starts every replica of every model on loopback and returns the catalog that points at them. */
export async function startLocalFleet(models: readonly LocalModel[] = BUILT_IN_FLEET): Promise<RunningFleet> {
  const simulators: RunningSimulator[] = [];
  const catalog: CatalogInput = { models: [] };
  try {
    for (const m of models) {
      const endpoints: { url: string }[] = [];
      for (let i = 0; i < m.replicas; i++) {
        const sim = await startSimulator({
          ...m.simulator,
          models: [m.id],
          kind: m.category === "embedder" ? "embed" : "generate",
          podName: `${m.id}-${i}`,
        });
        simulators.push(sim);
        endpoints.push({ url: sim.url });
      }
      catalog.models.push({
        id: m.id,
        category: m.category,
        ownedBy: m.ownedBy,
        maxConcurrency: m.maxConcurrency,
        upstream: { mode: "endpoints", endpoints },
      });
    }
  } catch (err) {
    await Promise.all(simulators.map((s) => s.close()));
    throw err;
  }
  return { catalog, simulators, close: async () => void (await Promise.all(simulators.map((s) => s.close()))) };
}
