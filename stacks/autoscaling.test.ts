// Model autoscaling in the whole program on Pulumi's mocks: KEDA installed (`cluster:keda: install`) or checked for
// (`assume`), a ScaledObject per autoscaled model, the decode Deployment's replicas left to KEDA; then the KEDA chart
// and the modelservice chart rendered by a real helm with the program's values and transforms.
import { KEDA_CHART } from "../infra/autoscaling/constants";
import { ASSUMED_APISERVICE_NAME } from "../infra/autoscaling/keda";
import { WEBHOOK_CLUSTER_ROLE } from "../infra/autoscaling/values";
import { ConfigError } from "../infra/platform/config";
import { validateAnyObject } from "../infra/platform/crd-validate";
import { describeWithCharts, helmTemplate, type Manifest } from "../infra/platform/helm";
import { isKubernetesObject, toManifest } from "../infra/platform/k8s-validate";
import { allContainers, podOwners } from "../infra/platform/manifests";
import { type MockRunOptions, type ResourceRecord, revealSecrets, runWithMocks } from "../infra/platform/mocks";
import { PINNED_CHARTS as SERVING_CHARTS } from "../infra/serving/constants";
import { servingConfig } from "../infra/serving/testing";
import { CHART_TYPE, ignoredValues } from "./monitoring-charts";
import type { ServingOutputs } from "./serving";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const QWEN = "generative/qwen3-8b";
const SO = "kubernetes:keda.sh/v1alpha1:ScaledObject";
const CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile";
const CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
const APISERVICE = "kubernetes:apiregistration.k8s.io/v1:APIService";
const NS = "kubernetes:core/v1:Namespace";

/** Room for qwen3-8b at maxReplicas 2 on the on-prem GPUs. */
const autoscaled = (keda: "install" | "assume", a: object = { minReplicas: 0, maxReplicas: 2 }) => ({
  "cluster:keda": keda,
  "serving:autoscaling": JSON.stringify({ [QWEN]: a }),
  "serving:gpuCapacity": JSON.stringify({ default: 2, "gpu-small": 1 }),
});
const run = (overrides: Record<string, string | undefined>, extra: Partial<MockRunOptions> = {}) =>
  runWithMocks(async () => (await import("./program")).program(), { config: servingConfig(overrides), ...extra });
const failureOf = (p: Promise<unknown>) => p.then(() => undefined, (e: Error) => e);
const find = (rs: ResourceRecord[], type: string, name: string) => {
  const r = rs.find((x) => x.type === type && x.name === name);
  if (!r) throw new Error(`no ${type} ${name}; have ${rs.map((x) => `${x.type} ${x.name}`).join(", ")}`);
  return r;
};
/** The external metrics APIService as a cluster running KEDA (or another adapter) holds it. */
const apiService = (service: string) => ({ "v1beta1.external.metrics.k8s.io": { spec: { service: { name: service, namespace: "keda", port: 443 }, group: "external.metrics.k8s.io", version: "v1beta1" } } });

describe("cluster:keda install, one model autoscaled", () => {
  let rs: ResourceRecord[];
  let out: ServingOutputs;
  beforeAll(async () => {
    const r = await run(autoscaled("install"));
    rs = r.resources;
    out = (r.outputs as { serving: ServingOutputs }).serving;
  });

  test("KEDA's namespace (kept), its chart from charts/, its CRDs from the release asset (kept): what the ScaledObject waits for", () => {
    expect(find(rs, NS, "keda").retainOnDelete).toBe(true);
    const chart = find(rs, CHART_TYPE, "keda");
    expect(String(chart.inputs.chart)).toMatch(/\/charts\/keda-2\.20\.2\.tgz$/);
    expect([chart.inputs.name, chart.inputs.namespace, chart.transforms]).toEqual(["keda", "keda", 1]);
    const crds = find(rs, CONFIG_FILE, "keda-crds");
    expect([crds.inputs.file, crds.retainOnDelete]).toEqual(["https://github.com/kedacore/keda/releases/download/v2.20.2/keda-2.20.2-crds.yaml", true]);
    expect(chart.dependsOn).toContain("keda-crds");
    const so = find(rs, SO, "model-qwen3-8b");
    expect(so.dependsOn).toEqual(expect.arrayContaining(["ms-qwen3-8b", "keda", "keda-crds"]));
  });

  test("one ScaledObject, for the autoscaled model only, valid against KEDA's CRD", () => {
    expect(rs.filter((r) => r.type === SO).map((r) => r.name)).toEqual(["model-qwen3-8b"]);
    for (const r of rs.filter((x) => isKubernetesObject(x) && !x.read)) expect(() => validateAnyObject(toManifest(r))).not.toThrow();
    const so = toManifest(find(rs, SO, "model-qwen3-8b")) as Obj;
    expect(so.spec.triggers.map((t: Obj) => [t.name, t.metadata.serverAddress])).toEqual([
      ["vllm-waiting", "http://metrics-server.monitoring.svc.cluster.local:80"],
      ["gateway-demand", "http://metrics-server.monitoring.svc.cluster.local:80"],
    ]);
  });

  test("the model is created at minReplicas; the catalog holds its requests; GPUs reported at both counts", () => {
    expect((find(rs, CHART_TYPE, "ms-qwen3-8b").inputs.values as Obj).decode.replicas).toBe(0);
    expect((find(rs, CHART_TYPE, "ms-qwen3-8b").inputs.values as Obj).decode.autoscaling).toBeUndefined();
    expect(out.catalog.models.find((m) => m.id.includes("Qwen3-8B") || m.id.includes("qwen3-8b"))?.wake).toEqual({ timeoutMs: 600_000, maxHeld: 64 });
    expect(out.gpus.default).toEqual({ requested: 2, base: 0, capacity: 2 });
  });

  test("a node group that cannot hold maxReplicas: the preview says so, and that cluster autoscaling must add the nodes", async () => {
    const warn = jest.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      await run({ ...autoscaled("install"), "serving:gpuCapacity": JSON.stringify({ default: 1, "gpu-small": 1 }) });
      expect(warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes("GPU preflight"))).toEqual([
          expect.stringContaining('node group "default": at maxReplicas the models request 2 GPUs > capacity 1 (generative/qwen3-8b up to 2 replicas × 1 GPU = 2): the cluster cannot hold them, so cluster autoscaling must add the nodes'),
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});

describe("cluster:keda assume", () => {
  test("reads the CRD and the external metrics APIService, and installs nothing", async () => {
    const { resources } = await run(autoscaled("assume"), { existingObjects: apiService("keda-operator-metrics-apiserver") });
    expect(resources.filter((r) => r.read).map((r) => `${r.type} ${r.name}`)).toEqual(
      expect.arrayContaining([`${CRD} cluster:keda:scaledobjects.keda.sh`, `${APISERVICE} ${ASSUMED_APISERVICE_NAME}`]),
    );
    expect(resources.filter((r) => r.type === CHART_TYPE && r.name === "keda")).toEqual([]);
    expect(find(resources, SO, "model-qwen3-8b").dependsOn).toEqual(expect.arrayContaining(["cluster:keda:scaledobjects.keda.sh", ASSUMED_APISERVICE_NAME]));
  });

  test("a missing CRD fails the preview naming cluster:keda", async () => {
    const err = await failureOf(run(autoscaled("assume"), { absentObjects: ["scaledobjects.keda.sh"], existingObjects: apiService("keda-operator-metrics-apiserver") }));
    expect(String(err)).toContain("cluster:keda:scaledobjects.keda.sh");
  });

  test("another adapter behind the external metrics API fails the preview naming cluster:keda", async () => {
    const err = await failureOf(run(autoscaled("assume"), { existingObjects: apiService("prometheus-adapter") }));
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      "cluster:keda: assume, but v1beta1.external.metrics.k8s.io is served by keda/prometheus-adapter, not KEDA: one external metrics adapter per cluster, and the autoscaled models need KEDA's",
    ]);
  });

  test("without an autoscaled model, KEDA is not read at all", async () => {
    const { resources } = await run({ "cluster:keda": "assume" });
    expect(resources.filter((r) => r.name.startsWith("cluster:keda"))).toEqual([]);
  });
});

describe("refused configurations name the key", () => {
  test("autoscaling without maxReplicas; beside serving:replicas", async () => {
    const err = await failureOf(run(autoscaled("install", { minReplicas: 0 })));
    expect(String(err)).toMatch(/serving:autoscaling\.generative\/qwen3-8b \(over .*decode\.autoscaling\): maxReplicas: /);
    const both = await failureOf(run({ ...autoscaled("install"), "serving:replicas": JSON.stringify({ [QWEN]: 1 }) }));
    expect((both as ConfigError).problems).toContain(`serving:replicas [${QWEN}]: must be absent: serving:autoscaling sets this model's replicas (minReplicas, maxReplicas)`);
  });

  test("a KEDA chart archive that is not there fails the preview naming the key", async () => {
    const config = { ...autoscaled("install"), "cluster:kedaChartPath": "/nowhere/keda-2.20.2.tgz" };
    const err = await failureOf(runWithMocks(async () => (await import("./program")).program({ requireChartArchives: true }), { config: servingConfig(config) }));
    expect((err as ConfigError).problems).toContain("cluster:kedaChartPath: chart archive /nowhere/keda-2.20.2.tgz not found");
  });

  test("cluster:keda takes install or assume", async () => {
    const err = await failureOf(run({ "cluster:keda": "helm" }));
    expect((err as ConfigError).problems[0]).toMatch(/^cluster:keda: /);
  });
});

describeWithCharts(
  "KEDA and the model server rendered by a real helm with the program's values and transforms",
  [
    { component: KEDA_CHART.component, version: KEDA_CHART.version },
    { component: "llm-d-modelservice", version: SERVING_CHARTS["llm-d-modelservice"].version },
  ],
  ({ helm, archive }) => {
    let keda: Manifest[];
    let kedaValues: Record<string, unknown>;
    /** The decode Deployment and the options the engine-side transforms give each rendered object. */
    let serverOptions: { obj: Manifest; ignoreChanges: string[] }[];

    beforeAll(async () => {
      const { resources, transforms } = await run(autoscaled("install"));
      const chart = find(resources, CHART_TYPE, "keda");
      kedaValues = revealSecrets(chart.inputs.values) as Record<string, unknown>;
      const apply = async (objects: Manifest[], r: ResourceRecord) => {
        const results: { obj: Manifest; ignoreChanges: string[] }[] = [];
        for (const obj of objects) {
          let props = obj as unknown as Record<string, unknown>;
          let opts: { ignoreChanges?: string[] } = {};
          for (const t of transforms.get(`${r.type}::${r.name}`) ?? []) {
            const type = `kubernetes:${obj.apiVersion.includes("/") ? obj.apiVersion : `core/${obj.apiVersion}`}:${obj.kind}`;
            const result = await t({ type, name: obj.metadata.name, props, opts, custom: true });
            if (result) ({ props, opts } = { props: result.props, opts: result.opts as typeof opts });
          }
          results.push({ obj: props as unknown as Manifest, ignoreChanges: opts.ignoreChanges ?? [] });
        }
        return results;
      };
      keda = (await apply(helmTemplate(helm, archive("keda"), "keda", "keda", kedaValues), chart)).map((x) => x.obj);
      const server = find(resources, CHART_TYPE, "ms-qwen3-8b");
      serverOptions = await apply(helmTemplate(helm, archive("llm-d-modelservice"), "ms-qwen3-8b", "app-serving", revealSecrets(server.inputs.values)), server);
    });

    const of = (kind: string) => keda.filter((o) => o.kind === kind) as Obj[];

    test("no replicas fight: only the decode Deployment KEDA scales has ignoreChanges on spec.replicas", () => {
      const ignoring = serverOptions.filter((x) => x.ignoreChanges.length > 0);
      expect(ignoring.map((x) => [x.obj.kind, x.obj.metadata.name, x.ignoreChanges])).toEqual([["Deployment", "ms-qwen3-8b-llm-d-modelservice-decode", ["spec.replicas"]]]);
    });

    test("the operator is bound in the serving namespace and its own only; no ClusterRoleBinding for it", () => {
      expect(of("ClusterRoleBinding").map((b) => b.metadata.name).sort()).toEqual([
        "keda-operator-hpa-controller-external-metrics",
        "keda-operator-minimal",
        "keda-operator-system-auth-delegator",
        "keda-operator-webhook",
      ]);
      expect(of("RoleBinding").filter((b) => b.roleRef.name === "keda-operator").map((b) => b.metadata.namespace).sort()).toEqual(["app-serving", "keda"]);
    });

    test("no rule on every group or resource, no Secret read cluster-wide, the webhook's orphaned role empty", () => {
      for (const role of of("ClusterRole")) {
        for (const rule of (role.rules ?? []) as Obj[]) {
          expect({ role: role.metadata.name, wildcard: [...(rule.apiGroups ?? []), ...(rule.resources ?? [])].some((x: string) => x.includes("*")) }).toEqual({ role: role.metadata.name, wildcard: false });
          expect({ role: role.metadata.name, secrets: (rule.resources ?? []).includes("secrets") }).toEqual({ role: role.metadata.name, secrets: false });
        }
      }
      const webhookRole = of("ClusterRole").find((r) => r.metadata.name === WEBHOOK_CLUSTER_ROLE);
      expect([webhookRole?.metadata.name, webhookRole?.rules]).toEqual([WEBHOOK_CLUSTER_ROLE, undefined]);
      expect(of("ServiceAccount").map((s) => s.metadata.name).sort()).toEqual(["keda-metrics-server", "keda-operator"]);
    });

    test("no webhook, no CRDs (the program's CRD set has them); the two images pinned, pulled only when absent", () => {
      expect([...of("ValidatingWebhookConfiguration"), ...of("CustomResourceDefinition")]).toEqual([]);
      const images = podOwners(keda).flatMap((p) => allContainers(p).map((c) => [p.name, c.image, (c as Obj).imagePullPolicy]));
      expect(images.sort()).toEqual([
        ["keda-operator", "ghcr.io/kedacore/keda:2.20.2", "IfNotPresent"],
        ["keda-operator-metrics-apiserver", "ghcr.io/kedacore/keda-metrics-apiserver:2.20.2", "IfNotPresent"],
      ]);
      for (const d of of("Deployment")) {
        const env = Object.fromEntries(((d.spec.template.spec.containers[0].env ?? []) as Obj[]).map((e) => [e.name, e.value]));
        expect([d.metadata.name, env.WATCH_NAMESPACE, env.KEDA_RESTRICT_SECRET_ACCESS]).toEqual([d.metadata.name, "app-serving", "true"]);
      }
    });

    test("every container non-root, read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp", () => {
      for (const p of podOwners(keda)) {
        for (const c of allContainers(p)) {
          const sc = { ...(p.spec.securityContext ?? {}), ...(c.securityContext ?? {}) } as Obj;
          expect({ c: c.name, nonRoot: sc.runAsNonRoot, ro: sc.readOnlyRootFilesystem, esc: sc.allowPrivilegeEscalation, drop: sc.capabilities?.drop, seccomp: sc.seccompProfile?.type }).toEqual({
            c: c.name,
            nonRoot: true,
            ro: true,
            esc: false,
            drop: ["ALL"],
            seccomp: "RuntimeDefault",
          });
        }
      }
    });

    test("the NetworkPolicies select KEDA's rendered pods and admit only their real ports", async () => {
      const { resources } = await run(autoscaled("install"));
      const policies = resources.filter((r) => r.type === "kubernetes:networking.k8s.io/v1:NetworkPolicy" && String(r.name).startsWith("keda")).map((r) => toManifest(r) as Obj);
      expect(policies.map((p) => p.metadata.name).sort()).toEqual(["keda-operator", "keda-operator-metrics-apiserver"]);
      for (const p of policies) {
        const pods = podOwners(keda).filter((o) => Object.entries(p.spec.podSelector.matchLabels as Record<string, string>).every(([k, v]) => o.metadata.labels?.[k] === v));
        expect([p.metadata.name, pods.map((o) => o.name)]).toEqual([p.metadata.name, [p.metadata.name]]);
        const ports = new Set(allContainers(pods[0]!).flatMap((c) => ((c as Obj).ports ?? []).map((x: Obj) => x.containerPort)));
        for (const rule of p.spec.ingress as Obj[]) for (const port of rule.ports as Obj[]) expect([p.metadata.name, ports.has(port.port)]).toEqual([p.metadata.name, true]);
      }
      // The metrics server reaches the operator's gRPC port; the metrics server's namespace, its metrics port.
      const operator = policies.find((p) => p.metadata.name === "keda-operator")!;
      expect(operator.spec.ingress).toEqual([
        { from: [{ podSelector: { matchLabels: { app: "keda-operator-metrics-apiserver" } } }], ports: [{ protocol: "TCP", port: 9666 }] },
        { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }], ports: [{ protocol: "TCP", port: 8080 }] },
      ]);
    });

    test("every value the program passes changes what the chart renders", () => {
      expect(ignoredValues(helm, archive("keda"), { release: "keda", values: kedaValues, objects: helmTemplate(helm, archive("keda"), "keda", "keda", kedaValues) }, "keda")).toEqual([]);
    });
  },
);
