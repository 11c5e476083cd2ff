/**
 * `npm run docs:gateway`: regenerates the generated parts of docs/gateway-api.md from the code, so the page and
 * the gateway cannot drift apart (gateway/test/unit/gateway-docs.test.ts fails when they do):
 * the Limits table from the settings' `.meta()` (gateway/src/config/settings.ts; a limit's `why` stays in the code)
 * and the memory bound with its terms from gateway/src/config/memory-bound.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IMAGE_HEAP_LIMIT_MIB, MEMORY_BOUND_TERMS, memoryBoundTerms, rssBoundBytes, type MemoryBoundTerm } from "../gateway/src/config/memory-bound";
import { LIMIT_SETTINGS, limitDoc, SETTINGS_ENV, settingsFromEnv } from "../gateway/src/config/settings";
import { formatDefault } from "../infra/platform/config-reference";

export const GATEWAY_API_DOC = join(__dirname, "..", "docs", "gateway-api.md");

const MiB = 1024 * 1024;
const cell = (text: string) => text.replaceAll("|", "\\|");

export function limitsTable(): string {
  const defaults = settingsFromEnv({});
  const rows = LIMIT_SETTINGS.map((key) => {
    const doc = limitDoc(key);
    return `| \`${key}\` | \`${SETTINGS_ENV[key]}\` | ${formatDefault(key, defaults[key])} | ${cell(doc.description)} | ${cell(doc.clientSees)} |`;
  });
  return ["| Setting | Environment variable | Default | What it bounds | What the client sees |", "|---|---|---|---|---|", ...rows].join("\n");
}

/** The bound for the defaults, and the table of its terms. */
export function memoryBoundSection(): string {
  const defaults = settingsFromEnv({});
  const bound = rssBoundBytes(defaults) / MiB;
  const terms = memoryBoundTerms(defaults);
  const rows = (Object.keys(MEMORY_BOUND_TERMS) as MemoryBoundTerm[]).map((t) => `| ${MEMORY_BOUND_TERMS[t].label} | ${formatDefault("Bytes", terms[t])} | ${cell(MEMORY_BOUND_TERMS[t].why)} |`);
  return [
    `With the defaults above the gateway's resident memory stays under **${bound} MiB** (V8 heap capped at ${IMAGE_HEAP_LIMIT_MIB} MiB, as in the image).`,
    "",
    "The bound is a formula of the limits (`gateway/src/config/memory-bound.ts`), each term measured:",
    "",
    "| Term | Default | Why it is bounded |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
}

/** `text` with the section between `<!-- name:start -->` and `<!-- name:end -->` replaced by `body`. */
export function replaceSection(text: string, name: string, body: string): string {
  const re = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  if (!re.test(text)) throw new Error(`docs/gateway-api.md has no ${name} section`);
  return text.replace(re, (_m, start: string, end: string) => `${start}${body}\n${end}`);
}

export function generatedDoc(text: string): string {
  return replaceSection(replaceSection(text, "limits", limitsTable()), "memory-bound", memoryBoundSection());
}

if (require.main === module) {
  writeFileSync(GATEWAY_API_DOC, generatedDoc(readFileSync(GATEWAY_API_DOC, "utf8")));
}
