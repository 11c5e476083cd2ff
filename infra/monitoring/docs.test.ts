// docs/monitoring.md against the code it describes: every dashboard, panel and query, every collector stream label,
// dropped path and drop reason, every scrape job, the spec → Loki path mapping and the secret keys. A dashboard or
// label added, renamed or changed in the code fails here until the page says so.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { applyConfigCommands, readStackDocument, writeStackDocument } from "../platform/config-commands";
import { REPO_ROOT } from "../platform/charts";
import { namespaceKeys } from "../platform/config-testing";
import { codeSpans, readDoc } from "../platform/docs-testing";
import { parseStackYaml } from "../platform/stack-config";
import { buildCollectorConfig, PROBE_PATHS, streamLabels } from "./collector-config";
import { ALERT_RULES, alertingRulesFile } from "./alert-rules";
import { parseMonitoringConfig, QUALIFIED_SECRET_KEYS } from "./config";
import { LOGSTORE_API_PATHS, PINNED_CHARTS, SERVICES } from "./constants";
import { logDashboards, metricsDashboards } from "./dashboards/definitions";
import { DISABLED_SCRAPE_JOBS, SPEC_SCRAPE_JOBS } from "./metrics-values";
import { API_OBJECTIVES, BURN_WINDOWS, ratioSeries } from "./slo-rules";
import { parse as parseYaml } from "yaml";
import { generatedMonitoringPage } from "../../scripts/docs-monitoring";

const page = readDoc("monitoring.md");
const spans = codeSpans(page);
const lines = page.split("\n");
const dashboards = [...logDashboards(), ...metricsDashboards()];

describe("docs/monitoring.md", () => {
  test("the dashboards' and the alerts' references are what npm run docs:monitoring generates from their definitions", () => {
    expect(page).toBe(generatedMonitoringPage(page));
  });

  test("has a section for every dashboard, under its title, naming its uid", () => {
    const headings = lines.filter((l) => l.startsWith("### ")).map((l) => l.slice(4));
    for (const d of dashboards) {
      expect(headings).toContain(d.title);
      expect(spans).toContain(d.uid);
    }
  });

  test("lists every stream label the collector sets, in the stream label table", () => {
    const rows = lines.filter((l) => l.startsWith("| `"));
    for (const l of streamLabels("ai-platform.io")) {
      expect({ label: l.target, row: rows.some((r) => r.startsWith(`| \`${l.target}\` |`)) }).toEqual({ label: l.target, row: true });
    }
  });

  test("names every dropped probe path and every drop reason of the generated collector configuration", () => {
    for (const p of PROBE_PATHS) expect(spans).toContain(p);
    const reasons = [...buildCollectorConfig("ai-platform.io", "cluster.local").matchAll(/drop_counter_reason\s*=\s*"([^"]+)"/g)].map((m) => m[1] as string);
    expect(reasons.length).toBeGreaterThan(0);
    for (const r of reasons) expect(page).toContain(`"${r}"`);
    expect(page).toContain("<label_domain>/platform=ai-platform");
  });

  test("names every scrape job, enabled and disabled", () => {
    for (const job of [...SPEC_SCRAPE_JOBS, ...DISABLED_SCRAPE_JOBS]) expect(spans).toContain(job);
  });

  test("maps every spec log store path to the Loki path on one table row", () => {
    const rows = lines.filter((l) => l.startsWith("| `"));
    for (const [spec, loki] of Object.entries(LOGSTORE_API_PATHS)) {
      const row = rows.find((r) => r.split("|")[1]?.includes(` ${spec}`));
      expect({ spec, row: row?.split("|")[2]?.includes(` ${loki}`) }).toEqual({ spec, row: true });
    }
  });

  test("names the chart versions, archives and services, and shows how to set each secret", () => {
    for (const [component, c] of Object.entries(PINNED_CHARTS)) {
      expect(page).toContain(`\`${c.chart}\` ${c.version}`);
      expect(spans).toContain(`${component}-${c.version}.tgz`);
    }
    for (const s of Object.values(SERVICES)) expect(spans).toContain(`${s.name}:${s.port}`);
    for (const key of QUALIFIED_SECRET_KEYS) expect(page).toContain(`pulumi config set --secret ${key} `);
  });

  test("the object store commands, run on the production example, give configurations the preview accepts", () => {
    const start = page.indexOf("\n### The object store on a cloud\n");
    const section = page.slice(start, page.indexOf("\n## ", start));
    // The example's secrets as its comments set them; `a && b` as two commands.
    const prod = fs.readFileSync(path.join(REPO_ROOT, "stacks", "examples", "Pulumi.prod.yaml"), "utf8");
    const secrets = prod.split("\n").filter((l) => /^#\s+pulumi config set --secret/.test(l)).map((l) => l.replace(/^#\s+/, ""));
    const blocks = [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => (m[1] as string).replace(/ && /g, "\n"));
    expect(blocks).toHaveLength(2);
    const stores = blocks.map((block) => {
      const doc = applyConfigCommands([...secrets, block].join("\n"), readStackDocument(prod), { project: "ai-platform", env: { S3_PASSWORD: "x", AM_PASSWORD: "x", HF_TOKEN: "x", REGISTRY_USER: "x", REGISTRY_PASSWORD: "x" } });
      const { config } = parseStackYaml(writeStackDocument(doc), "ai-platform");
      return parseMonitoringConfig(namespaceKeys(config, "monitoring"), config["platform:labelDomain"]).logstore?.store;
    });
    expect(stores[0]).toMatchObject({ type: "s3", endpoint: "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1", auth: { kind: "workloadIdentity" } });
    expect(stores[1]).toMatchObject({
      type: "gcs",
      location: "europe-west1",
      serviceAccountAnnotations: {
        logstore: { "iam.gke.io/gcp-service-account": "logstore@my-project.iam.gserviceaccount.com" },
        bucketJob: { "iam.gke.io/gcp-service-account": "logstore-bucket@my-project.iam.gserviceaccount.com" },
      },
    });
  });

  test("the alerts' reference sits under ## Alerts and names every alert", () => {
    const start = lines.indexOf("## Alerts");
    const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
    const section = lines.slice(start, end < 0 ? undefined : end).join("\n");
    expect(start).toBeGreaterThan(0);
    for (const r of ALERT_RULES) expect(section).toContain(`- **${r.alert}** (${r.severity}, for ${r.for}): `);
  });


  test("the Alerts section states the API's objectives and the recorded ratios as the rules define them", () => {
    const start = lines.indexOf("## Alerts");
    const section = lines.slice(start, lines.findIndex((l, i) => i > start && /^### /.test(l))).join(" ");
    const percent = (share: number) => `${Number((share * 100).toFixed(3))}%`;
    expect(section).toContain(`${percent(API_OBJECTIVES.availability.target)} of answers`);
    expect(section).toContain(`${percent(API_OBJECTIVES.latency.target)} of streamed requests get their first token within ${API_OBJECTIVES.latency.thresholdSeconds} s`);
    for (const o of ["availability", "latency"] as const) expect(section).toContain(`\`${ratioSeries(o, "5m").replace(/5m$/, "<window>")}\``);
    expect(section.replace(/\s+/g, " ")).toContain(`for ${BURN_WINDOWS.slice(0, -1).join(", ")} and ${BURN_WINDOWS.at(-1)}`);
  });

  test("the Alertmanager example re-sends the still-firing Watchdog to the heartbeat and never a resolved one", () => {
    const start = lines.indexOf("### Receiving the alerts");
    const section = lines.slice(start, lines.findIndex((l, i) => i > start && /^##/.test(l))).join("\n");
    const config = parseYaml(/```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? "") as {
      route: { routes: { matchers: string[]; receiver: string; repeat_interval?: string }[] };
      receivers: { name: string; webhook_configs?: { send_resolved?: boolean }[] }[];
    };
    const route = config.route.routes[0];
    expect(route?.matchers).toContain('alertname="Watchdog"');
    expect(route?.repeat_interval).toMatch(/^\d+m$/);
    const heartbeat = config.receivers.find((r) => r.name === route?.receiver);
    expect(heartbeat?.webhook_configs?.[0]?.send_resolved).toBe(false);
  });

  // amtool comes from Debian's `prometheus-alertmanager` package (.ci/apt-packages): skipped without it, in CI required.
  const withAmtool = spawnSync("amtool", ["--version"]).status === 0 || process.env.CI ? test : test.skip;
  withAmtool("the Alertmanager example of Receiving the alerts is valid for amtool, sends the Watchdog to the heartbeat and every other platform alert by its severity", () => {
    const start = lines.indexOf("### Receiving the alerts");
    const end = lines.findIndex((l, i) => i > start && /^##/.test(l));
    const section = lines.slice(start, end).join("\n");
    const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "amtool-"));
    try {
      const file = path.join(dir, "alertmanager.yml");
      fs.writeFileSync(file, example as string);
      const check = spawnSync("amtool", ["check-config", file], { encoding: "utf8" });
      expect({ status: check.status, out: check.stdout + check.stderr }).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
      const receiver = (labels: Record<string, string>) =>
        spawnSync("amtool", ["config", "routes", "test", `--config.file=${file}`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)], { encoding: "utf8" }).stdout.trim();
      // The labels each alert carries, from the rule file the server loads.
      const rules = alertingRulesFile().groups.flatMap((g) => g.rules).filter((r) => "alert" in r) as { alert: string; labels: Record<string, string> }[];
      expect(rules.length).toBe(ALERT_RULES.length);
      for (const r of rules) {
        // The Watchdog goes to the heartbeat service, whose silence pages; the others by severity.
        const expected = r.alert === "Watchdog" ? "ai-platform-heartbeat" : r.labels.severity === "critical" ? "ai-platform-oncall" : "ai-platform-chat";
        expect([r.alert, receiver({ alertname: r.alert, ...r.labels })]).toEqual([r.alert, expected]);
      }
      expect(receiver({ alertname: "SomeoneElses", severity: "critical" })).toBe("default");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
