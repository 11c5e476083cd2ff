// npm run model:add -- <category> <model> [--slug s] [--id id] [--weights hf://org/name] [--image img] [--gpus N]
//   [--replicas N] [--max-num-seqs N] [--node-group g] [--owned-by o] [--tool-call-parser hermes] [--simulated] [--dir root]
// Scaffolds deployments/models/<category>/<model>/{gaie-<slug>,ms-<slug>}/values.yaml and model.yaml (docs/models.md).
import { parseArgs } from "util";
import { CATEGORIES, type Category } from "../infra/serving/constants";
import { displayPath } from "../infra/serving/model-folders";
import { scaffoldModel, type ScaffoldOptions } from "../infra/serving/scaffold";

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number >= 0, got ${v}`);
  return n;
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
      "tool-call-parser": { type: "string" },
      simulated: { type: "boolean", default: false },
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
    replicas: int("replicas", values.replicas),
    maxNumSeqs: int("max-num-seqs", values["max-num-seqs"]),
    nodeGroup: values["node-group"],
    ownedBy: values["owned-by"],
    toolCallParser: values["tool-call-parser"],
    simulated: values.simulated,
    root: values.dir,
  };
}

function main(): void {
  const def = scaffoldModel(optionsFromArgv(process.argv.slice(2)));
  console.log(`created ${displayPath(def.dir)} (model id "${def.id}", slug ${def.slug}, ${def.gpus.perDecodeReplica} GPU per replica)`);
  console.log(`next: add "${def.ref}" to serving:models in Pulumi.<stack>.yaml, then pulumi preview && pulumi up`);
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
