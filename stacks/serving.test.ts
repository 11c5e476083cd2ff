// The serving program end to end on Pulumi's mocks: what it declares for a given configuration.
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { CatalogSchema } from "../gateway/src/config/catalog";
import { validateAnyObject } from "../infra/platform/crd-validate";
import { isKubernetesObject, toManifest } from "../infra/platform/k8s-validate";
import { type ResourceRecord, runWithMocks } from "../infra/platform/mocks";
import { render } from "../infra/platform/render";
import { fullConfig as monitoringConfig, SECRET_KEYS as MONITORING_SECRETS, TEST_S3_PASSWORD, TEST_VIEWER_PASSWORD } from "../infra/monitoring/testing";
import { editYaml, folderFiles, scratchModels, servingConfig, type YamlDoc } from "../infra/serving/testing";
import type { ServingOutputs } from "./serving";

const ROOT = path.resolve(__dirname, "..");
const CHART = "kubernetes:helm.sh/v4:Chart";
const ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute";
const SERVICE = "kubernetes:core/v1:Service";
const CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile";

async function run(overrides: Record<string, string | undefined> = {}): Promise<{ rs: ResourceRecord[]; out: ServingOutputs | undefined }> {
  const { resources, outputs } = await runWithMocks(
    async () => (await import("./program")).program().serving,
    { config: servingConfig(overrides) },
  );
  return { rs: resources, out: outputs };
}

const named = (rs: ResourceRecord[], type: string, name: string) => {
  const r = rs.find((x) => x.type === type && x.name === name);
  if (!r) throw new Error(`no ${type} ${name}; have ${rs.map((x) => `${x.type} ${x.name}`).join(", ")}`);
  return r;
};
const values = (r: ResourceRecord) => r.inputs.values as YamlDoc;

describe("serving stack on mocks, every sample referenced", () => {
  let rs: ResourceRecord[];
  let out: ServingOutputs;
  beforeAll(async () => {
    const r = await run();
    rs = r.rs;
    out = r.out as ServingOutputs;
  });

  test("each sample folder becomes its two releases, from charts/, in the serving namespace", () => {
    expect(rs.filter((r) => r.type === CHART).map((r) => r.name).sort()).toEqual(
      ["gaie-bge-small-en", "gaie-qwen3-8b", "gaie-sim-chat", "ms-bge-small-en", "ms-qwen3-8b", "ms-sim-chat"],
    );
    for (const slug of ["qwen3-8b", "sim-chat", "bge-small-en"]) {
      const pool = named(rs, CHART, `gaie-${slug}`);
      const server = named(rs, CHART, `ms-${slug}`);
      expect([pool.inputs.name, pool.inputs.namespace, server.inputs.name, server.inputs.namespace]).toEqual([`gaie-${slug}`, "app-serving", `ms-${slug}`, "app-serving"]);
      expect(String(pool.inputs.chart)).toMatch(/\/charts\/inferencepool-v1\.3\.0\.tgz$/);
      expect(String(server.inputs.chart)).toMatch(/\/charts\/llm-d-modelservice-v0\.4\.5\.tgz$/);
    }
    expect(rs.filter((r) => r.type === "ai-platform:serving:Model").map((r) => r.name).sort()).toEqual(["bge-small-en", "qwen3-8b", "sim-chat"]);
  });

  test("the platform labels are merged into every model-server pod; the pool selects a subset of them", () => {
    for (const [slug, category, nodegroup] of [["qwen3-8b", "generative", undefined], ["sim-chat", "generative", undefined], ["bge-small-en", "embedder", "gpu-small"]] as const) {
      const labels = values(named(rs, CHART, `ms-${slug}`)).modelArtifacts.labels as Record<string, string>;
      expect(labels).toMatchObject({ "ai-platform.io/platform": "ai-platform", "ai-platform.io/model-slug": slug, "ai-platform.io/model-category": category, "app.kubernetes.io/part-of": "app-serving" });
      expect(labels["ai-platform.io/nodegroup"]).toBe(nodegroup);
      const selector = values(named(rs, CHART, `gaie-${slug}`)).inferencePool.modelServers.matchLabels as Record<string, string>;
      for (const [k, v] of Object.entries(selector)) expect([k, labels[k]]).toEqual([k, v]);
    }
  });

  test("ordering: each model server waits for its own InferencePool (and only that one)", () => {
    for (const slug of ["qwen3-8b", "sim-chat", "bge-small-en"]) {
      const deps = named(rs, CHART, `ms-${slug}`).dependsOn;
      expect(deps).toContain(`gaie-${slug}`);
      expect(deps.filter((d) => d.startsWith("gaie-"))).toEqual([`gaie-${slug}`]);
      expect(named(rs, CHART, `gaie-${slug}`).dependsOn.some((d) => d.startsWith("ms-"))).toBe(false);
    }
  });

  test("no parent Gateway: no HTTPRoute; a headless Service per model; everything waits for the namespace", () => {
    expect(rs.filter((r) => r.type === ROUTE)).toEqual([]);
    expect(rs.filter((r) => r.type === SERVICE).map((r) => r.name).sort()).toEqual(["model-bge-small-en", "model-qwen3-8b", "model-sim-chat"]);
    for (const r of rs.filter((x) => x.type.startsWith("kubernetes:") && x.type !== "kubernetes:core/v1:Namespace" && x.type !== CONFIG_FILE)) {
      expect([r.type, r.name, r.dependsOn.includes("app-serving")]).toEqual([r.type, r.name, true]);
    }
  });

  test("every Kubernetes object declared directly is schema-valid", () => {
    const objects = rs.filter(isKubernetesObject);
    expect(objects.length).toBe(4);
    for (const r of objects) expect(() => validateAnyObject(toManifest(r))).not.toThrow();
  });

  test("models are not retained: removing one from serving:models and applying deletes it; the namespace and the CRDs stay", () => {
    for (const r of rs.filter((x) => x.type.startsWith("kubernetes:"))) {
      expect([r.type, r.name, r.retainOnDelete]).toEqual([r.type, r.name, r.type === "kubernetes:core/v1:Namespace" || r.type === CONFIG_FILE]);
    }
  });

  test("the exported catalog parses with the gateway's CatalogSchema, and its YAML is the same catalog", () => {
    const parsed = CatalogSchema.parse(out.catalog);
    expect(parsed.models.map((m) => m.id)).toEqual(["qwen3-8b", "sim-chat", "bge-small-en-v1.5"]);
    expect(CatalogSchema.parse(parse(out.catalogYaml))).toEqual(parsed);
    expect(out.models).toEqual(["generative/qwen3-8b", "generative/sim-chat", "embedder/bge-small-en"]);
    expect(out.gpus).toEqual({ default: { requested: 1, capacity: 1 }, "gpu-small": { requested: 1, capacity: 1 } });
  });
});

describe("configuration changes what is declared", () => {
  test("a parent Gateway adds one valid HTTPRoute per model to its InferencePool, after the pool", async () => {
    const { rs, out } = await run({
      "serving:parentGateway": JSON.stringify({ name: "inference-gateway", namespace: "gateway-system" }),
      "serving:inferenceGatewayUrl": "http://inference-gateway.gateway-system.svc.cluster.local",
    });
    const routes = rs.filter((r) => r.type === ROUTE);
    expect(routes.map((r) => r.name).sort()).toEqual(["model-bge-small-en", "model-qwen3-8b", "model-sim-chat"]);
    for (const r of routes) {
      const m = toManifest(r) as YamlDoc;
      expect(() => validateAnyObject(m)).not.toThrow();
      const slug = r.name.slice("model-".length);
      expect(m.spec.rules[0].backendRefs).toEqual([{ group: "inference.networking.k8s.io", kind: "InferencePool", name: `gaie-${slug}`, port: 8000 }]);
      expect(r.dependsOn).toContain(`gaie-${slug}`);
    }
    expect(CatalogSchema.parse(out?.catalog).models[0]?.upstream).toEqual({ mode: "pool", url: "http://inference-gateway.gateway-system.svc.cluster.local/qwen3-8b" });
  });

  test("removing a model from serving:models removes its releases, Service and catalog entry", async () => {
    const { rs, out } = await run({ "serving:models": JSON.stringify(["generative/sim-chat"]) });
    expect(rs.filter((r) => r.type === CHART).map((r) => r.name).sort()).toEqual(["gaie-sim-chat", "ms-sim-chat"]);
    expect(out?.catalog.models.map((m) => m.id)).toEqual(["sim-chat"]);
  });

  test("replicas override reaches the chart; createNamespace false declares no Namespace", async () => {
    const { rs } = await run({ "serving:replicas": JSON.stringify({ "generative/qwen3-8b": 0 }), "serving:createNamespace": "false" });
    expect(values(named(rs, CHART, "ms-qwen3-8b")).decode.replicas).toBe(0);
    expect(values(named(rs, CHART, "ms-sim-chat")).decode.replicas).toBe(2);
    expect(rs.some((r) => r.type === "kubernetes:core/v1:Namespace")).toBe(false);
  });

  test("GPU preflight: one GPU over capacity fails before anything is declared", async () => {
    const { resources, outputs } = await runWithMocks(
      async () => {
        try {
          (await import("./program")).program();
          return undefined;
        } catch (err) {
          return err as Error;
        }
      },
      { config: servingConfig({ "serving:replicas": JSON.stringify({ "generative/qwen3-8b": 2 }) }) },
    );
    expect(outputs?.message).toContain('node group "default": 2 GPUs requested > capacity 1: generative/qwen3-8b 2 replicas × 1 GPU = 2');
    expect(resources).toEqual([]);
  });

  test("a broken folder fails preview naming the folder and the rule, even when it is not referenced", async () => {
    const { root, cleanup } = scratchModels();
    try {
      editYaml(folderFiles(root, "embedder/bge-small-en", "bge-small-en").gaie, (d) => (d.inferencePool.targetPorts = [{ number: 9000 }]));
      const err = await run({ "serving:modelsDir": root, "serving:models": JSON.stringify(["generative/sim-chat"]) }).catch((e: Error) => e);
      expect((err as Error).message).toMatch(/embedder\/bge-small-en: \[serving port\] ms-bge-small-en routing\.servicePort 8000 is not a target port of gaie-bge-small-en \(9000\)/);
    } finally {
      cleanup();
    }
  });

  test("invalid configuration names the keys; no serving: namespace declares nothing", async () => {
    const err = await run({ "serving:models": JSON.stringify(["generative/nope"]), "serving:gpuCapacity": "3" }).catch((e: Error) => e);
    expect((err as Error).message).toContain("serving:gpuCapacity: ");
    const missing = await run({ "serving:models": JSON.stringify(["generative/nope"]) }).catch((e: Error) => e);
    expect((missing as Error).message).toContain("serving:models [0]: no model folder deployments/models/generative/nope");
    const { resources } = await runWithMocks(async () => (await import("./program")).program().serving, { config: { "platform:labelDomain": "ai-platform.io" } });
    expect(resources).toEqual([]);
  });
});

describe("offline render with monitoring and serving", () => {
  let out: string;
  beforeAll(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), "render-serving-"));
    const config = { ...monitoringConfig(), ...servingConfig() };
    await render({
      stack: "none",
      out,
      projectRoot: ROOT,
      project: "ai-platform",
      knownSecretKeys: MONITORING_SECRETS,
      env: { PULUMI_CONFIG: JSON.stringify(config), PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(MONITORING_SECRETS) },
      program: async () => {
        return (await import("./program")).program();
      },
    });
  });
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  test("includes the serving releases with their values and the serving manifests, each schema-valid", () => {
    const resources = JSON.parse(fs.readFileSync(path.join(out, "resources.json"), "utf8")) as { type: string; name: string; inputs: YamlDoc }[];
    const ms = resources.find((r) => r.type === CHART && r.name === "ms-qwen3-8b");
    expect(ms?.inputs.values.modelArtifacts.labels["ai-platform.io/model-slug"]).toBe("qwen3-8b");
    const files = fs.readdirSync(path.join(out, "manifests"));
    expect(files).toEqual(expect.arrayContaining(["namespace-app-serving.yaml", "service-app-serving-model-qwen3-8b.yaml", "service-app-serving-model-sim-chat.yaml"]));
    for (const f of files.filter((x) => x.includes("app-serving"))) {
      expect(() => validateAnyObject(parse(fs.readFileSync(path.join(out, "manifests", f), "utf8")) as Record<string, unknown>)).not.toThrow();
    }
  });

  test("no secret in plaintext anywhere in the render", () => {
    const all = fs
      .readdirSync(out, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), "utf8"))
      .join("\n");
    expect(all).toContain("ms-sim-chat");
    expect(all).not.toContain(TEST_S3_PASSWORD);
    expect(all).not.toContain(TEST_VIEWER_PASSWORD);
  });
});

describe("npm run render (dev stack)", () => {
  test("renders the dev stack's serving resources next to monitoring's, secrets masked", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "render-dev-"));
    try {
      const secrets = { "monitoring:s3Password": TEST_S3_PASSWORD, "monitoring:viewerAdminPassword": TEST_VIEWER_PASSWORD };
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "stacks/render.ts", "--stack", "dev", "--out", out], {
          cwd: ROOT,
          env: { ...process.env, PULUMI_CONFIG: JSON.stringify(secrets), PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(Object.keys(secrets)) },
          stdio: "ignore",
        });
        child.on("close", resolve);
      });
      expect(code).toBe(0);
      const text = fs.readFileSync(path.join(out, "resources.json"), "utf8");
      const names = (JSON.parse(text) as { type: string; name: string }[]).filter((r) => r.type === CHART).map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(["gaie-sim-chat", "ms-sim-chat", "logstore"]));
      expect(fs.readdirSync(path.join(out, "manifests"))).toContain("service-app-serving-model-sim-chat.yaml");
      expect(text).not.toContain(TEST_S3_PASSWORD);
      expect(text).not.toContain(TEST_VIEWER_PASSWORD);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
