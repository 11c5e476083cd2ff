// `npm run model:add -- adapter`: adds a LoRA adapter to an existing folder's model.yaml (its comments kept), then
// checks every folder with the loader `pulumi preview` uses; a change that breaks a rule is undone, naming it.
import * as fs from "fs";
import * as path from "path";
import { Document, isMap, isSeq, parseDocument, type YAMLMap } from "yaml";
import { DEFAULT_MODELS_DIR } from "./constants";
import { displayPath, loadModelFolders, METADATA_FILE, type ModelDefinition, ModelFolderError } from "./model-folders";

export interface AdapterOptions {
  /** `<category>/<model>`: the folder of the base model. */
  readonly ref: string;
  /** The model id clients send for the adapter. */
  readonly name: string;
  /** hf://<org>/<name> or s3://<bucket>/<prefix>; required for a vLLM model. */
  readonly source?: string;
  readonly revision?: string;
  readonly rank: number;
  /** Loaded on every replica at start, instead of when first asked for. */
  readonly preload?: boolean;
  readonly sizeGiB?: number;
  /** Set lora.maxLoras (vLLM --max-loras). */
  readonly maxLoras?: number;
  /** Set lora.maxLoraRank (vLLM --max-lora-rank). */
  readonly maxLoraRank?: number;
  /** Root of the model folders; default deployments/models. */
  readonly root?: string;
}

/** Every folder's problems, none when all load. */
function folderProblems(root: string): string[] {
  try {
    loadModelFolders(root);
    return [];
  } catch (err) {
    if (err instanceof ModelFolderError) return [...err.problems];
    throw err;
  }
}

/** model.yaml with the adapter added: the `lora` block created when absent, the limits set when given. */
function withAdapter(text: string, o: AdapterOptions): string {
  // An empty (or absent) model.yaml is valid: it starts as an empty map.
  const parsed = parseDocument(text);
  const doc: Document = isMap(parsed.contents) ? parsed : new Document({});
  if (!isMap(doc.get("lora"))) doc.set("lora", doc.createNode({ adapters: [] }));
  const lora = doc.get("lora") as YAMLMap;
  if (o.maxLoras !== undefined) lora.set("maxLoras", o.maxLoras);
  if (o.maxLoraRank !== undefined) lora.set("maxLoraRank", o.maxLoraRank);
  if (!isSeq(lora.get("adapters"))) lora.set("adapters", doc.createNode([]));
  const adapter = {
    name: o.name,
    ...(o.source ? { source: o.source } : {}),
    ...(o.revision ? { revision: o.revision } : {}),
    rank: o.rank,
    ...(o.preload ? { preload: true } : {}),
    ...(o.sizeGiB !== undefined ? { sizeGiB: o.sizeGiB } : {}),
  };
  doc.addIn(["lora", "adapters"], doc.createNode(adapter));
  return doc.toString();
}

/** Adds the adapter and returns the folder as loaded; refuses, leaving model.yaml as it was, what a folder rule rejects. */
export function addAdapter(o: AdapterOptions): ModelDefinition {
  const root = o.root ?? DEFAULT_MODELS_DIR;
  const dir = path.join(root, o.ref);
  const file = path.join(dir, METADATA_FILE);
  if (!fs.existsSync(dir)) throw new Error(`${displayPath(dir)} does not exist (add the model first: npm run model:add -- <category> <model> …)`);
  // A change is judged on folders that load: problems they already have come first.
  const existing = folderProblems(root);
  if (existing.length > 0) throw new ModelFolderError(existing);
  const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
  fs.writeFileSync(file, withAdapter(before ?? "", o));
  const problems = folderProblems(root);
  if (problems.length > 0) {
    if (before === undefined) fs.rmSync(file);
    else fs.writeFileSync(file, before);
    throw new ModelFolderError(problems);
  }
  return loadModelFolders(root).find((m) => m.dir === dir) as ModelDefinition;
}
