// `npm run docs:monitoring`: writes the dashboards' and the alerts' reference of docs/monitoring.md from their
// definitions (infra/monitoring/dashboards/reference.ts, alert-reference.ts); infra/monitoring/docs.test.ts fails when
// the page is stale.
import * as fs from "fs";
import * as path from "path";
import { ALERT_RULES } from "../infra/monitoring/alert-rules";
import { alertsReference } from "../infra/monitoring/alert-reference";
import { logDashboards, metricsDashboards } from "../infra/monitoring/dashboards/definitions";
import { dashboardsReference } from "../infra/monitoring/dashboards/reference";
import { replaceSection } from "./lib/doc-sections";

export const MONITORING_PAGE = path.resolve(__dirname, "..", "docs", "monitoring.md");
export const DASHBOARDS_SECTION = "dashboards";
export const ALERTS_SECTION = "alerts";

export function generatedMonitoringPage(text: string): string {
  const dashboards = replaceSection(text, DASHBOARDS_SECTION, dashboardsReference([...logDashboards(), ...metricsDashboards()]));
  return replaceSection(dashboards, ALERTS_SECTION, alertsReference(ALERT_RULES));
}

if (require.main === module) {
  fs.writeFileSync(MONITORING_PAGE, generatedMonitoringPage(fs.readFileSync(MONITORING_PAGE, "utf8")));
  console.log(`wrote ${path.relative(process.cwd(), MONITORING_PAGE)}`);
}
