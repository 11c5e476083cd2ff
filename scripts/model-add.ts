// npm run model:add -- <category> <model> --weights hf://org/name --weights-size <GiB> --family <f> --context-length N
//   [--gated] [--tools] [--max-model-len N] [--slug s] [--id id] [--image img] [--gpus N] [--gpu-resource r]
//   [--replicas N] [--max-num-seqs N] [--node-group g] [--owned-by o] [--dir root] [--ask]      or: --simulated
// Scaffolds deployments/models/<category>/<model>/{gaie-<slug>,ms-<slug>}/values.yaml and model.yaml (docs/models.md).
// npm run model:add -- adapter <category>/<model> <name> --source hf://org/name --rank N [--revision r] [--preload]
//   [--size GiB] [--max-loras N] [--max-lora-rank N] [--dir root]
// Adds a LoRA adapter to that folder's model.yaml.
// On a terminal (or with --ask) it asks for what a vLLM model needs and was not given: the weights' size, family
// and context length.
import { createInterface } from "readline/promises";
import { parseArgs } from "util";
import { CATEGORIES, type Category } from "../infra/serving/constants";
import { FAMILY_NAMES, type FamilyName } from "../infra/serving/families";
import { displayPath } from "../infra/serving/model-folders";
import { scaffoldModel, type ScaffoldOptions } from "../infra/serving/scaffold";
import { addAdapter, type AdapterOptions } from "../infra/serving/scaffold-adapter";

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number >= 0, got ${v}`);
  return n;
}

function positiveNumber(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!(n > 0)) throw new Error(`--${name} must be a number > 0, got ${v}`);
  return n;
}

function family(v: string | undefined): FamilyName | undefined {
  if (v === undefined) return undefined;
  if (!(FAMILY_NAMES as string[]).includes(v)) throw new Error(`--family must be one of ${FAMILY_NAMES.join(", ")}, got ${v}`);
  return v as FamilyName;
}

/** The command line (after `--`) as scaffold options; throws the usage on a wrong category or model. */
export function optionsFromArgv(args: string[]): ScaffoldOptions {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      slug: { type: "string" },
      id: { type: "string" },
      weights: { type: "string" },
      image: { type: "string" },
      gpus: { type: "string" },
      replicas: { type: "string" },
      "max-num-seqs": { type: "string" },
      "node-group": { type: "string" },
      "owned-by": { type: "string" },
      "weights-size": { type: "string" },
      gated: { type: "boolean", default: false },
      family: { type: "string" },
      "context-length": { type: "string" },
      "max-model-len": { type: "string" },
      tools: { type: "boolean", default: false },
      simulated: { type: "boolean", default: false },
      "gpu-resource": { type: "string" },
      ask: { type: "boolean", default: false },
      dir: { type: "string" },
    },
  });
  const [category, model] = positionals;
  if (positionals.length !== 2 || !(CATEGORIES as readonly string[]).includes(category ?? "") || !model) {
    throw new Error(`usage: npm run model:add -- <${CATEGORIES.join("|")}> <model> [--weights hf://org/name | --simulated] [options]`);
  }
  return {
    category: category as Category,
    model,
    slug: values.slug,
    id: values.id,
    weights: values.weights,
    image: values.image,
    gpus: int("gpus", values.gpus),
    gpuResource: values["gpu-resource"],
    replicas: int("replicas", values.replicas),
    maxNumSeqs: int("max-num-seqs", values["max-num-seqs"]),
    nodeGroup: values["node-group"],
    ownedBy: values["owned-by"],
    weightsGiB: positiveNumber("weights-size", values["weights-size"]),
    gated: values.gated,
    family: family(values.family),
    contextLength: int("context-length", values["context-length"]),
    maxModelLen: int("max-model-len", values["max-model-len"]),
    tools: values.tools,
    simulated: values.simulated,
    root: values.dir,
  };
}

/** `adapter <category>/<model> <name> …` (after `--`) as adapter options; throws the usage on a wrong shape. */
export function adapterOptionsFromArgv(args: string[]): AdapterOptions {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      source: { type: "string" },
      revision: { type: "string" },
      rank: { type: "string" },
      preload: { type: "boolean", default: false },
      size: { type: "string" },
      "max-loras": { type: "string" },
      "max-lora-rank": { type: "string" },
      dir: { type: "string" },
    },
  });
  const [command, ref, name] = positionals;
  if (command !== "adapter" || positionals.length !== 3 || !ref || !name || values.rank === undefined) {
    throw new Error("usage: npm run model:add -- adapter <category>/<model> <name> --source hf://<org>/<name> --rank N [--revision r] [--preload] [--size GiB] [--max-loras N] [--max-lora-rank N]");
  }
  return {
    ref,
    name,
    source: values.source,
    revision: values.revision,
    rank: int("rank", values.rank) as number,
    preload: values.preload,
    sizeGiB: positiveNumber("size", values.size),
    maxLoras: int("max-loras", values["max-loras"]),
    maxLoraRank: int("max-lora-rank", values["max-lora-rank"]),
    root: values.dir,
  };
}

/** Whether to ask for missing values: on a terminal, or when --ask says so (piped answers). */
function asks(argv: string[]): boolean {
  return argv.includes("--ask") || (process.stdin.isTTY === true && process.stdout.isTTY === true);
}

/** Asks, one line each, for what a vLLM model needs and the command line did not give. */
export async function askMissing(o: ScaffoldOptions, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<ScaffoldOptions> {
  if (o.simulated) return o;
  const rl = createInterface({ input, output, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async <T>(question: string, parse: (v: string) => T | undefined): Promise<T> => {
    for (;;) {
      output.write(question);
      const next = await lines.next();
      if (next.done) throw new Error(`no answer to: ${question.trim()}`);
      try {
        const v = parse(String(next.value).trim());
        if (v !== undefined) return v;
      } catch (err) {
        output.write(`${(err as Error).message}\n`);
      }
    }
  };
  try {
    const weightsGiB = o.weightsGiB ?? (o.weights?.startsWith("pvc") ? undefined : await ask("Size of the weights in GiB (the safetensors files): ", (v) => positiveNumber("weights-size", v)));
    const fam = o.family ?? (await ask(`Model family (${FAMILY_NAMES.join(", ")}): `, family));
    const contextLength = o.contextLength ?? (await ask("Context length (config.json max_position_embeddings): ", (v) => positiveNumber("context-length", v)));
    return { ...o, weightsGiB, family: fam, contextLength };
  } finally {
    rl.close();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "adapter") {
    const o = adapterOptionsFromArgv(argv);
    const def = addAdapter(o);
    console.log(`added adapter "${o.name}" to ${displayPath(def.dir)} (${o.preload ? "preloaded on every replica" : "loaded when first asked for"}); it is served once the stack applies`);
    return;
  }
  let options = optionsFromArgv(argv);
  if (asks(argv)) options = await askMissing(options, process.stdin, process.stdout);
  const def = scaffoldModel(options);
  console.log(`created ${displayPath(def.dir)} (model id "${def.id}", slug ${def.slug}, ${def.gpus.perDecodeReplica} GPU per replica)`);
  console.log(`next: add "${def.ref}" to serving:models in Pulumi.<stack>.yaml, then pulumi preview && pulumi up`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
