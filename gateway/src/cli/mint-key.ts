/**
 * `npm run key:mint -- --name team-a [--models a,b] [--expires 2027-01-01T00:00:00Z] [--rpm 60] [--tpm 100000] [--max-concurrent 8] [--priority batch] [--weight 2]`
 * Mints an API key for operators without Pulumi (or for the embedded default): prints the key once on stdout
 * and the entry to add to the keys file (which holds only the hash) on stderr.
 */
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { ApiKeyEntrySchema, generateApiKey, hashApiKey } from "../auth/api-keys";

export function mintKey(argv: string[]): { key: string; entryYaml: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      name: { type: "string" },
      models: { type: "string" },
      expires: { type: "string" },
      rpm: { type: "string" },
      tpm: { type: "string" },
      "max-concurrent": { type: "string" },
      priority: { type: "string" },
      weight: { type: "string" },
    },
    strict: true,
  });
  const key = generateApiKey();
  const parsed = ApiKeyEntrySchema.safeParse({
    name: values.name,
    sha256: hashApiKey(key),
    models: values.models ? values.models.split(",").map((m) => m.trim()).filter(Boolean) : undefined,
    expiresAt: values.expires,
    rpm: values.rpm === undefined ? undefined : Number(values.rpm),
    tpm: values.tpm === undefined ? undefined : Number(values.tpm),
    maxConcurrent: values["max-concurrent"] === undefined ? undefined : Number(values["max-concurrent"]),
    priority: values.priority,
    weight: values.weight === undefined ? undefined : Number(values.weight),
  });
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `--${String(i.path[0]).replace("expiresAt", "expires").replace("maxConcurrent", "max-concurrent")}: ${i.message}`).join("\n"));
  }
  return { key, entryYaml: stringify({ keys: [parsed.data] }) };
}

if (require.main === module) {
  try {
    const { key, entryYaml } = mintKey(process.argv.slice(2));
    process.stderr.write(`Add this entry to the keys file (GATEWAY_KEYS_FILE); it holds only the hash:\n\n${entryYaml}\nThe key (shown once):\n`);
    process.stdout.write(`${key}\n`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\nusage: npm run key:mint -- --name NAME [--models a,b] [--expires ISO8601] [--rpm N] [--tpm N] [--max-concurrent N] [--priority interactive|batch] [--weight N]\n`);
    process.exit(2);
  }
}
