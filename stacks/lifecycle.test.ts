// Day 1 and day 2 on a real cluster, as far as Pulumi's mocks can show them: the explicit provider and what it is
// set to, the CRDs before their users, the waits, what survives and what is replaced, and what real clusters differ
// in. What mocks cannot execute is listed in docs/development.md ("What only a real cluster executes").
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import { parse } from "yaml";
import { CatalogSchema } from "../gateway/src/config/catalog";
import { fullConfig as monitoringConfig, SECRET_KEYS as MONITORING_SECRETS } from "../infra/monitoring/testing";
import { gatewayConfig, TEST_CATALOG, TEST_KEYS } from "../infra/gateway/testing";
import { clusterConfig, withOverrides } from "../infra/platform/config-testing";
import { toManifest } from "../infra/platform/k8s-validate";
import { isSecretValue, MockEngineError, type MockRunOptions, type ResourceRecord, runWithMocks } from "../infra/platform/mocks";
import { parseStackYaml } from "../infra/platform/stack-config";
import { servingConfig } from "../infra/serving/testing";
import type { ProgramOutputs } from "./program";

const ROOT = path.resolve(__dirname, "..");
const CHART = "kubernetes:helm.sh/v4:Chart";
const CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile";
const CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
const PROVIDER = "pulumi:providers:kubernetes";
const T = { ns: "kubernetes:core/v1:Namespace", deploy: "kubernetes:apps/v1:Deployment", job: "kubernetes:batch/v1:Job", np: "kubernetes:networking.k8s.io/v1:NetworkPolicy" };

/** The whole stack: monitoring, serving (every sample) and the gateway fed by the serving part. */
function everything(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const gateway = gatewayConfig();
  delete gateway["gateway:catalog"];
  return withOverrides({ ...monitoringConfig(), ...servingConfig(), ...gateway }, overrides);
}

async function run(config: Record<string, string>, extra: Partial<MockRunOptions> = {}): Promise<{ rs: ResourceRecord[]; out: ProgramOutputs }> {
  const { resources, outputs } = await runWithMocks(async () => (await import("./program")).program(), {
    config,
    secretKeys: [...MONITORING_SECRETS, "gateway:redisUrl"],
    ...extra,
  });
  return { rs: resources, out: outputs };
}

const named = (rs: ResourceRecord[], type: string, name: string) => {
  const r = rs.find((x) => x.type === type && x.name === name);
  if (!r) throw new Error(`no ${type} ${name}; have ${rs.map((x) => `${x.type} ${x.name}`).join(", ")}`);
  return r;
};
/* eslint-disable @typescript-eslint/no-explicit-any -- manifests and chart values are read field by field */
const values = (r: ResourceRecord) => r.inputs.values as any;
const manifest = (rs: ResourceRecord[], type: string, name: string) => toManifest(named(rs, type, name)) as any;
const failureOf = (p: Promise<unknown>) => p.then(() => undefined, (e: Error) => e);

describe("one explicit provider per stack", () => {
  let rs: ResourceRecord[];
  beforeAll(async () => {
    rs = (await run(everything())).rs;
  });

  test("the provider names the cluster, applies server-side, adopts retained objects and keeps ConfigMaps in place", () => {
    const providers = rs.filter((r) => r.type === PROVIDER);
    expect(providers.map((p) => p.name)).toEqual(["cluster"]);
    // Provider inputs travel as strings, as the engine passes them to the plugin.
    expect(providers[0]?.inputs).toMatchObject({
      context: "kind-ai-platform",
      enableServerSideApply: "true",
      upsertExistingObjects: "true",
      enablePatchForce: "true",
      enableConfigMapMutable: "true",
      enableSecretMutable: "true",
    });
    expect(providers[0]?.inputs.clusterIdentifier).toBeUndefined();
  });

  test("every Kubernetes resource, every chart and every read goes through it", () => {
    const k8sResources = rs.filter((r) => r.type.startsWith("kubernetes:"));
    expect(k8sResources.length).toBeGreaterThan(30);
    for (const r of k8sResources) expect([r.type, r.name, r.provider]).toEqual([r.type, r.name, "cluster"]);
  });

  test("a resource that is not given the provider fails, as the engine refuses a disabled default provider", async () => {
    const withoutProvider = () => {
      new k8s.core.v1.ConfigMap("stray", { metadata: { name: "stray", namespace: "default" }, data: { a: "b" } });
      return undefined;
    };
    const err = await failureOf(runWithMocks(withoutProvider, { config: clusterConfig() }));
    expect(err).toBeInstanceOf(MockEngineError);
    expect((err as Error).message).toBe("Default provider for 'kubernetes' disabled. 'kubernetes:core/v1:ConfigMap::stray' must use an explicit provider.");
    // The same program passes where the default provider is allowed: the refusal comes from the setting.
    await expect(runWithMocks(withoutProvider, { config: { "cluster:context": "x" } })).resolves.toBeDefined();
  });
});

describe("CRDs are part of the program, before anything that uses them", () => {
  test("install mode: the GAIE release of the pinned chart, retained, and every pool release waits for it", async () => {
    const { rs } = await run(everything());
    const crds = named(rs, CONFIG_FILE, "inferencePool-crds");
    expect(crds.inputs.file).toBe("https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/v1.3.0/manifests.yaml");
    expect([crds.retainOnDelete, crds.transforms]).toEqual([true, 1]);
    for (const pool of rs.filter((r) => r.type === CHART && r.name.startsWith("gaie-"))) expect([pool.name, pool.dependsOn]).toEqual([pool.name, expect.arrayContaining(["inferencePool-crds"])]);
    // No routes configured: no Gateway API CRDs are asked for.
    expect(rs.some((r) => r.name.includes("gatewayApi"))).toBe(false);
  });

  test("routes on, Gateway API CRDs assumed (the default): each is read, and the routes wait for the read", async () => {
    const { rs } = await run(everything({ "serving:parentGateway": JSON.stringify({ name: "inference-gateway", namespace: "gateway-system" }) }));
    const read = named(rs, CRD, "cluster:crds.gatewayApi:httproutes.gateway.networking.k8s.io");
    expect(read.read).toBe(true);
    for (const route of rs.filter((r) => r.type === "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")) {
      expect(route.dependsOn).toContain("cluster:crds.gatewayApi:httproutes.gateway.networking.k8s.io");
    }
  });

  test("assume mode with the CRD missing fails preview naming the key and the CRD", async () => {
    const config = everything({ "gateway:exposure": JSON.stringify({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }) });
    const err = await failureOf(run(config, { absentObjects: ["httproutes.gateway.networking.k8s.io"] }));
    expect(err).toBeInstanceOf(MockEngineError);
    expect((err as Error).message).toContain("(cluster:crds.gatewayApi:httproutes.gateway.networking.k8s.io): Preview failed: resource 'httproutes.gateway.networking.k8s.io' does not exist");
  });

  test("install mode for Gateway API, and mirrored sources for air-gapped clusters", async () => {
    const { rs } = await run(
      everything({
        "serving:parentGateway": JSON.stringify({ name: "inference-gateway" }),
        "cluster:crds": JSON.stringify({ gatewayApi: "install", inferencePool: "install" }),
        "cluster:crdSources": JSON.stringify({ inferencePool: "https://mirror.internal/gaie/v1.3.0/manifests.yaml", gatewayApi: "crds/gateway-api-v1.3.0.yaml" }),
      }),
    );
    expect(named(rs, CONFIG_FILE, "inferencePool-crds").inputs.file).toBe("https://mirror.internal/gaie/v1.3.0/manifests.yaml");
    expect(String(named(rs, CONFIG_FILE, "gatewayApi-crds").inputs.file)).toMatch(/\/crds\/gateway-api-v1\.3\.0\.yaml$/);
    expect(named(rs, CONFIG_FILE, "gatewayApi-crds").retainOnDelete).toBe(true);
  });

  test("assume mode for InferencePool: the CRD of each pool API group the folders use is read", async () => {
    const { rs } = await run(everything({ "cluster:crds": JSON.stringify({ inferencePool: "assume" }) }));
    expect(rs.filter((r) => r.type === CONFIG_FILE)).toEqual([]);
    const read = named(rs, CRD, "cluster:crds.inferencePool:inferencepools.inference.networking.k8s.io");
    expect(named(rs, CHART, "gaie-sim-chat").dependsOn).toContain(read.name);
  });
});

const PVC = "kubernetes:core/v1:PersistentVolumeClaim";

describe("waits that fit the workload", () => {
  test("model servers wait floor + weights × allowance; the simulator only the floor", async () => {
    const { rs } = await run(everything());
    // qwen3-8b: model.yaml weights.sizeGiB 16 → 20 min + 16 × 30 s; the startup probe gets the same budget.
    const qwen = values(named(rs, CHART, "ms-qwen3-8b")).decode;
    expect(qwen.annotations).toEqual({ "pulumi.com/timeoutSeconds": String(20 * 60 + 16 * 30) });
    expect(qwen.containers[0].startupProbe.failureThreshold * qwen.containers[0].startupProbe.periodSeconds).toBe(20 * 60 + 16 * 30);
    expect(Number(values(named(rs, CHART, "ms-sim-chat")).decode.annotations["pulumi.com/timeoutSeconds"])).toBe(1200);
    // The download gets its own budget: 10 min + 16 × 120 s.
    expect(manifest(rs, T.job, "weights-download-qwen3-8b").metadata.annotations["pulumi.com/timeoutSeconds"]).toBe(String(10 * 60 + 16 * 120));
  });

  test("the floor and allowance are configurable; awaitModelServers false skips the wait", async () => {
    const longer = await run(everything({ "serving:startupTimeout": JSON.stringify({ floorMinutes: 45, secondsPerGiB: 60 }) }));
    expect(values(named(longer.rs, CHART, "ms-qwen3-8b")).decode.annotations["pulumi.com/timeoutSeconds"]).toBe(String(45 * 60 + 16 * 60));
    const skipped = await run(everything({ "serving:awaitModelServers": "false" }));
    expect(values(named(skipped.rs, CHART, "ms-qwen3-8b")).decode.annotations).toEqual({ "pulumi.com/skipAwait": "true" });
    expect(manifest(skipped.rs, T.job, "weights-download-qwen3-8b").metadata.annotations).toEqual({ "pulumi.com/replaceUnready": "true", "pulumi.com/skipAwait": "true" });
  });

  test("the bucket Job is replaced when it failed before (replaceUnready) or its inputs change, under its own name", async () => {
    const { rs } = await run(everything());
    const job = named(rs, T.job, "logstore-create-bucket");
    expect(job.deleteBeforeReplace).toBe(true);
    expect(job.retainOnDelete).toBe(false);
    expect(manifest(rs, T.job, "logstore-create-bucket").metadata.annotations).toEqual({ "pulumi.com/replaceUnready": "true" });
    // The log store still waits for it.
    expect(named(rs, CHART, "logstore").dependsOn).toContain("logstore-create-bucket");
  });
});

describe("lifecycle rows the mocks can show", () => {
  let base: ResourceRecord[];
  beforeAll(async () => {
    base = (await run(everything())).rs;
  });

  const ids = (rs: ResourceRecord[]) => rs.map((r) => `${r.type} ${r.name}`);

  test("destroy leaves exactly the namespaces, the CRDs, the weights caches and the monitoring objects (but the bucket Job)", () => {
    const retained = base.filter((r) => r.retainOnDelete).map((r) => `${r.type} ${r.name}`);
    const expected = base
      .filter((r) => r.type === T.ns || r.type === CONFIG_FILE || r.type === PVC || (r.type.startsWith("kubernetes:") && isMonitoring(r) && r.name !== "logstore-create-bucket"))
      .map((r) => `${r.type} ${r.name}`);
    expect(retained.sort()).toEqual(expected.sort());
    expect(retained).toEqual(expect.arrayContaining([`${T.ns} monitoring`, `${T.ns} app-serving`, `${T.ns} ai-gateway`, `${CONFIG_FILE} inferencePool-crds`]));
  });

  test("omitting a component: exactly its objects leave the program, and each of them is retained (stays in the cluster)", async () => {
    const without = (await run(everything({ "monitoring:components": JSON.stringify(["logstore", "viewer", "dashboards", "metrics"]) }))).rs;
    const left = base.filter((r) => !ids(without).includes(`${r.type} ${r.name}`));
    expect(left.map((r) => `${r.type} ${r.name}`)).toEqual([`ai-platform:monitoring:Collector collector`, `${CHART} collector`]);
    expect(left.filter((r) => r.custom || r.type === CHART).every((r) => r.retainOnDelete)).toBe(true);
    // Nothing else changed: listing it again declares exactly the objects of the first run, under the same names,
    // which the provider adopts (upsertExistingObjects) instead of failing with AlreadyExists.
    expect(ids(without).every((id) => ids(base).includes(id))).toBe(true);
  });

  test("a model removed: exactly its objects leave and none but its weights cache is retained (it stops serving); added again: the same names", async () => {
    const without = { "serving:models": JSON.stringify(["generative/sim-chat", "embedder/bge-small-en"]) };
    // A key still naming the model fails the preview: the removal takes it out of the key's list too.
    await expect(run(everything(without))).rejects.toThrow(`gateway:apiKeys [0.models.0]: key "team-a" names "qwen3-8b"`);
    const keys = TEST_KEYS.map((k) => (k.models ? { ...k, models: ["sim-chat"] } : k));
    const removed = (await run(everything({ ...without, "gateway:apiKeys": JSON.stringify(keys) }))).rs;
    const left = base.filter((r) => !ids(removed).includes(`${r.type} ${r.name}`));
    expect(left.length).toBeGreaterThan(3);
    for (const r of left) expect([r.type, r.name, r.name.includes("qwen3-8b"), r.retainOnDelete]).toEqual([r.type, r.name, true, r.type === PVC]);
    // weightsCache.retain false: the cache goes with the model.
    const dropped = (await run(everything({ "serving:weightsCache": JSON.stringify({ retain: false }) }))).rs;
    expect(named(dropped, PVC, "weights-qwen3-8b").retainOnDelete).toBe(false);
    expect(ids(removed).every((id) => ids(base).includes(id))).toBe(true);
    expect(ids((await run(everything())).rs).sort()).toEqual(ids(base).sort());
  });

  test("the bucket Job runs again when its script changes too", () => {
    const annotations = manifest(base, T.job, "logstore-create-bucket").spec.template.metadata.annotations;
    expect(Object.keys(annotations).sort()).toEqual(["checksum/s3-credentials", "checksum/script"]);
    expect(annotations["checksum/script"]).toMatch(/^[0-9a-f]{16}$/);
  });

  test("where the cluster assigns pod user ids (OpenShift), the gateway's pods set none", async () => {
    const { rs } = await run(everything({ "cluster:fixedUserIds": "false" }));
    for (const name of ["gateway", "gateway-redis"]) {
      const spec = manifest(rs, T.deploy, name).spec.template.spec;
      expect(JSON.stringify(spec)).not.toMatch(/runAsUser|runAsGroup|fsGroup/);
      expect(spec.securityContext.runAsNonRoot).toBe(true);
    }
    expect(manifest(base, T.deploy, "gateway").spec.template.spec.securityContext).toMatchObject({ runAsUser: 10001, fsGroup: 10001 });
  });

  test("rotating the S3 password replaces the bucket Job (it runs again) and rolls the log store; nothing else changes", async () => {
    const rotated = (await run(everything({ "monitoring:s3Password": "rotated-Pw-7Ghq" }))).rs;
    const jobDigest = (rs: ResourceRecord[]) => manifest(rs, T.job, "logstore-create-bucket").spec.template.metadata.annotations["checksum/s3-credentials"];
    const podDigest = (rs: ResourceRecord[]) => values(named(rs, CHART, "logstore")).singleBinary.podAnnotations["checksum/s3-credentials"];
    expect(jobDigest(rotated)).not.toBe(jobDigest(base));
    expect(podDigest(rotated)).toBe(jobDigest(rotated));
    expect(podDigest(base)).toBe(jobDigest(base));
    expect(jobDigest(base)).toMatch(/^[0-9a-f]{16}$/);
    expect(values(named(rotated, CHART, "viewer"))).toEqual(values(named(base, CHART, "viewer")));
  });

  test("rotating the viewer password restarts the viewer (it applies the password at start)", async () => {
    const rotated = (await run(everything({ "monitoring:viewerAdminPassword": "rotated-Viewer-9x" }))).rs;
    const digest = (rs: ResourceRecord[]) => values(named(rs, CHART, "viewer")).podAnnotations["checksum/admin-password"];
    expect(digest(rotated)).not.toBe(digest(base));
  });

  test("changing an external Redis URL rolls the gateway (it reads the URL at start)", async () => {
    const external = (url: string) =>
      run(everything({ "gateway:redisEgress": JSON.stringify({ cidr: "10.0.0.5/32" }), "gateway:redisUrl": url }));
    const a = (await external("redis://:one@10.0.0.5:6379")).rs;
    const b = (await external("redis://:two@10.0.0.5:6379")).rs;
    const digest = (rs: ResourceRecord[]) => manifest(rs, T.deploy, "gateway").spec.template.metadata.annotations["checksum/redis-url"];
    expect(digest(a)).not.toBe(digest(b));
    expect(JSON.stringify(manifest(a, T.deploy, "gateway"))).not.toContain("one@");
  });
});

describe("what real clusters differ in", () => {
  test("the cluster domain reaches every in-cluster address", async () => {
    const { rs, out } = await run(everything({ "cluster:domain": "corp.internal" }));
    const catalog = CatalogSchema.parse(out.serving?.catalog);
    expect(catalog.models.map((m) => (m.upstream.mode === "dns" ? m.upstream.host : ""))).toEqual([
      "model-qwen3-8b.app-serving.svc.corp.internal",
      "model-sim-chat.app-serving.svc.corp.internal",
      "model-bge-small-en.app-serving.svc.corp.internal",
    ]);
    const datasources = values(named(rs, CHART, "viewer")).datasources["datasources.yaml"].datasources;
    expect(datasources[0].url).toBe("http://logstore.monitoring.svc.corp.internal:3100");
    expect(values(named(rs, CHART, "collector")).alloy.configMap.content).toContain("http://logstore.monitoring.svc.corp.internal:3100/loki/api/v1/push");
    const redisUrl = await new Promise<string>((resolve) => out.gateway?.url.apply((u) => (resolve(u), u)));
    expect(redisUrl).toBe("http://gateway.ai-gateway.svc.corp.internal:80/v1");
  });

  test.each([
    ["kube-dns", [{ ns: "kube-system", labels: { "k8s-app": "kube-dns" } }], [], 53],
    [{ preset: "node-local-dns", serviceIP: "10.43.0.10" }, [{ ns: "kube-system", labels: { "k8s-app": "kube-dns" } }], ["10.43.0.10/32", "169.254.20.10/32"], 53],
    ["openshift", [{ ns: "openshift-dns", labels: { "dns.operator.openshift.io/daemonset-dns": "default" } }], [], 5353],
  ] as const)("DNS egress for %j", async (preset, pods, cidrs, port) => {
    const { rs } = await run(everything({ "cluster:dns": typeof preset === "string" ? preset : JSON.stringify(preset) }));
    const egress = manifest(rs, T.np, "gateway").spec.egress as { to: Record<string, any>[]; ports?: unknown[] }[];
    const dns = egress.find((e) => JSON.stringify(e.ports ?? []).includes(`"UDP"`));
    expect(dns?.ports).toEqual([
      { protocol: "UDP", port },
      { protocol: "TCP", port },
    ]);
    expect(dns?.to).toEqual([
      ...pods.map((p) => ({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": p.ns } }, podSelector: { matchLabels: p.labels } })),
      ...cidrs.map((cidr) => ({ ipBlock: { cidr } })),
    ]);
  });

  test("upstreams given as IPs are allowed by address and port; external host names need gateway:extraEgress", async () => {
    const catalog = {
      models: [
        ...TEST_CATALOG.models,
        { id: "vm-model", category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: "http://10.1.2.3:8000" }, { url: "http://[fd00::7]:8001" }] } },
      ],
    };
    const standalone = (extra: Record<string, string> = {}) => runWithMocks(async () => (await import("./program")).program(), { config: gatewayConfig({ "gateway:catalog": JSON.stringify(catalog), ...extra }) });
    const { resources } = await standalone();
    const egress = manifest(resources, T.np, "gateway").spec.egress;
    expect(egress).toEqual(
      expect.arrayContaining([
        { to: [{ ipBlock: { cidr: "10.1.2.3/32" } }], ports: [{ protocol: "TCP", port: 8000 }] },
        { to: [{ ipBlock: { cidr: "fd00::7/128" } }], ports: [{ protocol: "TCP", port: 8001 }] },
      ]),
    );
    const external = { ...catalog, models: [...catalog.models, { id: "ext", category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: "https://vllm.corp.example.com" }] } }] };
    const err = await failureOf(runWithMocks(async () => (await import("./program")).program(), { config: gatewayConfig({ "gateway:catalog": JSON.stringify(external) }) }));
    expect((err as Error).message).toMatch(/gateway:extraEgress: required: .*vllm\.corp\.example\.com/);
  });

  test("the gateway of its own stack reads the serving catalog through a StackReference", async () => {
    const catalog = { models: [TEST_CATALOG.models[0]] };
    const { resources } = await runWithMocks(async () => (await import("./program")).program(), {
      config: gatewayConfig({ "gateway:catalog": undefined, "gateway:servingStack": "acme/ai-platform/serving-prod" }),
      stackOutputs: { "acme/ai-platform/serving-prod": { serving: { catalog, namespace: "models-prod" } } },
    });
    expect(parse(manifest(resources, "kubernetes:core/v1:ConfigMap", "gateway-catalog").data["catalog.yaml"])).toEqual(catalog);
    expect(manifest(resources, T.np, "gateway").spec.egress[0].to[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"]).toBe("models-prod");
    expect(named(resources, "pulumi:pulumi:StackReference", "acme/ai-platform/serving-prod")).toBeDefined();
  });

  test("the model servers' key reaches the gateway: from the serving part of the program, or the serving stack's output", async () => {
    const upstreamEnv = { name: "GATEWAY_UPSTREAM_API_KEY", valueFrom: { secretKeyRef: { name: "gateway-upstream", key: "api-key" } } };
    // One program: the serving part's RandomPassword, in a Secret of the gateway's namespace.
    const both = await run(everything());
    const secret = named(both.rs, "kubernetes:core/v1:Secret", "gateway-upstream");
    expect(isSecretValue(secret.inputs.stringData)).toBe(true);
    expect(manifest(both.rs, T.deploy, "gateway").spec.template.spec.containers[0].env).toContainEqual(upstreamEnv);
    expect(Object.keys(manifest(both.rs, T.deploy, "gateway").spec.template.metadata.annotations)).toContain("checksum/upstream-api-key");
    // Two stacks: the serving stack's `upstreamApiKey` output, still a secret.
    const catalog = { models: [TEST_CATALOG.models[0]] };
    const { resources } = await runWithMocks(async () => (await import("./program")).program(), {
      config: gatewayConfig({ "gateway:catalog": undefined, "gateway:servingStack": "acme/ai-platform/serving-prod" }),
      stackOutputs: { "acme/ai-platform/serving-prod": { serving: { catalog, namespace: "models-prod", upstreamApiKey: "k-0123456789abcdef0123" } } },
    });
    const fromStack = named(resources, "kubernetes:core/v1:Secret", "gateway-upstream");
    expect(isSecretValue(fromStack.inputs.stringData)).toBe(true);
    expect(JSON.stringify(resources.map(toManifest))).not.toContain("k-0123456789abcdef0123");
    expect(manifest(resources, T.deploy, "gateway").spec.template.spec.containers[0].env).toContainEqual(upstreamEnv);
  });

  test("gateway:upstreamApiKey is for a standalone gateway only, and must be a secret", async () => {
    const standalone = await runWithMocks(async () => (await import("./program")).program(), {
      config: gatewayConfig({ "gateway:upstreamApiKey": "k-standalone-0123456789" }),
      secretKeys: ["gateway:upstreamApiKey"],
    });
    expect(named(standalone.resources, "kubernetes:core/v1:Secret", "gateway-upstream")).toBeDefined();
    const both = await failureOf(runWithMocks(async () => (await import("./program")).program(), { config: { ...everything(), "gateway:upstreamApiKey": "k" }, secretKeys: [...MONITORING_SECRETS, "gateway:upstreamApiKey"] }));
    expect((both as Error).message).toContain("gateway:upstreamApiKey: comes from the serving part of this program: remove it");
    const plain = await failureOf(runWithMocks(async () => (await import("./program")).program(), { config: gatewayConfig({ "gateway:upstreamApiKey": "k-plain" }) }));
    expect((plain as Error).message).toContain("gateway:upstreamApiKey: must be stored as a secret");
  });
});

describe("the provider guard and the stack files", () => {
  test("a Kubernetes resource without a provider is refused, whatever the stack file says", async () => {
    const { requireStackProvider } = await import("../infra/platform/provider-guard");
    const args = (opts: Record<string, unknown>, type = "kubernetes:core/v1:ConfigMap") => ({ type, name: "x", custom: true, props: {}, opts });
    expect(() => requireStackProvider(args({}))).toThrow("kubernetes:core/v1:ConfigMap::x has no Kubernetes provider");
    expect(requireStackProvider(args({ provider: {} }))).toBeUndefined();
    expect(requireStackProvider(args({ providers: { kubernetes: {} } }, "kubernetes:helm.sh/v4:Chart"))).toBeUndefined();
    expect(requireStackProvider(args({}, "random:index/randomBytes:RandomBytes"))).toBeUndefined();
  });

  test("the entry point registers the guard before the program declares anything", async () => {
    const registered: unknown[] = [];
    const pulumi = await import("@pulumi/pulumi");
    const spy = jest.spyOn(pulumi.runtime, "registerResourceTransform").mockImplementation((t) => void registered.push(t));
    try {
      // The entry point is an async function (module.exports): the language host calls it, and so does this test.
      // The entry point requires the chart archives: any existing file stands in for them (the metrics chart, which
      // has no path key, is left out), so the test needs no pulled charts.
      const archives = Object.fromEntries(["monitoring:logstoreChartPath", "monitoring:viewerChartPath", "monitoring:collectorChartPath", "serving:modelServiceChartPath", "serving:inferencePoolChartPath"].map((k) => [k, __filename]));
      const config = everything({ "monitoring:components": JSON.stringify(["logstore", "viewer", "collector", "dashboards"]), ...archives });
      await runWithMocks(async () => (await import("./index")).default(), { config, secretKeys: MONITORING_SECRETS });
    } finally {
      spy.mockRestore();
    }
    const { requireStackProvider } = await import("../infra/platform/provider-guard");
    expect(registered).toEqual([requireStackProvider]);
  });

  test("every stack file in the repository disables the default Kubernetes provider and names its cluster", () => {
    const files = fs.readdirSync(ROOT).filter((f) => /^Pulumi\..+\.yaml$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const { config } = parseStackYaml(fs.readFileSync(path.join(ROOT, f), "utf8"), "ai-platform");
      expect([f, JSON.parse(config["pulumi:disable-default-providers"] ?? "[]")]).toEqual([f, expect.arrayContaining(["kubernetes"])]);
      expect([f, Boolean(config["cluster:context"] ?? config["cluster:kubeconfig"])]).toEqual([f, true]);
    }
  });
});

describe("bad stack configuration fails preview naming the key", () => {
  const preview = (config: Record<string, string>) => failureOf(runWithMocks(async () => (await import("./program")).program(), { config }));

  test("a missing kube context", async () => {
    const err = await preview(everything({ "cluster:context": undefined }));
    expect((err as Error).message).toContain("cluster:context: required: the kube context of the cluster this stack changes");
  });

  test("unknown and invalid cluster keys, together with other parts' problems", async () => {
    const err = await preview(everything({ "cluster:bogus": "1", "cluster:dns": "coredns", "cluster:crds": JSON.stringify({ gatewayApi: "maybe" }), "gateway:replicas": "0" }));
    const message = (err as Error).message;
    for (const key of ["cluster:bogus: unknown key", "cluster:dns: must be one of kube-dns, openshift", "cluster:crds [gatewayApi]", "gateway:replicas"]) expect(message).toContain(key);
  });

  test("a namespace nobody reads (a typo) and a secret stored in plain text", async () => {
    const err = await failureOf(
      runWithMocks(async () => (await import("./program")).program(), { config: { ...everything(), "gatway:replicas": "3" }, secretKeys: ["monitoring:viewerAdminPassword"] }),
    );
    const message = (err as Error).message;
    expect(message).toContain('gatway:replicas: unknown configuration namespace "gatway"');
    expect(message).toContain("monitoring:s3Password: must be stored as a secret (pulumi config set --secret monitoring:s3Password …)");
  });

  test("a gateway whose catalog cannot be allowed by the NetworkPolicy fails before anything is declared", async () => {
    const catalog = { models: [{ id: "ext", category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: "https://vllm.example.com" }] } }] };
    const { resources, outputs } = await runWithMocks(
      async () => (await import("./program")).program(),
      { config: gatewayConfig({ "gateway:catalog": JSON.stringify(catalog) }) },
    ).catch((e: Error) => ({ resources: [] as ResourceRecord[], outputs: e }));
    expect((outputs as Error).message).toContain("gateway:extraEgress: required");
    expect(resources).toEqual([]);
  });

  test("nothing is declared when the configuration is bad", async () => {
    const resources: ResourceRecord[] = [];
    await runWithMocks(
      async () => {
        try {
          (await import("./program")).program();
        } catch {
          /* expected */
        }
      },
      { config: everything({ "cluster:context": undefined }) },
    ).then((r) => resources.push(...r.resources));
    expect(resources).toEqual([]);
  });
});

function isMonitoring(r: ResourceRecord): boolean {
  if (r.type === CHART) return ["logstore", "viewer", "collector", "metrics"].includes(r.name);
  const ns = (r.inputs.metadata as { namespace?: string } | undefined)?.namespace;
  return ns === "monitoring" || r.name === "monitoring";
}
