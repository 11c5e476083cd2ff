// What the real-API-server suite applies: the stack variants, and each stack's objects as the engine would send them
// (the charts rendered by a real helm, then the transforms the program registered on each chart).
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { describeWithCharts, type Manifest } from "../infra/platform/helm";
import { PINNED_CHARTS as SERVING_CHARTS } from "../infra/serving/constants";
import { MONITORING_CHARTS } from "./monitoring-charts";
import { archiveOf, renderStackObjects, type StackObjects, typeToken } from "./stack-objects";
import { stackVariants } from "./stack-variants";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("stack variants", () => {
  test("the dev stack file, every model, routes with Istio and on GKE, no metrics server, Cloud Storage, an Ingress; then each example stack file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "examples-"));
    try {
      fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), "config:\n  cluster:context: prod\n  monitoring:s3Password:\n    secure: v1:abc\n");
      fs.writeFileSync(path.join(dir, "README.md"), "not a stack file\n");
      const variants = stackVariants(dir);
      expect(variants.map((v) => v.name)).toEqual([
        "dev stack (Pulumi.dev.yaml)",
        "every model folder",
        "HTTPRoutes with Istio",
        "HTTPRoutes on GKE",
        "no metrics server",
        "log store on Cloud Storage with Workload Identity",
        "exposed through ingress-nginx, certificate from an Issuer",
        "autoscaled models, KEDA installed",
        expect.stringMatching(/Pulumi\.prod\.yaml$/),
      ]);
      const prod = variants[8]!;
      // A stack file's secrets are placeholders, marked secret.
      expect(prod.config["cluster:context"]).toBe("prod");
      expect(prod.secretKeys).toContain("monitoring:s3Password");
      const all = variants[1]!;
      expect(JSON.parse(all.config["serving:models"] ?? "[]")).toEqual(["embedder/bge-small-en", "generative/llama-3.3-70b", "generative/qwen3-8b", "generative/sim-chat"]);
      expect(JSON.parse(variants[4]!.config["monitoring:components"] ?? "[]")).not.toContain("metrics");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("type tokens as the engine names a chart's objects; archives found by file name", () => {
    expect(typeToken({ apiVersion: "v1", kind: "Service" })).toBe("kubernetes:core/v1:Service");
    expect(typeToken({ apiVersion: "networking.gke.io/v1", kind: "HealthCheckPolicy" })).toBe("kubernetes:networking.gke.io/v1:HealthCheckPolicy");
    expect(archiveOf("/nowhere/absent-0.0.0.tgz")).toBeUndefined();
  });
});

const CHARTS = [...MONITORING_CHARTS, ...Object.entries(SERVING_CHARTS).map(([component, c]) => ({ component, version: c.version }))];

describeWithCharts("a stack's objects, charts rendered by a real helm and passed through the program's transforms", CHARTS, ({ helm }) => {
  let gke: StackObjects;
  const released = (release: string, kind: string): Obj[] => (gke.releases.find((r) => r.release === release)?.objects ?? []).filter((o: Manifest) => o.kind === kind);
  beforeAll(async () => {
    const variant = stackVariants().find((v) => v.name === "HTTPRoutes on GKE")!;
    gke = await renderStackObjects(helm, variant.config, variant.secretKeys);
  }, 120_000);

  test("every release the program declares is rendered, in its namespace", () => {
    expect(gke.releases.map((r) => `${r.namespace}/${r.release}`).sort()).toEqual(
      expect.arrayContaining(["app-serving/gaie-qwen3-8b", "app-serving/ms-qwen3-8b", "monitoring/logstore", "monitoring/metrics"]),
    );
    expect(gke.crdSources).toEqual([expect.stringMatching(/gateway-api-inference-extension\/releases\/download\/v1\.3\.0\/manifests\.yaml$/)]);
    expect(gke.direct.some((o) => o.kind === "HTTPRoute")).toBe(true);
  });

  test("the transforms reach the chart's objects: GKE health checks, rollout strategies, the picker's pod labels", () => {
    for (const slug of ["qwen3-8b", "sim-chat"]) {
      expect(released(`gaie-${slug}`, "HealthCheckPolicy")[0]?.spec.default.config.httpHealthCheck).toMatchObject({ port: 8000, portSpecification: "USE_FIXED_PORT" });
    }
    // One GPU on a pool without a spare: recreated (infra/serving/rollout.ts), which the chart cannot say.
    expect(released("ms-qwen3-8b", "Deployment")[0]?.spec.strategy).toEqual({ type: "Recreate" });
    const epp = released("gaie-qwen3-8b", "Deployment").find((d) => d.metadata.name === "gaie-qwen3-8b-epp");
    expect(epp?.spec.template.metadata.labels).toMatchObject({ "ai-platform.io/platform": "ai-platform" });
  });
});
