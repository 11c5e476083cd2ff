// `npm run docs:simulator`: writes the configuration table of docs/simulator.md from SimulatorConfigSchema (each
// field's `.meta()` description, type and default), so the page cannot drift from the schema;
// simulator/test/docs-simulator.test.ts fails when the committed page differs.
import * as fs from "fs";
import * as path from "path";
import { type KeyRow, keyRows } from "../infra/platform/config-reference";
import { SimulatorConfigSchema } from "../simulator/src/config";
import { replaceSection } from "./lib/doc-sections";

export const SIMULATOR_PAGE = path.resolve(__dirname, "..", "docs", "simulator.md");
export const CONFIG_SECTION = "simulator-config";

const code = (v: unknown) => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``;
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** Objects have no default of their own (their fields do); an optional field without one is unset. */
function defaultCell(r: KeyRow): string {
  if (r.default !== undefined) return cell(code(r.default));
  return r.type === "object" ? "" : "unset";
}

/** One row per field of SimulatorConfigSchema, nested objects (`latency`, `prefixCache`, `lora`) expanded one level. */
export function simulatorConfigTable(): string {
  const rows = keyRows({ namespace: "simulator", title: "", intro: "", schema: SimulatorConfigSchema, secretKeys: [] });
  return [
    "| Field | Type | Default | Meaning |",
    "|---|---|---|---|",
    ...rows.map((r) => `| \`${r.key}\` | ${cell(r.type)} | ${defaultCell(r)} | ${cell(r.description)} |`),
  ].join("\n");
}

export function generatedSimulatorPage(text: string): string {
  return replaceSection(text, CONFIG_SECTION, simulatorConfigTable());
}

if (require.main === module) {
  fs.writeFileSync(SIMULATOR_PAGE, generatedSimulatorPage(fs.readFileSync(SIMULATOR_PAGE, "utf8")));
  console.log(`wrote ${path.relative(process.cwd(), SIMULATOR_PAGE)}`);
}
