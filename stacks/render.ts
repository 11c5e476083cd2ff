// `npm run render -- --stack dev --out render`: the whole program evaluated offline (see infra/platform/render.ts).
import * as path from "path";
import { parseArgs } from "util";
import { QUALIFIED_SECRET_KEYS as MONITORING_SECRETS } from "../infra/monitoring/config";
import { render } from "../infra/platform/render";

/** Secrets read by the parts of the program; each part adds its own. */
export const PROGRAM_SECRET_KEYS: readonly string[] = [...MONITORING_SECRETS];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { stack: { type: "string", default: "dev" }, out: { type: "string", default: "render" } },
  });
  const projectRoot = path.resolve(__dirname, "..");
  const out = path.resolve(values.out ?? "render");
  const result = await render({
    stack: values.stack ?? "dev",
    out,
    projectRoot,
    project: "ai-platform",
    knownSecretKeys: PROGRAM_SECRET_KEYS,
    env: process.env,
    program: async () => (await import("./program")).program(),
  });
  console.log(`rendered ${result.resources.length} resources and ${result.manifests.length} manifests to ${out}`);
}

// Only as a script: tests import PROGRAM_SECRET_KEYS from here.
if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
