// npm run simulate -- [--seeds 100000] [--from 1] | --seed N [--trace]
// The deterministic simulation of the gateway's control core (gateway/test/sim/world.ts) over more seeds than CI
// runs, or one seed replayed with what happened at each step (docs/development.md, "Simulation").
import { parseArgs } from "util";
import { z } from "zod";
import { simulate } from "../gateway/test/sim/world";

const Count = z.coerce.number().int().positive();

export function simulateOptionsFromArgv(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      seed: { type: "string" },
      seeds: { type: "string" },
      from: { type: "string" },
      trace: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  const parsed = z
    .object({ seed: Count.optional(), seeds: Count.default(10_000), from: Count.default(1), trace: z.boolean().default(false), help: z.boolean().default(false) })
    .safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`--${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}

const HELP = `npm run simulate -- [options]
  --seeds N   run N seeds (default 10000)
  --from N    the first seed (default 1)
  --seed N    run one seed
  --trace     with --seed: print what happened at each step
Prints each seed that breaks an invariant and what it broke; exits 1 if any did.
`;

async function main(): Promise<void> {
  const o = simulateOptionsFromArgv(process.argv.slice(2));
  if (o.help) return void process.stdout.write(HELP);
  const seeds = o.seed !== undefined ? [o.seed] : Array.from({ length: o.seeds }, (_, i) => o.from + i);
  const started = Date.now();
  let failed = 0;
  for (const seed of seeds) {
    const r = await simulate(seed, { trace: o.trace });
    if (o.trace) process.stdout.write(`${r.trace.join("\n")}\n`);
    if (r.violations.length > 0) {
      failed += 1;
      process.stdout.write(`seed ${seed}: ${r.violations.join("\n  ")}\n`);
    }
    if (seeds.length > 1 && seed % 1000 === 0) process.stderr.write(`${seed - o.from + 1} seeds, ${failed} failed, ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  process.stdout.write(`${seeds.length} seed${seeds.length === 1 ? "" : "s"} from ${seeds[0]}: ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  process.exitCode = failed > 0 ? 1 : 0;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
  });
}
