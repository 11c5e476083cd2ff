// Usage per API key and model over a period, read from the metrics server's HTTP API: what `npm run usage` prints.
// The gateway counts tokens and requests per key *name* (gateway_tokens_total, gateway_requests_total); the metrics
// server keeps them per gateway pod, so the sum over pods and the increase over the period is the usage, restarts
// included (increase() handles counter resets).
import { request } from "undici";
import { z } from "zod";

/** A Prometheus duration as its API accepts it in a range selector: `90m`, `7d`, `1w`, `1d12h`. */
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

export const UsageQuerySchema = z.object({
  prometheus: z.url().describe("Base URL of the metrics server (e.g. after `kubectl -n monitoring port-forward svc/metrics-server 9090:80`)."),
  range: z.string().regex(DURATION, "a Prometheus duration such as 24h, 7d or 30d").describe("The period, ending at `at`."),
  at: z.date().describe("End of the period."),
  key: z.string().min(1).optional().describe("Only this key name."),
});
export type UsageQuery = z.infer<typeof UsageQuerySchema>;

export interface UsageRow {
  key: string;
  model: string;
  /** Requests answered with a 2xx. */
  requests: number;
  /** Requests answered with anything else (refusals, errors). */
  failed: number;
  promptTokens: number;
  completionTokens: number;
}

/** A label value inside double quotes in PromQL. */
const quoted = (v: string) => JSON.stringify(v);

/** The two instant queries of a report: tokens by type, requests by outcome; per key and model. */
export function usageQueries(q: Pick<UsageQuery, "range" | "key">): { tokens: string; requests: string } {
  // Requests without a key name (refused before authentication) are nobody's usage.
  const key = q.key === undefined ? `key!=""` : `key=${quoted(q.key)}`;
  return {
    tokens: `sum by (key, model, type) (increase(gateway_tokens_total{${key}}[${q.range}]))`,
    requests: `sum by (key, model, ok) (label_replace(increase(gateway_requests_total{${key}}[${q.range}]), "ok", "$1", "status", "(2).."))`,
  };
}

const VectorSchema = z.object({
  status: z.literal("success"),
  data: z.object({
    resultType: z.literal("vector"),
    result: z.array(z.object({ metric: z.record(z.string(), z.string()), value: z.tuple([z.number(), z.string()]) })),
  }),
});
type Sample = z.infer<typeof VectorSchema>["data"]["result"][number];

async function instant(base: string, query: string, at: Date): Promise<Sample[]> {
  const url = new URL("api/v1/query", base.endsWith("/") ? base : `${base}/`);
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ query, time: String(at.getTime() / 1000) }).toString(),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url.origin} answered ${res.statusCode} to ${query}: ${text.slice(0, 500)}`);
  return VectorSchema.parse(JSON.parse(text)).data.result;
}

/**
 * The report's rows, sorted by key then model. increase() extrapolates to the period's edges, so counts are
 * rounded to whole numbers: exact when the period covers the counters' whole life, close to it otherwise.
 */
export async function queryUsage(q: UsageQuery): Promise<UsageRow[]> {
  const queries = usageQueries(q);
  const [tokens, requests] = await Promise.all([instant(q.prometheus, queries.tokens, q.at), instant(q.prometheus, queries.requests, q.at)]);
  const rows = new Map<string, UsageRow>();
  const row = (m: Record<string, string>) => {
    const id = `${m.key}\u0000${m.model}`;
    let r = rows.get(id);
    if (!r) rows.set(id, (r = { key: m.key ?? "", model: m.model ?? "", requests: 0, failed: 0, promptTokens: 0, completionTokens: 0 }));
    return r;
  };
  const count = (s: Sample) => Math.round(Number(s.value[1]));
  for (const s of tokens) {
    const r = row(s.metric);
    if (s.metric.type === "prompt") r.promptTokens += count(s);
    else if (s.metric.type === "completion") r.completionTokens += count(s);
  }
  for (const s of requests) {
    const r = row(s.metric);
    if (s.metric.ok === "2") r.requests += count(s);
    else r.failed += count(s);
  }
  return [...rows.values()]
    .filter((r) => r.requests + r.failed + r.promptTokens + r.completionTokens > 0)
    .sort((a, b) => a.key.localeCompare(b.key) || a.model.localeCompare(b.model));
}

const COLUMNS = ["key", "model", "requests", "failed", "promptTokens", "completionTokens"] as const;
const HEADINGS = ["key", "model", "requests", "failed", "prompt tokens", "completion tokens", "total tokens"];

function cells(r: UsageRow): string[] {
  // No model: refused before the body named one (bad JSON, an unknown endpoint).
  return [r.key, r.model || "-", ...COLUMNS.slice(2).map((c) => String(r[c])), String(r.promptTokens + r.completionTokens)];
}

/** Rows as an aligned text table with a total line, CSV, or JSON. */
export function formatUsage(rows: UsageRow[], format: "table" | "csv" | "json"): string {
  if (format === "json") return `${JSON.stringify(rows, null, 2)}\n`;
  if (format === "csv") {
    const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    return [HEADINGS, ...rows.map(cells)].map((line) => line.map(csvCell).join(",")).join("\n") + "\n";
  }
  const sum = (c: (typeof COLUMNS)[number]) => rows.reduce((n, r) => n + (r[c] as number), 0);
  const total = { key: "total", model: "", requests: sum("requests"), failed: sum("failed"), promptTokens: sum("promptTokens"), completionTokens: sum("completionTokens") };
  const lines = [HEADINGS, ...rows.map(cells), ["total", "", ...cells(total).slice(2)]];
  const widths = HEADINGS.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  // Names left, figures right.
  const render = (l: string[]) => l.map((v, i) => (i < 2 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join("  ").trimEnd();
  return [render(lines[0]!), ...lines.slice(1, -1).map(render), widths.map((w) => "-".repeat(w)).join("  "), render(lines.at(-1)!)].join("\n") + "\n";
}
