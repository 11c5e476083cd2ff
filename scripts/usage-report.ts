// npm run usage -- [--prometheus URL] [--range 7d] [--at 2026-11-01T00:00:00Z] [--key name] [--format table|csv|json]
// Requests and tokens per API key and model over a period, from the metrics server (docs/operations.md, "Usage per
// key"). PROMETHEUS_URL sets the default server. A period reaching past the server's retention is refused.
import { parseArgs } from "util";
import { z } from "zod";
import { METRICS_STORAGE } from "../infra/monitoring/metrics-values";
import { durationSeconds } from "../infra/platform/durations";
import { formatUsage, queryUsage, UsageQuerySchema } from "./lib/usage-query";

const FormatSchema = z.enum(["table", "csv", "json"]);

/** A week: well inside what the metrics server keeps. */
export const DEFAULT_RANGE = "7d";

/**
 * Refuses a period that starts before the oldest sample the metrics server keeps: increase() over it would count
 * only what is left, a silent undercount. `retention` is the stack's (METRICS_STORAGE); the size cap may cut sooner.
 */
export function retentionProblem(range: string, at: Date, now: Date, retention: string = METRICS_STORAGE.retention): string | undefined {
  const reach = durationSeconds(range) + Math.max(0, (now.getTime() - at.getTime()) / 1000);
  if (reach <= durationSeconds(retention)) return undefined;
  const days = (seconds: number) => `${Math.round((seconds / 86_400) * 10) / 10} days`;
  const kept = days(durationSeconds(retention));
  return (
    `--range ${range}${at < now ? ` ending at ${at.toISOString()}` : ""}: the period starts ${days(reach)} ago, but the metrics server keeps ${kept} (its retention), so the report would undercount. ` +
    `Ask for a period that started at most ${kept} ago (--range ${retention} at most, ending now); ` +
    `for a longer one, such as a month, add up reports of shorter periods, each run within ${kept} of its period's start.`
  );
}

export const USAGE_HELP = `Usage: npm run usage -- [options]
Requests and tokens per API key and model over a period, from the metrics server.
  --prometheus URL   the metrics server (default $PROMETHEUS_URL, else http://127.0.0.1:9090)
  --range D          the period, a Prometheus duration ending at --at (default ${DEFAULT_RANGE}; at most the server's
                     retention, ${METRICS_STORAGE.retention}, back from now)
  --at TIME          the period's end: ISO 8601 or Unix seconds (default now)
  --key NAME         one key only
  --format F         table, csv or json (default table)
  --help             this text`;

/** The options, or "help" when asked for it; throws with a message naming the option on anything else. */
export function usageOptionsFromArgv(args: string[], env: NodeJS.ProcessEnv = process.env, now: Date = new Date()) {
  const { values } = parseArgs({
    args,
    options: {
      prometheus: { type: "string" },
      range: { type: "string" },
      at: { type: "string" },
      key: { type: "string" },
      format: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return "help" as const;
  const at = values.at === undefined ? now : new Date(/^\d+(\.\d+)?$/.test(values.at) ? Number(values.at) * 1000 : values.at);
  const parsed = UsageQuerySchema.extend({ format: FormatSchema }).safeParse({
    prometheus: values.prometheus ?? env.PROMETHEUS_URL ?? "http://127.0.0.1:9090",
    range: values.range ?? DEFAULT_RANGE,
    at,
    key: values.key,
    format: values.format ?? "table",
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`--${String(issue.path[0])}: ${issue.message}`);
  }
  const problem = retentionProblem(parsed.data.range, parsed.data.at, now);
  if (problem) throw new Error(problem);
  return parsed.data;
}

async function main(): Promise<void> {
  const options = usageOptionsFromArgv(process.argv.slice(2));
  if (options === "help") {
    process.stdout.write(`${USAGE_HELP}\n`);
    return;
  }
  const { format, ...query } = options;
  process.stdout.write(formatUsage(await queryUsage(query), format));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    // A wrong option gets the options with it.
    if ((err as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") console.error(USAGE_HELP);
    process.exit(1);
  });
}
