// The helm harness itself: a real helm binary (installed, or unpacked from its npm package) renders a real chart.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { findChartArchive, helmBinary, helmTemplate } from "./helm";

describe("helm harness", () => {
  const helm = helmBinary();
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "helm-harness-"));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("a helm binary is found or unpacked from the npm registry", () => {
    expect(helm).toBeDefined();
    expect(spawnSync(helm as string, ["version", "--short"], { encoding: "utf8" }).stdout).toMatch(/^v[34]\./);
  });

  test("renders a chart archive with values, parsed into objects", () => {
    spawnSync(helm as string, ["create", path.join(dir, "demo")]);
    spawnSync(helm as string, ["package", path.join(dir, "demo"), "--destination", dir]);
    const archive = path.join(dir, "demo-0.1.0.tgz");
    const objects = helmTemplate(helm as string, archive, "web", "apps", { replicaCount: 3, serviceAccount: { create: false } });
    const deployment = objects.find((o) => o.kind === "Deployment");
    expect(deployment?.metadata.name).toBe("web-demo");
    expect((deployment as unknown as { spec: { replicas: number } }).spec.replicas).toBe(3);
    expect(objects.some((o) => o.kind === "ServiceAccount")).toBe(false);
    expect(() => helmTemplate(helm as string, path.join(dir, "absent-0.1.0.tgz"), "web", "apps", {})).toThrow(/helm template web failed/);
  });

  test("archives are found in AI_PLATFORM_CHARTS_DIR as an air-gapped operator mirrors them", () => {
    fs.writeFileSync(path.join(dir, "logstore-0.0.1.tgz"), "");
    const before = process.env.AI_PLATFORM_CHARTS_DIR;
    process.env.AI_PLATFORM_CHARTS_DIR = dir;
    try {
      expect(findChartArchive("logstore", "0.0.1")).toBe(path.join(dir, "logstore-0.0.1.tgz"));
      expect(findChartArchive("logstore", "9.9.9")).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.AI_PLATFORM_CHARTS_DIR;
      else process.env.AI_PLATFORM_CHARTS_DIR = before;
    }
  });
});
