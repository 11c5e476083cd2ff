// Test fixtures: copies of the sample model folders in a scratch directory, edited per test, and a complete
import { clusterConfig, withOverrides } from "../platform/config-testing";
// `serving:` configuration as the runtime holds it.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse, stringify } from "yaml";
import { DEFAULT_MODELS_DIR } from "./constants";

/** A scratch copy of deployments/models (or an empty root); remove it with `cleanup`. */
export function scratchModels(copySamples = true): { root: string; cleanup(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "models-"));
  if (copySamples) fs.cpSync(DEFAULT_MODELS_DIR, root, { recursive: true });
  return { root, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A parsed YAML document that tests edit freely (breaking it on purpose is the point). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reach into arbitrary chart values
export type YamlDoc = Record<string, any>;

/** Edits a YAML file in place through a callback on its parsed document. */
export function editYaml(file: string, edit: (doc: YamlDoc) => void): void {
  const doc = (parse(fs.readFileSync(file, "utf8")) ?? {}) as YamlDoc;
  edit(doc);
  fs.writeFileSync(file, stringify(doc));
}

/** The ms/gaie values files of a sample folder inside a scratch root. */
export function folderFiles(root: string, ref: string, slug: string): { ms: string; gaie: string; meta: string; dir: string } {
  const dir = path.join(root, ref);
  return { dir, ms: path.join(dir, `ms-${slug}`, "values.yaml"), gaie: path.join(dir, `gaie-${slug}`, "values.yaml"), meta: path.join(dir, "model.yaml") };
}

export const SAMPLE_REFS = ["generative/qwen3-8b", "generative/sim-chat", "embedder/bge-small-en"] as const;

/** Every sample referenced, with exactly the GPUs they need (1 on-prem, 1 on gpu-small). */
export function servingConfig(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const base: Record<string, string> = {
    ...clusterConfig(),
    "platform:labelDomain": "ai-platform.io",
    "serving:models": JSON.stringify(SAMPLE_REFS),
    "serving:namespace": "app-serving",
    "serving:gpuCapacity": JSON.stringify({ default: 1, "gpu-small": 1 }),
  };
  return withOverrides(base, overrides);
}

/** The raw `serving:` namespace without its prefix, as `parseServingConfig` takes it. */
export function rawServing(config: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).filter(([k]) => k.startsWith("serving:")).map(([k, v]) => [k.slice("serving:".length), v]));
}
