// Model autoscaling: the block in a folder and over it in the stack, how a model is planned and counted, what the
// gateway's catalog says of it, and the ScaledObject KEDA gets (its queries evaluated by the real promtool).
import { validateAnyObject } from "../platform/crd-validate";
import { ConfigError } from "../platform/config";
import { promtool, withPromtool } from "../monitoring/promtool-testing";
import { AutoscalingSchema, DEFAULT_AUTOSCALING, mergeAutoscaling } from "./autoscaling";
import { buildCatalog } from "./catalog";
import { parseServingConfig } from "./config";
import { checkGpuCapacity, gpuHeadroomWarnings } from "./gpu-preflight";
import { loadModelFolders, type ModelDefinition } from "./model-folders";
import { planModels } from "./plan";
import { planRollouts } from "./rollout";
import { buildScaledObject, decodeDeploymentName, scalerQueries } from "./scaled-object";
import { editYaml, folderFiles, rawServing, SAMPLE_REFS, scratchModels, servingConfig } from "./testing";
import { buildModelServerValues } from "./values";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const folders = loadModelFolders();
const QWEN = "generative/qwen3-8b";
const plan = (autoscaling: Record<string, object>, replicas: Record<string, number> = {}, replaces: Record<string, string> = {}) =>
  planModels(SAMPLE_REFS, replicas, folders, "deployments/models", replaces, autoscaling);
const qwen = (models: ReturnType<typeof plan>) => models.find((m) => m.def.ref === QWEN)!;
const soArgs = { namespace: "app-serving", labelDomain: "ai-platform.io", gatewayNamespace: "ai-gateway", serverAddress: "http://metrics-server.monitoring.svc.cluster.local:80", startupBudgetSeconds: 1500 };

describe("the autoscaling block", () => {
  test("defaults: to zero when idle, one signal, a cooldown longer than a reload, the gateway holding requests", () => {
    expect(AutoscalingSchema.parse({ maxReplicas: 2 })).toEqual({
      minReplicas: 0,
      maxReplicas: 2,
      targets: { waitingPerReplica: 4 },
      activationRequests: 0,
      cooldownSeconds: DEFAULT_AUTOSCALING.cooldownSeconds,
      pollingSeconds: 15,
      scaleDownStabilizationSeconds: 600,
      wake: { timeoutSeconds: 600, maxHeld: 64 },
    });
  });

  test("the stack's fields win key by key (wake merged, targets replaced whole)", () => {
    const folder = { minReplicas: 1, maxReplicas: 4, targets: { waitingPerReplica: 2 }, wake: { timeoutSeconds: 300, maxHeld: 10 } };
    const { value } = mergeAutoscaling(folder, { maxReplicas: 3, targets: { kvCacheUsage: 0.8 }, wake: { maxHeld: 5 } });
    expect(value).toMatchObject({ minReplicas: 1, maxReplicas: 3, targets: { kvCacheUsage: 0.8 }, wake: { timeoutSeconds: 300, maxHeld: 5 } });
    expect(value?.targets.waitingPerReplica).toBeUndefined();
  });

  test("refused: min above max, no target, a cooldown that would flap, unknown fields", () => {
    expect(mergeAutoscaling({ minReplicas: 3, maxReplicas: 2 }, undefined).problems).toEqual(["minReplicas: must not exceed maxReplicas (2)"]);
    expect(mergeAutoscaling({ maxReplicas: 2, targets: {} }, undefined).problems).toEqual(["targets: name at least one target: waitingPerReplica or kvCacheUsage"]);
    expect(mergeAutoscaling({ maxReplicas: 2, cooldownSeconds: 10 }, undefined).problems[0]).toMatch(/^cooldownSeconds: /);
    expect(mergeAutoscaling(undefined, { minReplicas: 0 }).problems[0]).toMatch(/^maxReplicas: /);
    expect(mergeAutoscaling({ maxReplicas: 2, enabled: true } as never, undefined).problems[0]).toMatch(/enabled/);
  });
});

describe("serving:autoscaling and the folder's decode.autoscaling", () => {
  test("the stack key: per listed model, not beside serving:replicas, not on a model being replaced", () => {
    const parse = (o: Record<string, string>) => () => parseServingConfig(rawServing(servingConfig(o)), "ai-platform.io");
    expect(parse({ "serving:autoscaling": JSON.stringify({ [QWEN]: { maxReplicas: 2 } }) })().autoscaling).toEqual({ [QWEN]: { maxReplicas: 2 } });
    const problems = (o: Record<string, string>) => {
      try {
        parse(o)();
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ "serving:autoscaling": JSON.stringify({ "generative/nope": { maxReplicas: 2 } }) })).toEqual(["serving:autoscaling [generative/nope]: is not in serving:models"]);
    expect(problems({ "serving:autoscaling": JSON.stringify({ [QWEN]: { maxReplicas: 2 } }), "serving:replicas": JSON.stringify({ [QWEN]: 1 }) })).toEqual([
      `serving:replicas [${QWEN}]: must be absent: serving:autoscaling sets this model's replicas (minReplicas, maxReplicas)`,
    ]);
    expect(problems({ "serving:autoscaling": JSON.stringify({ [QWEN]: { minReplicas: 3, maxReplicas: 1, wake: { maxHeld: 0 } } }) })).toEqual([
      expect.stringMatching(new RegExp(`^serving:autoscaling \\[${QWEN}\\.wake\\.maxHeld\\]: `)),
      `serving:autoscaling [${QWEN}.minReplicas]: must not exceed maxReplicas (1)`,
    ]);
    expect(
      problems({ "serving:models": JSON.stringify([QWEN, "generative/sim-chat"]), "serving:autoscaling": JSON.stringify({ [QWEN]: { maxReplicas: 1 } }), "serving:replaces": JSON.stringify({ "generative/sim-chat": QWEN }) }),
    ).toContain(`serving:autoscaling [${QWEN}]: must be absent: ${QWEN} is being replaced (serving:replaces) and runs at zero`);
  });

  test("an invalid merged block names the stack key and the folder file", () => {
    expect(() => plan({ [QWEN]: { minReplicas: 0 } })).toThrow(ConfigError);
    expect(() => plan({ [QWEN]: { minReplicas: 0 } })).toThrow(/serving:autoscaling\.generative\/qwen3-8b \(over deployments\/models\/generative\/qwen3-8b\/ms-qwen3-8b\/values\.yaml decode\.autoscaling\): maxReplicas: /);
  });

  test("in a folder: parsed with its defaults, refused with the file and field named, never passed to the chart", () => {
    const { root, cleanup } = scratchModels();
    try {
      const files = folderFiles(root, QWEN, "qwen3-8b");
      editYaml(files.ms, (d) => (d.decode.autoscaling = { maxReplicas: 2, targets: { kvCacheUsage: 0.7 } }));
      const def = loadModelFolders(root).find((f) => f.ref === QWEN) as ModelDefinition;
      expect(def.serverValues.decode.autoscaling).toMatchObject({ minReplicas: 0, maxReplicas: 2, targets: { kvCacheUsage: 0.7 } });
      const [model] = planModels([QWEN], {}, [def], root);
      expect([model?.replicas, model?.maxReplicas, model?.autoscaling?.maxReplicas]).toEqual([0, 2, 2]);
      const values = buildModelServerValues(def, { labelDomain: "ai-platform.io", replicas: 0, startupBudgetSeconds: 60, drainSeconds: 30, apiKey: true }) as Obj;
      expect(values.decode.autoscaling).toBeUndefined();
      expect(values.decode.replicas).toBe(0);
      editYaml(files.ms, (d) => (d.decode.autoscaling = { minReplicas: 5, maxReplicas: 2 }));
      expect(() => loadModelFolders(root)).toThrow(/ms-qwen3-8b\/values\.yaml: decode\.autoscaling\.minReplicas: must not exceed maxReplicas \(2\)/);
    } finally {
      cleanup();
    }
  });

  test("a model with prefill replicas is refused (the autoscaler moves decode only)", () => {
    const qwenDef = folders.find((f) => f.ref === QWEN) as ModelDefinition;
    const withPrefill = { ...qwenDef, gpus: { ...qwenDef.gpus, prefillReplicas: 1, perPrefillReplica: 1 } };
    expect(() => planModels([QWEN], {}, [withPrefill], "deployments/models", {}, { [QWEN]: { maxReplicas: 2 } })).toThrow(/autoscaling a model with prefill replicas is not supported/);
  });
});

describe("planning an autoscaled model", () => {
  test("created at minReplicas, counted at maxReplicas; a model being replaced gets no autoscaler", () => {
    const m = qwen(plan({ [QWEN]: { minReplicas: 0, maxReplicas: 3 } }));
    expect([m.replicas, m.maxReplicas, m.baseGpus, m.gpus]).toEqual([0, 3, 0, 3]);
    const swapped = planModels([QWEN, "generative/sim-chat"], {}, folders, "deployments/models", { "generative/sim-chat": QWEN }, {});
    expect(swapped.find((x) => x.def.ref === QWEN)?.autoscaling).toBeUndefined();
  });

  test("the GPU preflight: fails what cannot be created, reports what cannot grow to maxReplicas and who must add the nodes", () => {
    const models = plan({ [QWEN]: { minReplicas: 1, maxReplicas: 3 } });
    expect(checkGpuCapacity(models, { default: 1, "gpu-small": 1 })).toEqual([]);
    expect(gpuHeadroomWarnings(models, { default: 1, "gpu-small": 1 })).toEqual([
      'node group "default": at maxReplicas the models request 3 GPUs > capacity 1 (generative/qwen3-8b up to 3 replicas × 1 GPU = 3): the cluster cannot hold them, so cluster autoscaling must add the nodes, or the replicas beyond capacity stay Pending',
    ]);
    expect(gpuHeadroomWarnings(models, { default: 3, "gpu-small": 1 })).toEqual([]);
    expect(checkGpuCapacity(plan({ [QWEN]: { minReplicas: 2, maxReplicas: 3 } }), { default: 1, "gpu-small": 1 })).toEqual([
      'node group "default": 2 GPUs requested > capacity 1: generative/qwen3-8b at least 2 replicas × 1 GPU = 2',
    ]);
  });

  test("rollouts count maxReplicas: no surge from GPUs the autoscaler may take; a model at zero that can wake is not 'scaled to zero'", () => {
    const models = plan({ [QWEN]: { minReplicas: 0, maxReplicas: 2 } });
    const r = planRollouts(models, { capacity: { default: 2, "gpu-small": 1 }, cacheAccessMode: "ReadWriteMany", cached: new Set() }).get(QWEN);
    expect(r).toEqual({ type: "Recreate", reason: 'node group "default" has no 1 spare GPU for a surge pod' });
    const roomy = planRollouts(models, { capacity: { default: 3, "gpu-small": 1 }, cacheAccessMode: "ReadWriteMany", cached: new Set() }).get(QWEN);
    expect(roomy).toEqual({ type: "RollingUpdate", surgeGpus: 1 });
  });

  test("the catalog says how the gateway holds requests, only for a model that may be at zero", () => {
    const catalog = (a: object) => buildCatalog(plan({ [QWEN]: a }), { namespace: "app-serving", clusterDomain: "cluster.local" });
    const entry = (a: object) => catalog(a).models.find((m) => m.id === qwen(plan({ [QWEN]: a })).def.id);
    expect(entry({ maxReplicas: 2, wake: { timeoutSeconds: 120, maxHeld: 8 } })?.wake).toEqual({ timeoutMs: 120_000, maxHeld: 8 });
    expect(entry({ minReplicas: 1, maxReplicas: 2 })?.wake).toBeUndefined();
    expect(buildCatalog(plan({}), { namespace: "app-serving", clusterDomain: "cluster.local" }).models.every((m) => m.wake === undefined)).toBe(true);
  });
});

describe("the ScaledObject", () => {
  test("targets the chart's decode Deployment: <release>-llm-d-modelservice, cut at 55, then -decode", () => {
    const def = (slug: string, extra: object = {}) => ({ slug, serverValues: { ...extra } }) as unknown as ModelDefinition;
    expect(decodeDeploymentName(def("qwen3-8b"))).toBe("ms-qwen3-8b-llm-d-modelservice-decode");
    // A 40-character slug: "ms-<slug>-llm-d-modelservice" is 62 characters, cut to 55.
    const long = "a234567890b234567890c234567890d234567890";
    expect(decodeDeploymentName(def(long))).toBe(`ms-${long}-llm-d-model-decode`);
    expect(decodeDeploymentName(def("x", { fullnameOverride: "custom" }))).toBe("custom-decode");
    // A cut that ends in '-' loses it, as trimSuffix does.
    expect(decodeDeploymentName(def("x", { fullnameOverride: `${"f".repeat(54)}-tail` }))).toBe(`${"f".repeat(54)}-decode`);
  });

  test("min, max, polling, cooldowns, the HPA's scale-down window, and the configured triggers; valid against KEDA's CRD", () => {
    const m = qwen(plan({ [QWEN]: { minReplicas: 0, maxReplicas: 2, targets: { waitingPerReplica: 3, kvCacheUsage: 0.8 }, activationRequests: 1, cooldownSeconds: 1200 } }));
    const so = buildScaledObject(m, "ai-platform.io", soArgs) as Obj;
    expect(() => validateAnyObject(so)).not.toThrow();
    expect(so.metadata).toMatchObject({ name: "model-qwen3-8b", namespace: "app-serving", labels: { "ai-platform.io/model-slug": "qwen3-8b" } });
    expect(so.spec).toMatchObject({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "ms-qwen3-8b-llm-d-modelservice-decode" },
      minReplicaCount: 0,
      maxReplicaCount: 2,
      pollingInterval: 15,
      cooldownPeriod: 1200,
      initialCooldownPeriod: 1500,
      advanced: { horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: 600 } } } },
    });
    const q = scalerQueries(m.def, soArgs);
    expect(so.spec.triggers).toEqual([
      { type: "prometheus", name: "vllm-waiting", metricType: "AverageValue", metadata: { serverAddress: soArgs.serverAddress, query: q.waiting, threshold: "3" } },
      { type: "prometheus", name: "vllm-kv-cache", metricType: "Value", metadata: { serverAddress: soArgs.serverAddress, query: q.kvCache, threshold: "0.8" } },
      { type: "prometheus", name: "gateway-demand", metricType: "AverageValue", metadata: { serverAddress: soArgs.serverAddress, query: q.demand, threshold: String(m.def.maxConcurrency), activationThreshold: "1" } },
    ]);
    // The CRD's rule, held by the schema the mock runs use: min above max is refused.
    expect(() => validateAnyObject({ ...so, spec: { ...so.spec, minReplicaCount: 3 } })).toThrow(/minReplicaCount must be less than or equal to maxReplicaCount/);
  });

  withPromtool("each query is one series: summed over the model's decode pods and gateway pods, 0 when nothing matches", () => {
    const def = qwen(plan({})).def;
    const q = scalerQueries(def, soArgs);
    const pod = (name: string, slug: string, role = "decode", ns = "app-serving") => `namespace="${ns}", pod="${name}", ai_platform_io_model_slug="${slug}", llm_d_ai_role="${role}", model_name="x"`;
    const gw = (name: string, model: string, ns = "ai-gateway") => `namespace="${ns}", pod="${name}", model="${model}"`;
    const series = [
      { series: `vllm:num_requests_waiting{${pod("a", "qwen3-8b")}}`, values: "3x5" },
      { series: `vllm:num_requests_waiting{${pod("b", "qwen3-8b")}}`, values: "5x5" },
      { series: `vllm:num_requests_waiting{${pod("p", "qwen3-8b", "prefill")}}`, values: "100x5" },
      { series: `vllm:num_requests_waiting{${pod("c", "other")}}`, values: "7x5" },
      { series: `vllm:num_requests_waiting{${pod("d", "qwen3-8b", "decode", "elsewhere")}}`, values: "9x5" },
      { series: `vllm:kv_cache_usage_perc{${pod("a", "qwen3-8b")}}`, values: "0.5x5" },
      { series: `vllm:kv_cache_usage_perc{${pod("b", "qwen3-8b")}}`, values: "0.9x5" },
      { series: `vllm:kv_cache_usage_perc{${pod("c", "other")}}`, values: "0.1x5" },
      { series: `gateway_model_held_requests{${gw("g1", def.id)}}`, values: "2x5" },
      { series: `gateway_model_held_requests{${gw("g2", def.id)}}`, values: "1x5" },
      { series: `gateway_model_held_requests{${gw("g1", "other")}}`, values: "50x5" },
      // In flight counts the held requests too: g1 holds 2 and sends 2, g2 holds 1.
      { series: `gateway_requests_in_flight{${gw("g1", def.id)}}`, values: "4x5" },
      { series: `gateway_requests_in_flight{${gw("g2", def.id)}}`, values: "1x5" },
      { series: `gateway_requests_in_flight{${gw("g2", def.id, "someone-else")}}`, values: "40x5" },
    ];
    const asleep = scalerQueries({ ...def, slug: "asleep", id: "asleep-model" }, soArgs);
    const one = (expr: string, value: number) => ({ expr, eval_time: "2m", exp_samples: [{ labels: "{}", value }] });
    const tests = [
      {
        interval: "1m",
        input_series: series,
        promql_expr_test: [
          one(q.waiting, 8),
          one(q.kvCache, 0.7),
          one(q.demand, 5),
          // A model at zero replicas: no vLLM series; only requests held in flight. Nothing at all: 0, never an empty answer.
          one(asleep.waiting, 0),
          one(asleep.kvCache, 0),
          one(asleep.demand, 0),
        ],
      },
      {
        interval: "1m",
        input_series: [
          { series: `gateway_model_held_requests{${gw("g1", "asleep-model")}}`, values: "2x5" },
          { series: `gateway_requests_in_flight{${gw("g1", "asleep-model")}}`, values: "2x5" },
        ],
        promql_expr_test: [one(asleep.demand, 2)],
      },
    ];
    expect(promtool("test", { groups: [] }, tests)).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  });
});
