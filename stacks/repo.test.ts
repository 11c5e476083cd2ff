// Repository checks: stack files hold no plaintext secret, chart pins agree everywhere, the pull script works.
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { parseMonitoringConfig, QUALIFIED_SECRET_KEYS } from "../infra/monitoring/config";
import { KEDA_CHART } from "../infra/autoscaling/constants";
import { PINNED_CHARTS } from "../infra/monitoring/constants";
import { parseStackYaml } from "../infra/platform/stack-config";

const ROOT = path.resolve(__dirname, "..");
const stackFiles = fs.readdirSync(ROOT).filter((f) => /^Pulumi\.[^.]+\.yaml$/.test(f));

describe("stack files", () => {
  test("there is a dev stack", () => {
    expect(stackFiles).toContain("Pulumi.dev.yaml");
  });

  test.each(stackFiles)("%s: no secret key in plaintext (absent, or an encrypted `secure:` value)", (file) => {
    const config = (parse(fs.readFileSync(path.join(ROOT, file), "utf8")) as { config?: Record<string, unknown> }).config ?? {};
    for (const key of QUALIFIED_SECRET_KEYS) {
      const v = config[key];
      if (v === undefined) continue;
      expect({ key, v }).toEqual({ key, v: { secure: expect.any(String) } });
    }
  });

  test("Pulumi.dev.yaml is a working dev stack once the two secrets are set", () => {
    const { config } = parseStackYaml(fs.readFileSync(path.join(ROOT, "Pulumi.dev.yaml"), "utf8"), "ai-platform");
    const raw = Object.fromEntries(Object.entries(config).filter(([k]) => k.startsWith("monitoring:")).map(([k, v]) => [k.slice(11), v]));
    const cfg = parseMonitoringConfig({ ...raw, s3Password: "x", viewerAdminPassword: "y" }, config["platform:labelDomain"]);
    expect([...cfg.components].sort()).toEqual(["collector", "dashboards", "logstore", "metrics", "viewer"]);
  });
});

/** PINS lines of charts/pull.sh: component → version. */
function pullScriptPins(): Record<string, string> {
  const text = fs.readFileSync(path.join(ROOT, "charts", "pull.sh"), "utf8");
  const block = text.slice(text.indexOf("PINS=("), text.indexOf(")", text.indexOf("PINS=(")));
  return Object.fromEntries([...block.matchAll(/"(\w+)\s+\S+\s+(\S+)"/g)].map((m) => [m[1], m[2]]));
}

describe("chart pins", () => {
  test("pull.sh, PINNED_CHARTS, the spec's Components table and Pulumi.dev.yaml agree", () => {
    const spec = { logstore: "14.1.0", viewer: "12.3.2", collector: "1.8.1", metrics: "29.21.0" };
    expect(pullScriptPins()).toEqual(spec);
    expect(Object.fromEntries(Object.entries(PINNED_CHARTS).map(([k, v]) => [k, v.version]))).toEqual(spec);
    const dev = (parse(fs.readFileSync(path.join(ROOT, "Pulumi.dev.yaml"), "utf8")) as { config: Record<string, string> }).config;
    expect([dev["monitoring:logstoreVersion"], dev["monitoring:viewerVersion"], dev["monitoring:collectorVersion"]]).toEqual([spec.logstore, spec.viewer, spec.collector]);
  });

  test("KEDA's pin in pull.sh is KEDA_CHART's", () => {
    const text = fs.readFileSync(path.join(ROOT, "charts", "pull.sh"), "utf8");
    const [repo, chart] = KEDA_CHART.source.split("#");
    expect(text).toMatch(new RegExp(`"${KEDA_CHART.component}\\s+${repo}#${chart}\\s+${KEDA_CHART.version.replace(/\./g, "\\.")}"`));
  });

  test(".gitignore keeps chart archives and render output out of git", () => {
    const lines = fs.readFileSync(path.join(ROOT, ".gitignore"), "utf8").split("\n");
    expect(lines).toEqual(expect.arrayContaining(["charts/*.tgz", "/render/"]));
  });
});

describe("charts/pull.sh (with a stand-in helm)", () => {
  let dir: string;
  let helm: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "charts-"));
    helm = path.join(dir, "helm");
    // Records its arguments and writes `<chart>-<version>.tgz` into --destination, like `helm pull`.
    fs.writeFileSync(
      helm,
      `#!/bin/sh
echo "$*" >> "${dir}/helm.log"
ref="$2"; version=""; dest=""
while [ $# -gt 0 ]; do case "$1" in --version) version="$2"; shift;; --destination) dest="$2"; shift;; esac; shift; done
echo archive > "$dest/$(basename "$ref")-$version.tgz"
`,
      { mode: 0o755 },
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function pull(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
    return new Promise((resolve) => {
      const child = spawn("bash", [path.join(ROOT, "charts", "pull.sh"), ...args], { env: { ...process.env, ...env } });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("close", (code) => resolve({ code, out }));
    });
  }

  test("pulls each pinned chart once into <component>-<version>.tgz, then skips; --force pulls again", async () => {
    const charts = path.join(dir, "out");
    fs.mkdirSync(charts);
    const first = await pull([], { HELM: helm, CHARTS_DIR: charts });
    expect(first.code).toBe(0);
    expect(fs.readdirSync(charts).sort()).toEqual([
      "collector-1.8.1.tgz",
      "inferencepool-v1.3.0.tgz",
      "keda-2.20.2.tgz",
      "llm-d-modelservice-v0.4.5.tgz",
      "logstore-14.1.0.tgz",
      "metrics-29.21.0.tgz",
      "viewer-12.3.2.tgz",
    ]);
    const calls = fs.readFileSync(path.join(dir, "helm.log"), "utf8").trim().split("\n");
    expect(calls).toEqual([
      expect.stringMatching(/^pull oci:\/\/ghcr\.io\/grafana-community\/helm-charts\/loki --version 14\.1\.0 /),
      expect.stringMatching(/^pull oci:\/\/ghcr\.io\/grafana-community\/helm-charts\/grafana --version 12\.3\.2 /),
      expect.stringMatching(/^pull alloy --repo https:\/\/grafana\.github\.io\/helm-charts --version 1\.8\.1 /),
      expect.stringMatching(/^pull prometheus --repo https:\/\/prometheus-community\.github\.io\/helm-charts --version 29\.21\.0 /),
      // Model serving (infra/serving PINNED_CHARTS).
      expect.stringMatching(/^pull llm-d-modelservice --repo https:\/\/llm-d-incubation\.github\.io\/llm-d-modelservice\/ --version v0\.4\.5 /),
      expect.stringMatching(/^pull oci:\/\/registry\.k8s\.io\/gateway-api-inference-extension\/charts\/inferencepool --version v1\.3\.0 /),
      // Model autoscaling (KEDA_CHART).
      expect.stringMatching(/^pull keda --repo https:\/\/kedacore\.github\.io\/charts --version 2\.20\.2 /),
    ]);
    const again = await pull([], { HELM: helm, CHARTS_DIR: charts });
    expect(again.out.match(/^have /gm)).toHaveLength(7);
    expect(fs.readFileSync(path.join(dir, "helm.log"), "utf8").trim().split("\n")).toHaveLength(7);
    await pull(["--force"], { HELM: helm, CHARTS_DIR: charts });
    expect(fs.readFileSync(path.join(dir, "helm.log"), "utf8").trim().split("\n")).toHaveLength(14);
  });

  test("without helm it fails with a clear message", async () => {
    const r = await pull([], { HELM: path.join(dir, "no-such-helm"), CHARTS_DIR: dir });
    expect(r.code).toBe(1);
    expect(r.out).toContain("the helm CLI is required");
  });
});

describe("docs/monitoring.md", () => {
  const page = fs.readFileSync(path.join(ROOT, "docs", "monitoring.md"), "utf8");
  test("shows how to set each secret with --secret", () => {
    for (const key of QUALIFIED_SECRET_KEYS) expect(page).toContain(`pulumi config set --secret ${key} `);
  });
  test("documents the spec → Loki path mapping and how to really remove a component", () => {
    expect(page).toContain("`POST /logstore/api/v1/push` | `POST /loki/api/v1/push`");
    expect(page).toMatch(/really removing a component/i);
  });
});
