// npm run usage -- [--from 2026-01-01] [--to 2026-12-31] [--by key,model,month] [--key NAME] [--model ID] [--format table|csv|json]
// Requests and tokens per API key and model over any period the usage ledger keeps (docs/usage-ledger.md), read
// from its bucket or directory. A period starting before what the ledger keeps is refused: it would undercount.
import { hourStart } from "../gateway/src/ledger/format";
import { readLines } from "../gateway/src/ledger/read";
import { DirLedgerStore, S3LedgerStore, type LedgerStore } from "../gateway/src/ledger/store";
import { USAGE_HELP, usageOptionsFromArgv, type UsageOptions } from "./lib/usage-options";
import { bucketRetention, DEFAULT_RETENTION, retentionProblem, type Retention } from "./lib/usage-retention";
import { formatUsage, summarize } from "./lib/usage-rows";

/** The report's "now": the clock, or USAGE_REPORT_NOW (an ISO instant) for tests that move it. */
function reportNow(env: NodeJS.ProcessEnv): Date {
  const moved = env.USAGE_REPORT_NOW;
  if (moved === undefined || moved === "") return new Date();
  const ms = Date.parse(moved);
  if (Number.isNaN(ms)) throw new Error(`USAGE_REPORT_NOW: "${moved}" is not an instant`);
  return new Date(ms);
}

async function retentionOf(o: UsageOptions, store: LedgerStore): Promise<Retention> {
  if (o.retentionDays !== undefined) return { days: o.retentionDays, source: "--retention-days" };
  // A directory has no lifecycle: what the bucket would keep.
  return store instanceof S3LedgerStore ? bucketRetention(store) : DEFAULT_RETENTION;
}

async function main(): Promise<void> {
  const now = reportNow(process.env);
  const options = usageOptionsFromArgv(process.argv.slice(2), process.env, now);
  if (options === "help") {
    process.stdout.write(`${USAGE_HELP}\n`);
    return;
  }
  // The ledger counts whole hours: the report covers every hour from the one holding --from to those starting before --to.
  const from = hourStart(options.from);
  const store: LedgerStore = options.dir !== undefined ? new DirLedgerStore(options.dir) : new S3LedgerStore({ bucket: options.bucket!, endpoint: options.endpoint, region: options.region });
  try {
    const problem = retentionProblem(from, now.getTime(), await retentionOf(options, store));
    if (problem) throw new Error(problem);
    const lines = await readLines(store, options.prefix, from, options.to);
    process.stdout.write(formatUsage(summarize(lines, options.by, options), options.by, options.format));
  } finally {
    if (store instanceof S3LedgerStore) store.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    // A wrong option gets the options with it.
    if ((err as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") console.error(USAGE_HELP);
    process.exit(1);
  });
}
