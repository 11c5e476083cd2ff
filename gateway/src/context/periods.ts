const HOUR_MS = 3_600_000;

/** A budget's period: a UTC calendar day or month (limits/key-budgets.ts, the budget gauges, the ledger's reports). */
export type BudgetPeriod = "day" | "month";

/** The period holding `ms`: its start, its end (the next period's start) and a label. */
export function periodOf(period: BudgetPeriod, ms: number): { start: number; end: number; label: string } {
  const d = new Date(ms);
  if (period === "day") {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { start, end: start + 24 * HOUR_MS, label: new Date(start).toISOString().slice(0, 10) };
  }
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1), label: new Date(start).toISOString().slice(0, 7) };
}
