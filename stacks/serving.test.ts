// The serving program end to end on Pulumi's mocks: what it declares for a given configuration.
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { CatalogSchema } from "../gateway/src/config/catalog";
import * as pulumi from "@pulumi/pulumi";
import { validateAnyObject } from "../infra/platform/crd-validate";
import { isKubernetesObject, toManifest } from "../infra/platform/k8s-validate";
import { isSecretValue, type ResourceRecord, runWithMocks } from "../infra/platform/mocks";
import { render } from "../infra/platform/render";
import { fullConfig as monitoringConfig, SECRET_KEYS as MONITORING_SECRETS, TEST_S3_PASSWORD, TEST_VIEWER_PASSWORD } from "../infra/monitoring/testing";
import { editYaml, folderFiles, scratchModels, servingConfig, type YamlDoc } from "../infra/serving/testing";
import type { ServingOutputs } from "./serving";

const ROOT = path.resolve(__dirname, "..");
const CHART = "kubernetes:helm.sh/v4:Chart";
const ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute";
const SERVICE = "kubernetes:core/v1:Service";
const CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile";
const PVC = "kubernetes:core/v1:PersistentVolumeClaim";
const JOB = "kubernetes:batch/v1:Job";

async function run(overrides: Record<string, string | undefined> = {}, secretKeys: string[] = []): Promise<{ rs: ResourceRecord[]; out: ServingOutputs | undefined }> {
  const { resources, outputs } = await runWithMocks(
    async () => (await import("./program")).program().serving,
    { config: servingConfig(overrides), secretKeys },
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
    expect(objects.map((r) => `${r.type.replace("kubernetes:", "")} ${r.name}`).sort()).toEqual([
      "batch/v1:Job weights-download-bge-small-en",
      "batch/v1:Job weights-download-qwen3-8b",
      "core/v1:Namespace app-serving",
      "core/v1:PersistentVolumeClaim weights-bge-small-en",
      "core/v1:PersistentVolumeClaim weights-qwen3-8b",
      "core/v1:Secret model-server-api-key",
      "core/v1:Service model-bge-small-en",
      "core/v1:Service model-qwen3-8b",
      "core/v1:Service model-sim-chat",
      "networking.k8s.io/v1:NetworkPolicy model-servers",
      "policy/v1:PodDisruptionBudget gaie-bge-small-en-epp",
      "policy/v1:PodDisruptionBudget gaie-qwen3-8b-epp",
      "policy/v1:PodDisruptionBudget gaie-sim-chat-epp",
      "policy/v1:PodDisruptionBudget ms-bge-small-en-decode",
      "policy/v1:PodDisruptionBudget ms-qwen3-8b-decode",
      "policy/v1:PodDisruptionBudget ms-sim-chat-decode",
    ]);
    for (const r of objects) expect(() => validateAnyObject(toManifest(r))).not.toThrow();
  });

  test("models are not retained: removing one from serving:models and applying deletes it; the namespace, the CRDs and the weights caches stay", () => {
    for (const r of rs.filter((x) => x.type.startsWith("kubernetes:"))) {
      const kept = r.type === "kubernetes:core/v1:Namespace" || r.type === CONFIG_FILE || r.type === PVC;
      expect([r.type, r.name, r.retainOnDelete]).toEqual([r.type, r.name, kept]);
    }
    // A retained claim keeps what Kubernetes would refuse to change.
    expect(named(rs, PVC, "weights-qwen3-8b").ignoreChanges).toEqual(expect.arrayContaining(["spec.storageClassName", "spec.accessModes"]));
  });

  test("weights: a cache volume sized from model.yaml, a download Job into it, then the server reads it offline", () => {
    const claim = toManifest(named(rs, PVC, "weights-qwen3-8b")) as YamlDoc;
    // 16 GiB of weights and its adapter's 1 GiB, with 20 % and 2 GiB to spare.
    expect(claim.spec).toEqual({ accessModes: ["ReadWriteMany"], resources: { requests: { storage: "23Gi" } } });
    expect(claim.metadata.annotations).toEqual({ "pulumi.com/skipAwait": "true" });
    const job = named(rs, JOB, "weights-download-qwen3-8b");
    const manifest = toManifest(job) as YamlDoc;
    expect(manifest.metadata.name).toMatch(/^weights-qwen3-8b-[0-9a-f]{8}$/);
    expect(manifest.metadata.annotations).toEqual({ "pulumi.com/replaceUnready": "true", "pulumi.com/timeoutSeconds": String(10 * 60 + 16 * 120) });
    expect(job.dependsOn).toContain("weights-qwen3-8b");
    expect(job.deleteBeforeReplace).toBe(true);
    const pod = manifest.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
    expect(pod.containers[0].env.map((e: { name: string }) => e.name)).not.toContain("HF_TOKEN");
    // Its LoRA adapter comes down beside the weights, in the model server's image (it has huggingface_hub).
    expect(pod.containers.map((c: YamlDoc) => [c.name, c.image])).toEqual([
      ["download", "ghcr.io/llm-d/llm-d-cuda:v0.5.0"],
      ["adapter-0", "ghcr.io/llm-d/llm-d-cuda:v0.5.0"],
    ]);
    const server = named(rs, CHART, "ms-qwen3-8b");
    expect(server.dependsOn).toEqual(expect.arrayContaining(["gaie-qwen3-8b", "weights-download-qwen3-8b", "model-server-api-key"]));
    expect(values(server).modelArtifacts.uri).toBe("pvc+hf://weights-qwen3-8b/hub/Qwen/Qwen3-8B");
    // The simulator loads nothing: no volume, no Job, its folder's uri as is.
    expect(rs.some((r) => r.name.includes("sim-chat") && (r.type === PVC || r.type === JOB))).toBe(false);
    expect(values(named(rs, CHART, "ms-sim-chat")).modelArtifacts.uri).toBe("hf://random");
  });

  test("the model servers' API key: one Secret, the servers read it, the gateway gets it as a secret output", () => {
    const secret = named(rs, "kubernetes:core/v1:Secret", "model-server-api-key");
    expect(isSecretValue(secret.inputs.stringData)).toBe(true);
    expect(Object.keys((secret.inputs.stringData as { value: object }).value)).toEqual(["api-key"]);
    expect(values(named(rs, CHART, "ms-qwen3-8b")).decode.containers[0].env).toContainEqual({ name: "VLLM_API_KEY", valueFrom: { secretKeyRef: { name: "model-server-api-key", key: "api-key" } } });
    expect(pulumi.Output.isInstance(out.upstreamApiKey)).toBe(true);
    // vLLM reads it at start: its digest on the pod template rolls the servers when it is rotated; the simulator has none.
    expect(values(named(rs, CHART, "ms-qwen3-8b")).decode.podAnnotations["checksum/api-key"]).toMatch(/^[0-9a-f]{16}$/);
    expect(values(named(rs, CHART, "ms-sim-chat")).decode.podAnnotations["checksum/api-key"]).toBeUndefined();
  });

  test("only the gateway, the pickers, the metrics server and model servers reach the model servers", () => {
    const policy = toManifest(named(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "model-servers")) as YamlDoc;
    const namespaces = policy.spec.ingress[0].from.map((f: YamlDoc) => f.namespaceSelector?.matchLabels["kubernetes.io/metadata.name"] ?? "(own)");
    expect(namespaces).toEqual(["ai-gateway", "monitoring", "(own)", "(own)", "(own)", "(own)"]);
  });

  test("monitoring sees the models: vLLM scraped on its port, the pickers labelled, scraped and without metrics auth", () => {
    expect(values(named(rs, CHART, "ms-qwen3-8b")).decode.podAnnotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "8000", "prometheus.io/path": "/metrics" });
    for (const slug of ["qwen3-8b", "sim-chat", "bge-small-en"]) {
      const pool = named(rs, CHART, `gaie-${slug}`);
      expect(values(pool).inferenceExtension.monitoring.prometheus.auth.enabled).toBe(false);
      expect(pool.transforms).toBe(1);
    }
  });

  test("rollouts: on pools without spare GPUs every GPU model is recreated", () => {
    expect(out.rollouts).toEqual({
      "generative/qwen3-8b": { type: "Recreate", reason: 'node group "default" has no 1 spare GPU for a surge pod' },
      "generative/sim-chat": { type: "RollingUpdate", surgeGpus: 0 },
      "embedder/bge-small-en": { type: "Recreate", reason: 'node group "gpu-small" has no 1 spare GPU for a surge pod' },
    });
    expect(named(rs, CHART, "ms-qwen3-8b").transforms).toBe(1);
  });

  test("the exported catalog parses with the gateway's CatalogSchema, and its YAML is the same catalog", () => {
    const parsed = CatalogSchema.parse(out.catalog);
    expect(parsed.models.map((m) => m.id)).toEqual(["qwen3-8b", "sim-chat", "bge-small-en-v1.5"]);
    expect(CatalogSchema.parse(parse(out.catalogYaml))).toEqual(parsed);
    expect(out.models).toEqual(["generative/qwen3-8b", "generative/sim-chat", "embedder/bge-small-en"]);
    expect(out.gpus).toEqual({ default: { requested: 1, base: 1, capacity: 1 }, "gpu-small": { requested: 1, base: 1, capacity: 1 } });
  });
});

describe("configuration changes what is declared", () => {
  test("GKE: the pool's HealthCheckPolicy gets portSpecification USE_FIXED_PORT beside its port (the GKE CRD refuses a port without it)", async () => {
    const { resources, transforms } = await runWithMocks(async () => (await import("./program")).program().serving, {
      config: servingConfig({ "serving:gatewayProvider": "gke" }),
    });
    // The policy as inferencepool v1.3.0 renders it (templates/gke.yaml), through the transforms the program registers.
    const rendered = {
      apiVersion: "networking.gke.io/v1",
      kind: "HealthCheckPolicy",
      metadata: { name: "gaie-qwen3-8b", namespace: "app-serving" },
      spec: {
        targetRef: { group: "inference.networking.k8s.io", kind: "InferencePool", name: "gaie-qwen3-8b" },
        default: { timeoutSec: 2, checkIntervalSec: 2, config: { type: "HTTP", httpHealthCheck: { requestPath: "/health", port: 8000 } } },
      },
    };
    let props: Record<string, unknown> = rendered;
    for (const t of transforms.get(`${CHART}::gaie-qwen3-8b`) ?? []) {
      const r = await t({ type: "kubernetes:networking.gke.io/v1:HealthCheckPolicy", name: "gaie-qwen3-8b:app-serving/gaie-qwen3-8b", props, opts: {}, custom: true });
      if (r) props = r.props;
    }
    expect((props as YamlDoc).spec.default.config.httpHealthCheck).toEqual({ requestPath: "/health", port: 8000, portSpecification: "USE_FIXED_PORT" });
    // Two transforms on a GKE pool: the picker's pod metadata, then this one (other providers keep only the first).
    expect(named(resources, CHART, "gaie-qwen3-8b").transforms).toBe(2);
  });

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
    expect(CatalogSchema.parse(out?.catalog).models[0]?.upstream).toEqual({
      mode: "pool",
      url: "http://inference-gateway.gateway-system.svc.cluster.local/qwen3-8b",
      readiness: { host: "model-qwen3-8b.app-serving.svc.cluster.local", port: 8000, refreshIntervalMs: 5000 },
    });
    // The inference gateway's namespace may reach the model servers.
    const policy = toManifest(named(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "model-servers")) as YamlDoc;
    expect(policy.spec.ingress[0].from).toContainEqual({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "gateway-system" } }, podSelector: {} });
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

  test("a swap in one apply: the outgoing model goes to zero and the incoming server is created after it", async () => {
    const { rs, out } = await run({
      "serving:models": JSON.stringify(["generative/qwen3-8b", "generative/llama-3.3-70b"]),
      "serving:replaces": JSON.stringify({ "generative/llama-3.3-70b": "generative/qwen3-8b" }),
      "serving:gpuCapacity": JSON.stringify({ default: 4 }),
      "serving:hfToken": "hf_test_token",
    }, ["serving:hfToken"]);
    expect(values(named(rs, CHART, "ms-qwen3-8b")).decode.replicas).toBe(0);
    const incoming = named(rs, CHART, "ms-llama-3-3-70b");
    expect(values(incoming).decode.replicas).toBe(1);
    expect(incoming.dependsOn).toContain("ms-qwen3-8b");
    // The incoming weights download does not wait: it needs no GPU and runs while the old model still serves.
    expect(named(rs, JOB, "weights-download-llama-3-3-70b").dependsOn).not.toContain("ms-qwen3-8b");
    expect(out?.gpus).toEqual({ default: { requested: 4, base: 4, capacity: 4 } });
    // Both are listed until the next apply removes the outgoing one; the token reaches only the download Jobs.
    expect(out?.catalog.models.map((m) => m.id)).toEqual(["qwen3-8b", "llama-3.3-70b-instruct"]);
    const tokenRef = { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "hf-token", key: "HF_TOKEN" } } };
    expect((toManifest(named(rs, JOB, "weights-download-llama-3-3-70b")) as YamlDoc).spec.template.spec.containers[0].env).toContainEqual(tokenRef);
    expect(JSON.stringify(values(incoming))).not.toContain("HF_TOKEN");
  });

  test("a config that cannot work fails preview naming the model folder and the field, declaring nothing", async () => {
    const { resources, outputs } = await runWithMocks(
      async () => {
        try {
          (await import("./program")).program();
          return undefined;
        } catch (err) {
          return err as Error;
        }
      },
      { config: servingConfig({ "serving:models": JSON.stringify(["generative/llama-3.3-70b"]), "serving:gpuCapacity": JSON.stringify({ default: 4 }) }) },
    );
    expect(outputs?.message).toContain("deployments/models/generative/llama-3.3-70b: model.yaml weights.gated is true but serving:hfToken is not set");
    expect(resources).toEqual([]);
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
