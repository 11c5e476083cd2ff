/** Public API of the vLLM model-server simulator. */
export { SimulatorConfigSchema, type SimulatorConfig, type SimulatorConfigInput } from "./config";
export { startSimulator, type RunningSimulator } from "./server";
export type { SimulatorStats } from "./stats";
