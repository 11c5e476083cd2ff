// How far back the usage ledger reaches: the bucket's lifecycle rule, and the refusal of a report that starts earlier.
import { GetBucketLifecycleConfigurationCommand, S3Client } from "@aws-sdk/client-s3";
import { DEFAULT_RETENTION_DAYS } from "./usage-options";

/** The ID of the lifecycle rule the stack puts on the ledger's prefix. */
export const LEDGER_LIFECYCLE_RULE_ID = "ai-platform-usage-ledger";

const DAY_MS = 86_400_000;

export const DEFAULT_RETENTION: Retention = { days: DEFAULT_RETENTION_DAYS, source: "the default; --retention-days sets it" };

export interface Retention {
  days: number;
  /** Where the figure comes from, for the refusal's message. */
  source: string;
}

/**
 * The ledger rule's expiration, read from the bucket. Reading it needs s3:GetLifecycleConfiguration, which a
 * report's credentials may lack, and some S3-compatible servers do not implement it: then the stack's default.
 */
export async function bucketRetention(bucket: string, endpoint: string | undefined, region: string): Promise<Retention> {
  const client = new S3Client({ region, endpoint, forcePathStyle: endpoint !== undefined, maxAttempts: 1, requestHandler: { requestTimeout: 10_000, connectionTimeout: 5_000 } });
  try {
    const answer = await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
    const rule = answer.Rules?.find((r) => r.ID === LEDGER_LIFECYCLE_RULE_ID && r.Status === "Enabled");
    const days = rule?.Expiration?.Days;
    if (days !== undefined && days > 0) return { days, source: `the bucket's lifecycle rule ${LEDGER_LIFECYCLE_RULE_ID}` };
  } catch {
    // Not allowed, no configuration, or not implemented: the default below.
  } finally {
    client.destroy();
  }
  return DEFAULT_RETENTION;
}

/** The first day whose every hour is still kept. */
function firstKeptDay(nowMs: number, days: number): string {
  const oldest = nowMs - days * DAY_MS;
  return new Date(Math.ceil(oldest / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/** Why a report from `fromMs` would undercount, or undefined when the ledger still holds the whole range. */
export function retentionProblem(fromMs: number, nowMs: number, retention: Retention): string | undefined {
  if (fromMs >= nowMs - retention.days * DAY_MS) return undefined;
  const first = firstKeptDay(nowMs, retention.days);
  return (
    `--from ${new Date(fromMs).toISOString()}: the ledger keeps ${retention.days} days (${retention.source}); ` +
    `older hours have expired, so the report would undercount. Ask for --from ${first} or later; ` +
    `usage before that is only in reports saved while it was kept.`
  );
}
