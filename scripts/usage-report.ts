// npm run usage -- [--prometheus URL] [--range 30d] [--at 2026-11-01T00:00:00Z] [--key name] [--format table|csv|json]
// Requests and tokens per API key and model over a period, from the metrics server (docs/operations.md, "Usage per
// key"). PROMETHEUS_URL sets the default server.
import { parseArgs } from "util";
import { z } from "zod";
import { formatUsage, queryUsage, UsageQuerySchema } from "./lib/usage-query";

const FormatSchema = z.enum(["table", "csv", "json"]);

export function usageOptionsFromArgv(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    args,
    options: {
      prometheus: { type: "string" },
      range: { type: "string" },
      at: { type: "string" },
      key: { type: "string" },
      format: { type: "string" },
    },
  });
  const at = values.at === undefined ? new Date() : new Date(/^\d+(\.\d+)?$/.test(values.at) ? Number(values.at) * 1000 : values.at);
  const parsed = UsageQuerySchema.extend({ format: FormatSchema }).safeParse({
    prometheus: values.prometheus ?? env.PROMETHEUS_URL ?? "http://127.0.0.1:9090",
    range: values.range ?? "30d",
    at,
    key: values.key,
    format: values.format ?? "table",
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`--${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}

async function main(): Promise<void> {
  const { format, ...query } = usageOptionsFromArgv(process.argv.slice(2));
  process.stdout.write(formatUsage(await queryUsage(query), format));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
