// The report's rows: ledger lines summed over replicas and hours into the groups asked for, and their formats.
import { addCounts, COUNT_FIELDS, emptyCounts, type LedgerCounts, type LedgerLine } from "../../gateway/src/ledger/format";
import type { Group } from "./usage-options";

export type UsageRow = Partial<Record<Group, string>> & LedgerCounts & { total_tokens: number };

/** A line's value for a group: names as written, periods as UTC labels (2026-03, 2026-03-04, 2026-03-04T05:00:00Z). */
function groupValue(line: LedgerLine, group: Group): string {
  switch (group) {
    case "key":
      return line.key;
    case "model":
      return line.model;
    case "month":
      return line.hour.slice(0, 7);
    case "day":
      return line.hour.slice(0, 10);
    case "hour":
      return line.hour;
  }
}

/** Sums the lines that pass the filters per group, sorted by the groups in the order given. */
export function summarize(lines: readonly LedgerLine[], by: readonly Group[], filter: { key?: string; model?: string } = {}): UsageRow[] {
  const groups = new Map<string, { values: string[]; counts: LedgerCounts }>();
  for (const line of lines) {
    if ((filter.key !== undefined && line.key !== filter.key) || (filter.model !== undefined && line.model !== filter.model)) continue;
    const values = by.map((g) => groupValue(line, g));
    const id = values.join("\u0000");
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { values, counts: emptyCounts() }));
    addCounts(group.counts, line);
  }
  const compare = (a: string[], b: string[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return 0;
  };
  return [...groups.values()]
    .sort((a, b) => compare(a.values, b.values))
    .map(({ values, counts }) => ({
      ...Object.fromEntries(by.map((g, i) => [g, values[i]!])),
      ...counts,
      // Cached tokens are part of the prompt's.
      total_tokens: counts.prompt_tokens + counts.completion_tokens,
    }));
}

const FIGURES = [...COUNT_FIELDS, "total_tokens"] as const;

/** Rows as JSON, CSV, or an aligned table with a total line. */
export function formatUsage(rows: readonly UsageRow[], by: readonly Group[], format: "table" | "csv" | "json"): string {
  if (format === "json") return `${JSON.stringify(rows, null, 2)}\n`;
  const heading = [...by, ...FIGURES];
  const cells = (r: UsageRow) => [...by.map((g) => r[g] ?? ""), ...FIGURES.map((f) => String(r[f]))];
  if (format === "csv") {
    const csvCell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    return [heading, ...rows.map(cells)].map((l) => l.map(csvCell).join(",")).join("\n") + "\n";
  }
  const total = ["total", ...by.slice(1).map(() => ""), ...FIGURES.map((f) => String(rows.reduce((n, r) => n + r[f], 0)))];
  const lines = [heading, ...rows.map(cells), total];
  const widths = heading.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  // Names left, figures right.
  const render = (l: string[]) => l.map((v, i) => (i < by.length ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join("  ").trimEnd();
  return [...lines.slice(0, -1).map(render), widths.map((w) => "-".repeat(w)).join("  "), render(total)].join("\n") + "\n";
}
