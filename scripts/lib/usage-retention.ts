// How far back the usage ledger reaches: the bucket's lifecycle rule, and the refusal of a report that starts earlier.
import { DEFAULT_RETENTION_DAYS, LEDGER_RULE_ID } from "../../gateway/src/ledger/format";
import type { S3LedgerStore } from "../../gateway/src/ledger/store";

/** The ID of the lifecycle rule the stack puts on the ledger's prefix. */
export const LEDGER_LIFECYCLE_RULE_ID = LEDGER_RULE_ID;

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
export async function bucketRetention(store: S3LedgerStore): Promise<Retention> {
  try {
    const days = await store.expirationDays(LEDGER_RULE_ID);
    if (days !== undefined) return { days, source: `the bucket's lifecycle rule ${LEDGER_RULE_ID}` };
  } catch {
    // Not allowed, no configuration, or not implemented: the default below.
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
