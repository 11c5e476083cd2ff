import { z } from "zod";

/**
 * The usage ledger's format, version 1: what the gateway writes and `npm run usage` reads, documented in
 * docs/usage-ledger.md for tools that read it without this platform.
 *
 * Objects: `<prefix>v1/hour=<YYYY-MM-DDTHH>/replica=<replica>.jsonl`, one per gateway process and UTC hour. Each
 * holds that process's running totals for the hour, one JSON line per key and model, and is overwritten whole at
 * every flush: a write is idempotent, a reader sums every object of an hour, and nothing is counted twice. A
 * process's replica name is its pod name plus a random part drawn at start, so a restarted container never
 * overwrites what it wrote before.
 */
export const LEDGER_VERSION = "v1";

/** The lifecycle rule that expires the ledger's prefix: the stack's bucket Job writes it, `npm run usage` reads it. */
export const LEDGER_RULE_ID = "ai-platform-usage-ledger";
/** What the ledger keeps by default, in days: 13 months. */
export const DEFAULT_RETENTION_DAYS = 396;

const count = z.number().int().nonnegative();

export const LedgerLineSchema = z.strictObject({
  /** The hour's start, UTC, `YYYY-MM-DDTHH:00:00Z`. */
  hour: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/),
  /** The API key's name. */
  key: z.string().min(1),
  /** The catalog id (a LoRA adapter's own id for an adapter). */
  model: z.string().min(1),
  /** The process that counted (pod name and a part drawn at start). */
  replica: z.string().min(1),
  /** Requests a model server answered (any status). */
  requests: count,
  prompt_tokens: count,
  completion_tokens: count,
  /** Prompt tokens the model server reported as served from its prefix cache (0 when it reports none). */
  cached_tokens: count,
});
export type LedgerLine = z.infer<typeof LedgerLineSchema>;

/** The counted part of a line. */
export type LedgerCounts = Pick<LedgerLine, "requests" | "prompt_tokens" | "completion_tokens" | "cached_tokens">;
export const COUNT_FIELDS = ["requests", "prompt_tokens", "completion_tokens", "cached_tokens"] as const satisfies readonly (keyof LedgerCounts)[];

export function emptyCounts(): LedgerCounts {
  return { requests: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 };
}

export function addCounts(into: LedgerCounts, more: LedgerCounts): LedgerCounts {
  for (const f of COUNT_FIELDS) into[f] += more[f];
  return into;
}

const HOUR_MS = 3_600_000;

/** The start of the UTC hour holding `ms` (epoch milliseconds). */
export function hourStart(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** `2026-11-29T07:00:00Z` for the hour starting at `ms`. */
export function hourLabel(ms: number): string {
  return new Date(hourStart(ms)).toISOString().slice(0, 13) + ":00:00Z";
}

/** The object of one replica's hour. */
export function objectKey(prefix: string, hourMs: number, replica: string): string {
  return `${prefix}${LEDGER_VERSION}/hour=${new Date(hourStart(hourMs)).toISOString().slice(0, 13)}/replica=${replica}.jsonl`;
}

/** The listing prefix of every object whose hour label starts with `partial` (`2026`, `2026-11`, `2026-11-29T07`). */
export function hoursPrefix(prefix: string, partial = ""): string {
  return `${prefix}${LEDGER_VERSION}/hour=${partial}`;
}

/** The hour an object key names (epoch ms), or undefined for a key that is not a ledger object. */
export function hourOfObject(key: string): number | undefined {
  const m = /\/hour=(\d{4}-\d{2}-\d{2}T\d{2})\/replica=[^/]+\.jsonl$/.exec(key);
  return m ? Date.parse(`${m[1]}:00:00Z`) : undefined;
}

/** A replica name: letters, digits, `.`, `_` and `-` only, so it is safe in an object key. */
export function replicaName(podName: string, nonce: string): string {
  const clean = podName.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100) || "gateway";
  return `${clean}-${nonce}`;
}

export function serializeLines(lines: readonly LedgerLine[]): string {
  return lines.map((l) => JSON.stringify(l)).join("\n") + (lines.length ? "\n" : "");
}

/** Parses an object's text; a line that is not a ledger line is reported with its number, never skipped silently. */
export function parseLines(text: string, source: string): LedgerLine[] {
  const out: LedgerLine[] = [];
  const rows = text.split("\n");
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.trim();
    if (!row) continue;
    let json: unknown;
    try {
      json = JSON.parse(row);
    } catch {
      throw new Error(`${source}:${i + 1}: not JSON`);
    }
    const parsed = LedgerLineSchema.safeParse(json);
    if (!parsed.success) throw new Error(`${source}:${i + 1}: ${parsed.error.issues.map((x) => `${x.path.join(".")}: ${x.message}`).join("; ")}`);
    out.push(parsed.data);
  }
  return out;
}
