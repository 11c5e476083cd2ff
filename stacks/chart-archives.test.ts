// A chart archive that was never pulled fails the preview with one line naming the file and `npm run charts:pull`,
// before any Chart reaches the provider (which would otherwise fail with an error of its own).
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { fullConfig as monitoringConfig, SECRET_KEYS as MONITORING_SECRETS } from "../infra/monitoring/testing";
import { chartArchivePath, missingChartArchives } from "../infra/platform/charts";
import { ConfigError } from "../infra/platform/config";
import { runWithMocks } from "../infra/platform/mocks";
import { servingConfig } from "../infra/serving/testing";

const CHART = "kubernetes:helm.sh/v4:Chart";

describe("missingChartArchives", () => {
  const pinned = { file: chartArchivePath("logstore", "14.1.0"), version: "14.1.0", versionKey: "monitoring:logstoreVersion", overrideKey: "monitoring:logstoreChartPath" };

  test("a pinned archive that is not there: the file, the key that pinned it, how to get it", () => {
    expect(missingChartArchives([pinned], () => false)).toEqual([
      "charts/logstore-14.1.0.tgz: chart archive not found (monitoring:logstoreVersion 14.1.0): run `npm run charts:pull` (an air-gapped machine copies it there from a mirror, or set monitoring:logstoreChartPath to a copy)",
    ]);
  });

  test("an override that points nowhere names the key that set it", () => {
    expect(missingChartArchives([{ ...pinned, file: "/mirror/loki.tgz", overriddenBy: "monitoring:logstoreChartPath" }], () => false)).toEqual([
      "monitoring:logstoreChartPath: chart archive /mirror/loki.tgz not found",
    ]);
  });

  test("relative paths are taken from the repository root, whatever the working directory", () => {
    const seen: string[] = [];
    missingChartArchives([{ ...pinned, file: "charts/x.tgz", overriddenBy: "k" }], (f) => (seen.push(f), true));
    expect(seen).toEqual([path.resolve(__dirname, "..", "charts", "x.tgz")]);
  });
});

describe("the program with requireChartArchives", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "charts-"));
  let dir = root;
  const archive = (name: string, present: boolean) => {
    const file = path.join(dir, name);
    if (present) fs.writeFileSync(file, "");
    return file;
  };
  // The metrics chart has no path key, so these stacks leave it out: the archives are files of this test's own.
  const config = (missing: string[]) => {
    dir = fs.mkdtempSync(path.join(root, "stack-"));
    return {
      ...monitoringConfig({ "monitoring:components": JSON.stringify(["logstore", "viewer", "collector", "dashboards"]) }),
      ...servingConfig(),
      "monitoring:logstoreChartPath": archive("logstore.tgz", !missing.includes("logstore")),
      "monitoring:viewerChartPath": archive("viewer.tgz", !missing.includes("viewer")),
      "monitoring:collectorChartPath": archive("collector.tgz", !missing.includes("collector")),
      "serving:modelServiceChartPath": archive("ms.tgz", !missing.includes("ms")),
      "serving:inferencePoolChartPath": archive("gaie.tgz", !missing.includes("gaie")),
    };
  };
  const run = (cfg: Record<string, string>, load: () => Promise<unknown>) => runWithMocks(load, { config: cfg, secretKeys: MONITORING_SECRETS });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test("every archive there: the charts are declared", async () => {
    const { resources } = await run(config([]), async () => (await import("./program")).program({ requireChartArchives: true }));
    expect(resources.filter((r) => r.type === CHART).length).toBeGreaterThan(3);
  });

  test("two missing: one preview error names both", async () => {
    const failure = await run(config(["viewer", "gaie"]), async () => (await import("./program")).program({ requireChartArchives: true })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual([
      `monitoring:viewerChartPath: chart archive ${path.join(dir, "viewer.tgz")} not found`,
      `serving:inferencePoolChartPath: chart archive ${path.join(dir, "gaie.tgz")} not found`,
    ]);
  });

  test("the entry point checks (the Pulumi CLI runs stacks/index.ts)", async () => {
    const failure = await run(config(["collector"]), async () => (await import("./index")).default()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((failure as ConfigError).problems).toEqual([`monitoring:collectorChartPath: chart archive ${path.join(dir, "collector.tgz")} not found`]);
  });
});
