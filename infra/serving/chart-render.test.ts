// The serving releases as the real pinned charts render them (a real `helm template`), with exactly the values the
// program passes and the transforms it applies (rollout strategy, picker pod metadata), for the three sizes users run:
// one GPU (qwen3-8b), four GPUs in tensor parallel (llama-3.3-70b) and an embedder on a GPU share (bge-small-en).
// Needs the archives in charts/ or $AI_PLATFORM_CHARTS_DIR; without them the suite says so and skips.
import { eppPodLabels, eppPodMetadataTransform, eppScrapeAnnotations, modelServerScrapeAnnotations, withEppPodMetadata } from "../monitoring/serving-observability";
import { describeWithCharts, helmTemplate, type Manifest } from "../platform/helm";
import { validateKubernetesObject } from "../platform/k8s-validate";
import { PINNED_CHARTS } from "./constants";
import { loadModelFolders } from "./model-folders";
import { buildModelServerPolicy, EPP_POD_LABEL, modelServerSelector } from "./network";
import { modelServerBudgets, pickerBudget } from "./disruption";
import { planModels, type PlannedModel } from "./plan";
import { planRollouts, withRollout } from "./rollout";
import { decodeDeploymentName, isScaledDeployment } from "./scaled-object";
import { DEFAULT_STARTUP_TIMEOUT, startupTimeoutSeconds } from "./startup";
import { LEAVE_DELAY_SECONDS } from "./constants";
import { API_KEY_SECRET, buildInferencePoolValues, DRAIN_SCRIPT, platformPodLabels, poolReleaseName, serverValuesFor, TERMINATION_MARGIN_SECONDS } from "./values";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const D = "ai-platform.io";
const NS = "app-serving";
const REFS = ["generative/qwen3-8b", "generative/llama-3.3-70b", "embedder/bge-small-en"];
const CHARTS = [
  { component: "llm-d-modelservice", version: PINNED_CHARTS["llm-d-modelservice"].version },
  { component: "inferencepool", version: PINNED_CHARTS.inferencepool.version },
];

describeWithCharts("serving charts rendered by a real helm with the program's values", CHARTS, ({ helm, archive }) => {
  const planned = planModels(REFS, {}, loadModelFolders(), "deployments/models");
  // The GPUs exactly as requested: no spare for a surge anywhere.
  const rollouts = planRollouts(planned, { capacity: { default: 5, "gpu-small": 1 }, cacheAccessMode: "ReadWriteMany", cached: new Set(REFS) });
  const rendered = new Map<string, { server: Manifest[]; pool: Manifest[]; model: PlannedModel }>();

  beforeAll(() => {
    for (const model of planned) {
      const { def } = model;
      const routing = def.serverValues.routing ?? {};
      const values = serverValuesFor(model, {
        labelDomain: D,
        startupTimeout: DEFAULT_STARTUP_TIMEOUT,
        awaitModelServers: true,
        drainSeconds: 120,
        podAnnotations: () => ({ decode: modelServerScrapeAnnotations(routing, "decode"), prefill: modelServerScrapeAnnotations(routing, "prefill") }),
      });
      // The rollout transform (served-model.ts) applied to what the chart renders, as the engine applies it.
      const server = helmTemplate(helm, archive("llm-d-modelservice"), `ms-${def.slug}`, NS, values).map((o) => withRollout(o, rollouts.get(def.ref)!));
      const release = poolReleaseName(def.slug);
      const pool = helmTemplate(helm, archive("inferencepool"), release, NS, buildInferencePoolValues(def, { labelDomain: D, namespace: NS, clusterDomain: "cluster.local", eppMetricsAuth: false })).map((o) =>
        withEppPodMetadata(o, release, { labels: eppPodLabels(D, def), annotations: eppScrapeAnnotations() }),
      );
      rendered.set(def.slug, { server, pool, model });
    }
  });

  const deployment = (slug: string): Obj => {
    const d = rendered.get(slug)!.server.filter((o) => o.kind === "Deployment");
    expect(d).toHaveLength(1);
    return d[0] as Obj;
  };
  const vllm = (slug: string): Obj => deployment(slug).spec.template.spec.containers[0];
  const env = (c: Obj): Record<string, unknown> => Object.fromEntries((c.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));

  test("every rendered Deployment is a valid apps/v1 Deployment", () => {
    for (const slug of rendered.keys()) {
      expect(() => validateKubernetesObject(deployment(slug))).not.toThrow();
      expect(() => validateKubernetesObject(rendered.get(slug)!.pool.find((o) => o.kind === "Deployment") as Obj)).not.toThrow();
    }
  });

  test.each([
    ["qwen3-8b", "Qwen/Qwen3-8B"],
    ["llama-3-3-70b", "meta-llama/Llama-3.3-70B-Instruct"],
    ["bge-small-en", "BAAI/bge-small-en-v1.5"],
  ])("%s: the persistent weights volume, read-only, loaded offline by its Hub name", (slug, repo) => {
    const pod = deployment(slug).spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: "model-storage", persistentVolumeClaim: { claimName: `weights-${slug}`, readOnly: true } });
    expect(pod.volumes.some((v: Obj) => v.emptyDir && v.name === "model-storage")).toBe(false);
    expect(vllm(slug).volumeMounts).toContainEqual({ name: "model-storage", mountPath: "/model-cache" });
    expect(env(vllm(slug))).toMatchObject({ HF_HUB_CACHE: "/model-cache/hub", HF_HUB_OFFLINE: "1", VLLM_API_KEY: { secretKeyRef: { name: API_KEY_SECRET.name, key: API_KEY_SECRET.key } } });
    expect(vllm(slug).command).toEqual(["vllm", "serve"]);
    expect(vllm(slug).args[0]).toBe(repo);
  });

  test("--max-model-len reaches vllm serve for all three; tensor parallel 4 and 4 GPUs for the 70B only", () => {
    expect(vllm("qwen3-8b").args).toContain("--max-model-len=16384");
    expect(vllm("llama-3-3-70b").args).toContain("--max-model-len=32768");
    expect(vllm("bge-small-en").args).toEqual(expect.arrayContaining(["--max-model-len=512", "--runner=pooling"]));
    const args = vllm("llama-3-3-70b").args as string[];
    expect(args.slice(args.indexOf("--tensor-parallel-size"), args.indexOf("--tensor-parallel-size") + 2)).toEqual(["--tensor-parallel-size", "4"]);
    expect(vllm("llama-3-3-70b").resources.limits["nvidia.com/gpu"]).toBe("4");
    expect(vllm("qwen3-8b").args).not.toContain("--tensor-parallel-size");
    // The embedder asks for a time-sliced share, not a whole GPU, and tolerates both taints.
    expect(vllm("bge-small-en").resources.limits).toMatchObject({ "nvidia.com/gpu.shared": "1" });
    expect(vllm("bge-small-en").resources.limits["nvidia.com/gpu"]).toBeUndefined();
    expect(deployment("bge-small-en").spec.template.spec.tolerations.map((t: Obj) => t.key)).toEqual(["nvidia.com/gpu.shared", "nvidia.com/gpu"]);
  });

  test("/dev/shm for NCCL: 32 GiB in memory on the 70B, mounted in vLLM", () => {
    expect(deployment("llama-3-3-70b").spec.template.spec.volumes).toContainEqual({ name: "shm", emptyDir: { medium: "Memory", sizeLimit: "32Gi" } });
    expect(vllm("llama-3-3-70b").volumeMounts).toContainEqual({ name: "shm", mountPath: "/dev/shm" });
  });

  test("Recreate on pools without a spare GPU (the chart has no key: the platform's transform)", () => {
    for (const slug of rendered.keys()) expect(deployment(slug).spec.strategy).toEqual({ type: "Recreate" });
  });

  test("probe budgets scale with the weights; the same budget `pulumi up` waits", () => {
    const budget = (slug: string) => {
      const p = vllm(slug).startupProbe;
      return p.failureThreshold * p.periodSeconds;
    };
    for (const slug of rendered.keys()) {
      const { model } = rendered.get(slug)!;
      expect(budget(slug)).toBeGreaterThanOrEqual(startupTimeoutSeconds(model.def.weightsGiB));
      expect(budget(slug)).toBeLessThan(startupTimeoutSeconds(model.def.weightsGiB) + 10);
      expect(deployment(slug).metadata.annotations["pulumi.com/timeoutSeconds"]).toBe(String(startupTimeoutSeconds(model.def.weightsGiB)));
    }
    expect(budget("llama-3-3-70b")).toBeGreaterThan(budget("qwen3-8b"));
    expect(budget("qwen3-8b")).toBeGreaterThan(budget("bge-small-en"));
  });

  test("stopping drains: the preStop hook keeps serving for the leave delay, then drains; a grace period past both (300 s for the 70B from its model.yaml)", () => {
    expect(vllm("qwen3-8b").lifecycle.preStop.exec.command).toEqual(["python3", "-c", DRAIN_SCRIPT, "8000", "120", String(LEAVE_DELAY_SECONDS)]);
    expect(deployment("qwen3-8b").spec.template.spec.terminationGracePeriodSeconds).toBe(LEAVE_DELAY_SECONDS + 120 + TERMINATION_MARGIN_SECONDS);
    expect(deployment("llama-3-3-70b").spec.template.spec.terminationGracePeriodSeconds).toBe(LEAVE_DELAY_SECONDS + 300 + TERMINATION_MARGIN_SECONDS);
    expect(vllm("qwen3-8b").securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
  });

  test("the metrics server's annotations on the model servers and the pickers; the picker serves metrics without a token", () => {
    expect(deployment("qwen3-8b").spec.template.metadata.annotations).toEqual({ "prometheus.io/scrape": "true", "prometheus.io/port": "8000", "prometheus.io/path": "/metrics" });
    const epp = rendered.get("qwen3-8b")!.pool.find((o) => o.kind === "Deployment") as Obj;
    expect(epp.spec.template.metadata.annotations).toEqual({ "prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics" });
    expect(epp.spec.template.spec.containers[0].args).toContain("--metrics-endpoint-auth=false");
  });

  test("the NetworkPolicy selects the rendered model-server pods, not the pickers, and admits the pickers by their rendered label", () => {
    const policy = buildModelServerPolicy({ namespace: NS, labelDomain: D, gateway: { namespace: "ai-gateway" }, monitoringNamespace: "monitoring", pools: [...rendered.keys()].map(poolReleaseName) }) as Obj;
    const selector = modelServerSelector(D);
    const selects = (labels: Record<string, string>) =>
      Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v) && selector.matchExpressions.every((e) => e.key in labels);
    for (const slug of rendered.keys()) {
      expect([slug, selects(deployment(slug).spec.template.metadata.labels)]).toEqual([slug, true]);
      const epp = rendered.get(slug)!.pool.find((o) => o.kind === "Deployment") as Obj;
      const eppLabels = epp.spec.template.metadata.labels as Record<string, string>;
      expect([slug, selects(eppLabels)]).toEqual([slug, false]);
      expect(policy.spec.ingress[0].from).toContainEqual({ podSelector: { matchLabels: { [EPP_POD_LABEL]: eppLabels[EPP_POD_LABEL] } } });
    }
  });

  test("each disruption budget selects its role's rendered pods or its picker's, and not the weights download's", () => {
    const selects = (budget: { spec: { selector: { matchLabels: Record<string, string> } } }, labels: Record<string, string>) =>
      Object.entries(budget.spec.selector.matchLabels).every(([k, v]) => labels[k] === v);
    for (const [slug, { model, pool }] of rendered) {
      const [server, ...others] = modelServerBudgets(model.def, D);
      const picker = pickerBudget(model.def, D);
      expect(others).toEqual([]);
      const serverPod = deployment(slug).spec.template.metadata.labels;
      const pickerPod = (pool.find((o) => o.kind === "Deployment") as Obj).spec.template.metadata.labels;
      const downloadPod = { ...platformPodLabels(model.def, D), "app.kubernetes.io/component": "weights-download" };
      expect([slug, selects(server!, serverPod), selects(server!, pickerPod), selects(server!, downloadPod)]).toEqual([slug, true, false, false]);
      expect([slug, selects(picker, pickerPod), selects(picker, serverPod), selects(picker, downloadPod)]).toEqual([slug, true, false, false]);
    }
    // The longest slug: the picker chart cuts the release name to 40 characters before `-epp`.
    const qwen = rendered.get("qwen3-8b")!.model.def;
    const long = { ...qwen, slug: "a234567890b234567890c234567890d234567890" };
    const release = poolReleaseName(long.slug);
    const epp = helmTemplate(helm, archive("inferencepool"), release, NS, buildInferencePoolValues(long, { labelDomain: D, namespace: NS, clusterDomain: "cluster.local" })).find((o) => o.kind === "Deployment") as Obj;
    expect(selects(pickerBudget(long, D), epp.spec.template.metadata.labels)).toBe(true);
    expect(pickerBudget(long, D).name).toBe(epp.metadata.name);
  });

  test("the engine-side transforms are what the components register", () => {
    const t = eppPodMetadataTransform("gaie-x", { labels: { a: "b" } });
    const epp = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "gaie-x-epp" }, spec: { template: { metadata: { labels: { inferencepool: "gaie-x-epp" } } } } };
    const out = t({ type: "kubernetes:apps/v1:Deployment", name: "x", props: epp, opts: {} } as never) as { props: Obj } | undefined;
    expect(out?.props.spec.template.metadata.labels).toEqual({ inferencepool: "gaie-x-epp", a: "b" });
  });

  test("the simulator's server (no vLLM, no python) leaves by Kubernetes' sleep action; its Deployment is valid", () => {
    const sim = planModels(["generative/sim-chat"], {}, loadModelFolders(), "deployments/models")[0] as PlannedModel;
    const values = serverValuesFor(sim, { labelDomain: D, startupTimeout: DEFAULT_STARTUP_TIMEOUT, awaitModelServers: true, drainSeconds: 120 });
    const [d] = helmTemplate(helm, archive("llm-d-modelservice"), "ms-sim-chat", NS, values).filter((o) => o.kind === "Deployment") as Obj[];
    expect(d!.spec.template.spec.containers[0].lifecycle).toEqual({ preStop: { sleep: { seconds: LEAVE_DELAY_SECONDS } } });
    expect(d!.spec.template.spec.terminationGracePeriodSeconds).toBe(LEAVE_DELAY_SECONDS + 120 + TERMINATION_MARGIN_SECONDS);
    expect(() => validateKubernetesObject(d!)).not.toThrow();
  });

  test("an autoscaled model: the chart takes its values (the block is kept out), renders minReplicas, and names the decode Deployment as the ScaledObject targets it", () => {
    const qwen = planModels(["generative/qwen3-8b"], {}, loadModelFolders(), "deployments/models", {}, { "generative/qwen3-8b": { minReplicas: 0, maxReplicas: 2 } })[0] as PlannedModel;
    // The longest slug a folder may have: the chart cuts its fullname at 55 characters.
    const slug = "a234567890b234567890c234567890d234567890";
    const long = { ...qwen, def: { ...qwen.def, slug } };
    for (const m of [qwen, long]) {
      const values = serverValuesFor(m, { labelDomain: D, startupTimeout: DEFAULT_STARTUP_TIMEOUT, awaitModelServers: true, drainSeconds: 120 });
      const objects = helmTemplate(helm, archive("llm-d-modelservice"), `ms-${m.def.slug}`, NS, values);
      const decode = objects.filter((o) => o.kind === "Deployment") as Obj[];
      expect(decode.map((d) => [d.metadata.name, d.spec.replicas])).toEqual([[decodeDeploymentName(m.def), 0]]);
      expect(decode.filter((d) => isScaledDeployment(d, m.def))).toHaveLength(1);
    }
  });
});
