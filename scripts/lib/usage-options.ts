// The options of `npm run usage`: one schema for the flags and their environment defaults, and the help text.
import { DEFAULT_RETENTION_DAYS } from "../../gateway/src/ledger/format";
import { parseArgs } from "node:util";
import { z } from "zod";
import { GatewaySettingsSchema, SETTINGS_ENV } from "../../gateway/src/config/settings";

/** What a report can group by, each a field of its rows. */
export const GROUPS = ["key", "model", "month", "day", "hour"] as const;
export type Group = (typeof GROUPS)[number];

/** Kept when the bucket names no lifecycle rule the report can read: 13 months, the stack's default. */
export { DEFAULT_RETENTION_DAYS };

const DAY_MS = 86_400_000;
// A date, or an instant: a date and an hour at least; no zone means UTC.
const WHEN = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2})(:\d{2}(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * A date or an instant as epoch ms. A date is its UTC day's start, or with `endOfDay` the next day's start, so that
 * `--to 2026-12-31` covers the 31st.
 */
function when(endOfDay: boolean) {
  return z.string().transform((text, ctx) => {
    const m = WHEN.exec(text);
    const day = m ? Date.parse(`${m[1]}T00:00:00Z`) : Number.NaN;
    let ms = Number.NaN;
    // Date.parse takes 2026-02-30 for March 2nd: the day must read back as written.
    if (m && !Number.isNaN(day) && new Date(day).toISOString().slice(0, 10) === m[1]) {
      ms = m[2] === undefined ? day + (endOfDay ? DAY_MS : 0) : Date.parse(`${m[1]}T${m[2]}${m[3] ?? ":00"}${m[4] ?? "Z"}`);
    }
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: "custom", message: `"${text}" is not a date (2026-01-31) or an instant (2026-01-31T12:00Z), UTC unless it names a zone` });
      return z.NEVER;
    }
    return ms;
  });
}

const settings = GatewaySettingsSchema.shape;

export const UsageOptionsSchema = z
  .strictObject({
    from: when(false).describe("First day or instant (UTC)."),
    to: when(true).describe("Last day (inclusive) or the end instant (UTC)."),
    by: z
      .string()
      .transform((s) => s.split(",").map((g) => g.trim()))
      .pipe(
        z
          .array(z.enum(GROUPS, { error: (i) => `"${String(i.input)}" is none of ${GROUPS.join(", ")}` }))
          .min(1)
          .refine((gs) => new Set(gs).size === gs.length, "a field named twice"),
      ),
    key: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    format: z.enum(["table", "csv", "json"]),
    bucket: settings.ledgerBucket,
    endpoint: settings.ledgerEndpoint,
    region: settings.ledgerRegion,
    prefix: settings.ledgerPrefix,
    dir: settings.ledgerDir,
    retentionDays: z.coerce.number().int().positive().optional(),
  })
  .superRefine((o, ctx) => {
    if (o.to <= o.from) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after --from" });
    if (o.bucket === undefined && o.dir === undefined) ctx.addIssue({ code: "custom", path: ["bucket"], message: `name the ledger: --bucket (or ${SETTINGS_ENV.ledgerBucket}) or --dir (or ${SETTINGS_ENV.ledgerDir})` });
    if (o.bucket !== undefined && o.dir !== undefined) ctx.addIssue({ code: "custom", path: ["dir"], message: "a bucket or a directory, not both" });
  });
export type UsageOptions = z.infer<typeof UsageOptionsSchema>;

export const USAGE_HELP = `Usage: npm run usage -- [options]
Requests and tokens per API key and model over a period, from the usage ledger (docs/usage-ledger.md).
  --from DATE         first day (2026-01-01) or instant (2026-01-01T06:00Z), UTC (default: this month's start)
  --to DATE           last day, included whole, or the end instant (default: now)
  --by FIELDS         comma list of ${GROUPS.join(", ")} (default: key,model)
  --key NAME          one API key only
  --model ID          one model only
  --format F          table, csv or json (default: table)
  --bucket B          the ledger's bucket (default: $${SETTINGS_ENV.ledgerBucket}); credentials from the AWS SDK's chain
  --endpoint URL      an S3-compatible endpoint (default: $${SETTINGS_ENV.ledgerEndpoint}; unset: AWS S3)
  --region R          (default: $${SETTINGS_ENV.ledgerRegion}, else ${settings.ledgerRegion.parse(undefined)})
  --prefix P          the ledger's prefix in the bucket or directory (default: $${SETTINGS_ENV.ledgerPrefix}, else ${settings.ledgerPrefix.parse(undefined)})
  --dir PATH          a ledger directory instead of a bucket (default: $${SETTINGS_ENV.ledgerDir})
  --retention-days N  what the ledger keeps (default: the bucket's lifecycle rule, else ${DEFAULT_RETENTION_DAYS})
  --help              this text`;

/** A flag's name as the operator typed it. */
const flag = (field: PropertyKey) => `--${String(field).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The options, or "help"; throws with a message naming the option on anything wrong. */
export function usageOptionsFromArgv(args: string[], env: NodeJS.ProcessEnv, now: Date): UsageOptions | "help" {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: "string" },
      to: { type: "string" },
      by: { type: "string" },
      key: { type: "string" },
      model: { type: "string" },
      format: { type: "string" },
      bucket: { type: "string" },
      endpoint: { type: "string" },
      region: { type: "string" },
      prefix: { type: "string" },
      dir: { type: "string" },
      "retention-days": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return "help";
  // A flag naming the source replaces the environment's source of the other kind.
  const fromFlags = values.bucket !== undefined || values.dir !== undefined;
  const source = fromFlags ? { bucket: values.bucket, dir: values.dir } : { bucket: env[SETTINGS_ENV.ledgerBucket] || undefined, dir: env[SETTINGS_ENV.ledgerDir] || undefined };
  const parsed = UsageOptionsSchema.safeParse({
    from: values.from ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    to: values.to ?? now.toISOString(),
    by: values.by ?? "key,model",
    key: values.key,
    model: values.model,
    format: values.format ?? "table",
    ...source,
    endpoint: values.endpoint ?? (env[SETTINGS_ENV.ledgerEndpoint] || undefined),
    region: values.region ?? (env[SETTINGS_ENV.ledgerRegion] || undefined),
    prefix: values.prefix ?? (env[SETTINGS_ENV.ledgerPrefix] || undefined),
    retentionDays: values["retention-days"],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${flag(issue.path[0] ?? "")}: ${issue.message}`);
  }
  return parsed.data;
}
