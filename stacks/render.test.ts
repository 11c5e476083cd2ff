// The offline render: `npm run render -- --stack dev --out <dir>`.
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { validateKubernetesObject } from "../infra/platform/k8s-validate";
import { render, type RenderedResource } from "../infra/platform/render";
import { PROGRAM_SECRET_KEYS } from "./render";

const ROOT = path.resolve(__dirname, "..");
const S3 = "render-s3-Pw9x";
const VIEWER = "render-viewer-Pw7q";

function readTree(dir: string): string {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), "utf8"))
    .join("\n");
}

describe("render (in process)", () => {
  let out: string;
  let result: Awaited<ReturnType<typeof render>>;
  beforeAll(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), "render-"));
    result = await render({
      stack: "dev",
      out,
      projectRoot: ROOT,
      project: "ai-platform",
      knownSecretKeys: PROGRAM_SECRET_KEYS,
      env: {
        PULUMI_CONFIG: JSON.stringify({ "monitoring:s3Password": S3, "monitoring:viewerAdminPassword": VIEWER }),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(["monitoring:s3Password", "monitoring:viewerAdminPassword"]),
      },
      program: async () => (await import("./program")).program(),
    });
  });
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  test("resources.json lists every resource as {type, name, inputs}, charts with their full values", () => {
    const resources = JSON.parse(fs.readFileSync(path.join(out, "resources.json"), "utf8")) as { type: string; name: string; inputs: Record<string, unknown> }[];
    expect(resources).toHaveLength(result.resources.length);
    for (const r of resources) expect(Object.keys(r).sort()).toEqual(["inputs", "name", "options", "type"]);
    const loki = resources.find((r) => r.type === "kubernetes:helm.sh/v4:Chart" && r.name === "logstore");
    expect(loki?.inputs.values).toMatchObject({ deploymentMode: "Monolithic", loki: { limits_config: { retention_period: "336h" } } });
    // The dev stack: the four monitoring charts and the simulated model's pool and model-server releases.
    expect(resources.filter((r) => r.type === "kubernetes:helm.sh/v4:Chart").map((r) => r.name).sort()).toEqual(
      ["collector", "gaie-sim-chat", "logstore", "metrics", "ms-sim-chat", "viewer"],
    );
  });

  test("manifests/: one YAML per Kubernetes object, each schema-valid", () => {
    const files = fs.readdirSync(path.join(out, "manifests"));
    expect(files.sort()).toEqual([...result.manifests].sort());
    expect(files).toEqual(expect.arrayContaining(["job-monitoring-logstore-create-bucket.yaml", "namespace-monitoring.yaml", "networkpolicy-monitoring-logstore.yaml"]));
    for (const f of files) {
      const obj = parse(fs.readFileSync(path.join(out, "manifests", f), "utf8")) as Record<string, unknown>;
      expect(() => validateKubernetesObject(obj)).not.toThrow();
    }
  });

  test("every resource records its provider and lifecycle options; Kubernetes ones all name the stack's provider", () => {
    const resources = JSON.parse(fs.readFileSync(path.join(out, "resources.json"), "utf8")) as RenderedResource[];
    const k8sResources = resources.filter((r) => r.type.startsWith("kubernetes:"));
    for (const r of k8sResources) expect([r.type, r.name, r.options.provider]).toEqual([r.type, r.name, "cluster"]);
    const provider = resources.find((r) => r.type === "pulumi:providers:kubernetes");
    expect(provider?.inputs).toMatchObject({ context: "kind-ai-platform", upsertExistingObjects: "true", enableServerSideApply: "true" });
    // The InferencePool CRDs exist as resources and the pool release waits for them.
    const crds = resources.find((r) => r.type === "kubernetes:yaml/v2:ConfigFile" && r.name === "inferencePool-crds");
    expect(crds?.options).toMatchObject({ provider: "cluster", retainOnDelete: true, transforms: 1 });
    expect(resources.find((r) => r.name === "gaie-sim-chat")?.options.dependsOn).toContain("inferencePool-crds");
    // Lifecycle options are there to audit: the bucket Job's replacement, the model server's wait.
    expect(resources.find((r) => r.name === "logstore-create-bucket")?.options).toMatchObject({ deleteBeforeReplace: true, provider: "cluster" });
    expect(resources.find((r) => r.name === "logstore-create-bucket")?.options.retainOnDelete).toBeUndefined();
    expect((resources.find((r) => r.name === "ms-sim-chat")?.inputs as { values: { decode: { annotations: unknown } } }).values.decode.annotations).toEqual({ "pulumi.com/timeoutSeconds": "1200" });
  });

  test("secrets appear as [secret], never in plaintext", () => {
    const all = readTree(out);
    expect(all).not.toContain(S3);
    expect(all).not.toContain(VIEWER);
    const secret = parse(fs.readFileSync(path.join(out, "manifests", "secret-monitoring-logstore-s3-credentials.yaml"), "utf8")) as { stringData: unknown };
    expect(secret.stringData).toEqual({ AWS_ACCESS_KEY_ID: "[secret]", AWS_SECRET_ACCESS_KEY: "[secret]" });
  });
});

describe("render (the npm script)", () => {
  test("npm run render -- --stack dev --out <dir>, with PULUMI_CONFIG overriding the stack file and no secrets set", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "render-cli-"));
    try {
      const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "stacks/render.ts", "--stack", "dev", "--out", out], {
          cwd: ROOT,
          // No models: no key may name one either.
          env: { ...process.env, PULUMI_CONFIG: JSON.stringify({ "monitoring:components": ["logstore"], "serving:models": [], "gateway:apiKeys": [{ name: "dev" }] }) },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
      expect(r).toMatchObject({ code: 0 });
      expect(r.stdout).toMatch(/rendered \d+ resources and \d+ manifests/);
      const resources = JSON.parse(fs.readFileSync(path.join(out, "resources.json"), "utf8")) as { type: string; name: string }[];
      expect(resources.filter((x) => x.type === "kubernetes:helm.sh/v4:Chart").map((x) => x.name)).toEqual(["logstore"]);
      // The missing secret rendered as a placeholder.
      expect(fs.readFileSync(path.join(out, "manifests", "secret-monitoring-logstore-s3-credentials.yaml"), "utf8")).toContain('"[secret]"');
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  test("an invalid configuration makes the render fail with the key named", async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "stacks/render.ts", "--out", path.join(os.tmpdir(), "render-bad")], {
        cwd: ROOT,
        env: { ...process.env, PULUMI_CONFIG: JSON.stringify({ "monitoring:components": ["logstore", "loki"] }) },
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("monitoring:components [1]");
  }, 60_000);
});
