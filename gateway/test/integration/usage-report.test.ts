import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { REPO_ROOT } from "../../../infra/platform/charts";
import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { formatUsage, queryUsage, type UsageRow } from "../../../scripts/lib/usage-query";
import { durationSeconds } from "../../../infra/platform/durations";
import { usageOptionsFromArgv } from "../../../scripts/usage-report";
import { METRICS_STORAGE } from "../../../infra/monitoring/metrics-values";
import { chatBody, startHarness, waitFor, type Harness } from "../support/harness";
import { describeWithPrometheus, startPrometheus, type RunningPrometheus } from "../support/prometheus-server";

/** An instant query's first value, or undefined when the vector is empty. */
async function promValue(prom: RunningPrometheus, query: string): Promise<number | undefined> {
  const res = await request(`${prom.url}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await res.body.json()) as { data: { result: { value: [number, string] }[] } };
  const first = body.data.result[0];
  return first === undefined ? undefined : Number(first.value[1]);
}

/** Usage rows computed from the gateway's own /metrics text: what the report must find in the metrics server. */
function expectedFrom(metricsText: string): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  const row = (key: string, model: string) => {
    const id = `${key}/${model}`;
    if (!rows.has(id)) rows.set(id, { key, model, requests: 0, failed: 0, promptTokens: 0, completionTokens: 0 });
    return rows.get(id)!;
  };
  for (const m of metricsText.matchAll(/^gateway_tokens_total\{model="([^"]*)",key="([^"]+)",type="(\w+)"\} (\d+)$/gm)) {
    const r = row(m[2]!, m[1]!);
    if (m[3] === "prompt") r.promptTokens += Number(m[4]);
    else r.completionTokens += Number(m[4]);
  }
  for (const m of metricsText.matchAll(/^gateway_requests_total\{model="([^"]*)",endpoint="[^"]*",status="(\d+)",key="([^"]+)"\} (\d+)$/gm)) {
    const r = row(m[3]!, m[1]!);
    if (m[2]!.startsWith("2")) r.requests += Number(m[4]);
    else r.failed += Number(m[4]);
  }
  return [...rows.values()].filter((r) => r.requests + r.failed + r.promptTokens + r.completionTokens > 0).sort((a, b) => a.key.localeCompare(b.key) || a.model.localeCompare(b.model));
}

describeWithPrometheus("npm run usage: requests and tokens per key and model from a real metrics server", () => {
  let h: Harness;
  let prom: RunningPrometheus;
  const teamKey = generateApiKey();
  beforeAll(async () => {
    h = await startHarness([{ id: "chat" }, { id: "embed", category: "embedder" }], { extraKeys: [{ name: "team-b", sha256: hashApiKey(teamKey) }] });
    prom = await startPrometheus([new URL(h.gateway.metricsUrl).host]);
    await waitFor(async () => (await promValue(prom, "up")) === 1, 20_000, "the first scrape");
    // The traffic starts after the first scrape: what the gateway counted before its series existed in the
    // metrics server is what a report loses unless the series start at zero.
    const team = h.client({ apiKey: teamKey });
    for (let i = 0; i < 3; i++) await h.fetch("/v1/chat/completions", { json: chatBody("chat", { max_tokens: 7 }) });
    for (let i = 0; i < 2; i++) {
      const stream = await team.chat.completions.create({ model: "chat", messages: [{ role: "user", content: "count to five" }], max_tokens: 5, stream: true });
      for await (const _ of stream);
    }
    await team.embeddings.create({ model: "embed", input: ["one", "two"] });
    await h.fetch("/v1/chat/completions", { json: chatBody("chat", { max_tokens: "many" }) }); // 400: failed, no tokens
  }, 60_000);
  afterAll(async () => {
    await prom?.stop();
    await h?.close();
  });

  it("finds in the metrics server exactly what the gateway counted, per key and model", async () => {
    const expected = expectedFrom(await (await fetch(h.gateway.metricsUrl)).text());
    const total = expected.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
    await waitFor(async () => (await promValue(prom, "sum(gateway_tokens_total)")) === total, 20_000, "the metrics server to scrape the final counts");
    // A few more scrapes, then the report as of the last one (increase() is exact at a sample, extrapolates between).
    await new Promise((r) => setTimeout(r, 2500));
    const lastScrape = await promValue(prom, "max(timestamp(gateway_tokens_total))");
    const rows = await queryUsage({ prometheus: prom.url, range: "10m", at: new Date(lastScrape! * 1000) });

    // The invalid request is refused before its model is known: the key's, under no model.
    expect(expected.map((r) => `${r.key}/${r.model}`)).toEqual(["team-b/chat", "team-b/embed", "test-key/", "test-key/chat"]);
    expect(expected.find((r) => r.key === "test-key" && r.model === "chat")).toMatchObject({ requests: 3, failed: 0, completionTokens: 21 });
    expect(expected.find((r) => r.key === "test-key" && r.model === "")).toMatchObject({ requests: 0, failed: 1, promptTokens: 0 });
    expect(expected.find((r) => r.model === "embed")).toMatchObject({ requests: 1, completionTokens: 0 });
    // Usage is exact: its series start at zero. Failures are not seeded (a status is known only when it happens),
    // so a failure series born between two scrapes loses what it counted before the first.
    const usage = (r: UsageRow) => ({ ...r, failed: 0 });
    expect(rows.filter((r) => r.requests > 0).map(usage)).toEqual(expected.filter((r) => r.requests > 0).map(usage));
    for (const r of rows) expect(r.failed).toBeLessThanOrEqual(expected.find((e) => e.key === r.key && e.model === r.model)!.failed);
  });

  it("filters by key name and prints a table with totals, CSV and JSON", async () => {
    const lastScrape = await promValue(prom, "max(timestamp(gateway_tokens_total))");
    const rows = await queryUsage({ prometheus: prom.url, range: "10m", at: new Date(lastScrape! * 1000), key: "team-b" });
    expect(rows.map((r) => r.model)).toEqual(["chat", "embed"]);
    const table = formatUsage(rows, "table").split("\n");
    expect(table[0]).toMatch(/^key\s+model\s+requests\s+failed\s+prompt tokens\s+completion tokens\s+total tokens$/);
    const totals = rows.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
    expect(table.at(-2)).toMatch(new RegExp(`^total\\s+3\\s+0\\s+\\d+\\s+10\\s+${totals}$`));
    expect(formatUsage(rows, "csv").split("\n")[1]).toBe(`team-b,chat,2,0,${rows[0]!.promptTokens},10,${rows[0]!.promptTokens + 10}`);
    expect(JSON.parse(formatUsage(rows, "json"))).toEqual(rows);
  });

  it("refuses a bad period, time or format naming the option", () => {
    expect(() => usageOptionsFromArgv(["--range", "a month"], {})).toThrow(/--range: a Prometheus duration/);
    expect(() => usageOptionsFromArgv(["--at", "yesterday"], {})).toThrow(/--at:/);
    expect(() => usageOptionsFromArgv(["--format", "xml"], {})).toThrow(/--format:/);
    expect(() => usageOptionsFromArgv(["--prometheus", "not a url"], {})).toThrow(/--prometheus:/);
    const now = new Date(1764000000 * 1000 + 3600_000);
    expect(usageOptionsFromArgv(["--at", "1764000000"], { PROMETHEUS_URL: "http://metrics:9090" }, now)).toMatchObject({ prometheus: "http://metrics:9090", range: "7d", at: new Date(1764000000 * 1000), format: "table" });
  });
});

describe("npm run usage: a period the metrics server no longer holds is refused", () => {
  const now = new Date("2026-11-01T00:00:00Z");
  const retentionDays = durationSeconds(METRICS_STORAGE.retention) / 86_400;

  test("the retention is the metrics server's as the stack deploys it: 15 days", () => {
    expect(METRICS_STORAGE.retention).toBe("15d");
    expect(retentionDays).toBe(15);
  });

  test.each([
    ["a month ending now", ["--range", "30d"], "30 days"],
    ["31 days ending at the month's end", ["--range", "31d", "--at", "2026-11-01T00:00:00Z"], "31 days"],
    ["a day past the retention", ["--range", "16d"], "16 days"],
    ["a short period that ended long ago", ["--range", "1d", "--at", "2026-10-10T00:00:00Z"], "23 days"],
    ["ten days and 200 hours", ["--range", "10d200h"], "18.3 days"],
  ])("%s: refused, naming the retention and what to ask for instead", (_, args, reach) => {
    expect(() => usageOptionsFromArgv(args, {}, now)).toThrow(`the period starts ${reach} ago, but the metrics server keeps 15 days (its retention), so the report would undercount.`);
    expect(() => usageOptionsFromArgv(args, {}, now)).toThrow(/Ask for a period that started at most 15 days ago \(--range 15d at most, ending now\); for a longer one, such as a month, add up reports of shorter periods, each run within 15 days of its period's start\.$/);
  });

  test.each([
    ["the default, a week", [], "7d"],
    ["exactly the retention", ["--range", "15d"], "15d"],
    ["a week that ended a week ago", ["--range", "7d", "--at", "2026-10-25T00:00:00Z"], "7d"],
    ["two weeks in hours", ["--range", "336h"], "336h"],
  ])("%s: accepted", (_, args, range) => {
    expect(usageOptionsFromArgv(args, {}, now)).toMatchObject({ range });
  });

  /** The command as an operator runs it: exit code, stdout, stderr. */
  const runUsage = async (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/usage-report.ts", ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, "exit")) as [number];
    return { code, stdout, stderr };
  };

  test("--help prints every option and exits 0; an unknown option fails, naming it, with the options", async () => {
    const help = await runUsage(["--help"]);
    expect(help.code).toBe(0);
    for (const option of ["--prometheus", "--range", "--at", "--key", "--format", "--help"]) expect(help.stdout).toContain(option);
    const wrong = await runUsage(["--ranges", "7d"]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/Unknown option '--ranges'[\s\S]*--range D/);
  }, 30_000);

  test("the command refuses before it asks the metrics server anything: a failing exit, the message, no request", async () => {
    let asked = 0;
    const server = createServer((_req, res) => {
      asked += 1;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const child = spawn(process.execPath, ["--import", "tsx", "scripts/usage-report.ts", "--prometheus", url, "--range", "30d"], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, "exit")) as [number];
      expect(stderr).toMatch(/--range 30d: the period starts 30 days ago, but the metrics server keeps 15 days/);
      expect(code).not.toBe(0);
      expect(asked).toBe(0);
    } finally {
      server.close();
    }
  }, 30_000);

});
