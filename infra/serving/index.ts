export * from "./config";
export * from "./constants";
export { loadModelFolders, ModelFolderError, type ModelDefinition } from "./model-folders";
export { planModels, type PlannedModel } from "./plan";
export { assertGpuCapacity, checkGpuCapacity, GpuCapacityError, gpuUsage } from "./gpu-preflight";
export { buildCatalog, catalogYaml } from "./catalog";
export { ServedModel, type ServedModelArgs } from "./served-model";
