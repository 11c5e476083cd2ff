// Values builders: what the platform adds to each folder's chart values, and the objects declared beside them.
import { validateAnyObject } from "../platform/crd-validate";
import { loadModelFolders, type ModelDefinition } from "./model-folders";
import { spawn, spawnSync } from "child_process";
import { startSimulator } from "../../simulator/src";
import { startupTimeoutSeconds } from "./startup";
import {
  API_KEY_SECRET,
  buildHttpRoute,
  buildInferencePoolValues,
  buildModelServerValues,
  buildReplicaService,
  DRAIN_SCRIPT,
  type ModelServerValuesArgs,
  nodePlacement,
  TERMINATION_MARGIN_SECONDS,
  terminationGraceSeconds,
} from "./values";
import { CLUSTER_DNS_TTL_SECONDS, LEAVE_DELAY_SECONDS } from "./constants";
import { DEFAULT_DNS_REFRESH_MS } from "../../gateway/src/config/catalog";
import { DEFAULT_HEALTH_INTERVAL_MS } from "../../gateway/src/config/settings";
import type { YamlDoc } from "./testing";

const D = "ai-platform.io";
const models = loadModelFolders();
const get = (ref: string): ModelDefinition => {
  const m = models.find((x) => x.ref === ref);
  if (!m) throw new Error(ref);
  return m;
};
const qwen = get("generative/qwen3-8b");
const bge = get("embedder/bge-small-en");
const sim = get("generative/sim-chat");

const args = (over: Partial<ModelServerValuesArgs> = {}): ModelServerValuesArgs => ({ labelDomain: D, replicas: 1, startupBudgetSeconds: 1680, drainSeconds: 120, apiKey: true, ...over });
const llama = get("generative/llama-3.3-70b");

describe("model-server values", () => {
  test("platform labels merged into the pod labels, keeping the folder's (the pool selects on those)", () => {
    const v = buildModelServerValues(bge, args()) as YamlDoc;
    expect(v.modelArtifacts.labels).toEqual({
      "llm-d.ai/inference-serving": "true",
      "llm-d.ai/model": "bge-small-en",
      "ai-platform.io/platform": "ai-platform",
      "ai-platform.io/model-slug": "bge-small-en",
      "ai-platform.io/model-category": "embedder",
      "ai-platform.io/nodegroup": "gpu-small",
      "app.kubernetes.io/part-of": "app-serving",
    });
  });

  test("on-prem GPU model: selects workload=gpu, carries no nodegroup label, tolerates the GPU taint", () => {
    const v = buildModelServerValues(qwen, args()) as YamlDoc;
    expect(Object.keys(v.modelArtifacts.labels)).not.toContain("ai-platform.io/nodegroup");
    expect(v.decode.nodeSelector).toEqual({ workload: "gpu" });
    expect(v.decode.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
  });

  test("node group model selects its group and tolerates both its GPU share and the whole-GPU taint; the simulator runs anywhere", () => {
    expect(nodePlacement(bge, D)).toEqual({
      nodeSelector: { "ai-platform.io/nodegroup": "gpu-small" },
      tolerations: [
        { key: "nvidia.com/gpu.shared", operator: "Exists", effect: "NoSchedule" },
        { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },
      ],
    });
    const v = buildModelServerValues(sim, args({ replicas: 2 })) as YamlDoc;
    expect(v.decode.nodeSelector).toBeUndefined();
    expect(v.decode.tolerations).toBeUndefined();
  });

  test("weights from the cache volume: the uri points at it, vLLM loads offline at the folder's revision", () => {
    const v = buildModelServerValues(qwen, args({ cachedUri: "pvc+hf://weights-qwen3-8b/hub/Qwen/Qwen3-8B", revision: "b968826" })) as YamlDoc;
    expect(v.modelArtifacts).toMatchObject({ uri: "pvc+hf://weights-qwen3-8b/hub/Qwen/Qwen3-8B", mountPath: "/model-cache" });
    const c = v.decode.containers[0];
    expect(c.env).toEqual(expect.arrayContaining([{ name: "HF_HUB_OFFLINE", value: "1" }]));
    expect(c.args).toContain("--revision=b968826");
    // Without a cache (a pvc:// folder) nothing about the Hub is added (nor, without adapters, for runtime loads).
    const plain = (buildModelServerValues({ ...qwen, lora: undefined }, args()) as YamlDoc).decode.containers[0];
    expect(plain.env.map((e: { name: string }) => e.name)).toEqual(["VLLM_API_KEY"]);
    expect(plain.args).not.toContain("--revision=b968826");
  });

  test("vLLM gets the platform's API key from its Secret; the simulator gets nothing vLLM-specific", () => {
    const c = (buildModelServerValues(qwen, args()) as YamlDoc).decode.containers[0];
    expect(c.env).toContainEqual({ name: "VLLM_API_KEY", valueFrom: { secretKeyRef: { name: API_KEY_SECRET.name, key: API_KEY_SECRET.key } } });
    const s = (buildModelServerValues(sim, args()) as YamlDoc).decode;
    expect(s.containers[0].env).toBeUndefined();
    // Only the leave delay, as Kubernetes' own sleep action (the image needs no binary for it).
    expect(s.containers[0].extraConfig).toEqual({ lifecycle: { preStop: { sleep: { seconds: LEAVE_DELAY_SECONDS } } } });
    expect(s.terminationGracePeriodSeconds).toBe(LEAVE_DELAY_SECONDS + 120 + TERMINATION_MARGIN_SECONDS);
  });

  test("serving:responsesStore lets vLLM store Responses API answers; off by default, as vLLM is", () => {
    const on = (buildModelServerValues(qwen, args({ responsesStore: true })) as YamlDoc).decode.containers[0];
    expect(on.env).toContainEqual({ name: "VLLM_ENABLE_RESPONSES_API_STORE", value: "1" });
    const off = (buildModelServerValues(qwen, args()) as YamlDoc).decode.containers[0];
    expect(off.env.map((e: { name: string }) => e.name)).not.toContain("VLLM_ENABLE_RESPONSES_API_STORE");
  });

  test("the startup probe's budget grows with the weights; the folder's period stays", () => {
    const small = (buildModelServerValues(qwen, args({ startupBudgetSeconds: startupTimeoutSeconds(16) })) as YamlDoc).decode.containers[0].startupProbe;
    const large = (buildModelServerValues(llama, args({ startupBudgetSeconds: startupTimeoutSeconds(131.5) })) as YamlDoc).decode.containers[0].startupProbe;
    expect(small).toMatchObject({ httpGet: { path: "/health" }, periodSeconds: 10, failureThreshold: Math.ceil((20 * 60 + 16 * 30) / 10) });
    expect(large.failureThreshold).toBe(Math.ceil((20 * 60 + 131.5 * 30) / 10));
    expect(large.failureThreshold).toBeGreaterThan(small.failureThreshold);
  });

  test("tensor parallel 4: a /dev/shm of 32 GiB in memory, mounted in the server", () => {
    const d = (buildModelServerValues(llama, args()) as YamlDoc).decode;
    expect(d.volumes).toContainEqual({ name: "shm", emptyDir: { medium: "Memory", sizeLimit: "32Gi" } });
    expect(d.containers[0].volumeMounts).toContainEqual({ name: "shm", mountPath: "/dev/shm" });
    // A folder that brings its own shm keeps it.
    const q = (buildModelServerValues(qwen, args()) as YamlDoc).decode;
    expect(q.volumes.filter((v: { name: string }) => v.name === "shm")).toEqual([{ name: "shm", emptyDir: { medium: "Memory", sizeLimit: "8Gi" } }]);
  });

  test("stopping drains: a preStop that keeps serving for the leave delay, then waits for in-flight requests, and a grace period beyond both", () => {
    const d = (buildModelServerValues(qwen, args({ drainSeconds: 300 })) as YamlDoc).decode;
    expect(d.terminationGracePeriodSeconds).toBe(LEAVE_DELAY_SECONDS + 300 + TERMINATION_MARGIN_SECONDS);
    expect(d.containers[0].extraConfig.lifecycle.preStop.exec.command).toEqual(["python3", "-c", DRAIN_SCRIPT, "8000", "300", String(LEAVE_DELAY_SECONDS)]);
    expect(d.containers[0].extraConfig.securityContext).toEqual({ allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ["ALL"] }, seccompProfile: { type: "RuntimeDefault" } });
  });

  test("the leave delay outlasts the gateway's discovery: the cluster DNS's TTL, a DNS refresh and a health interval", () => {
    expect(LEAVE_DELAY_SECONDS).toBeGreaterThanOrEqual(CLUSTER_DNS_TTL_SECONDS + (DEFAULT_DNS_REFRESH_MS + DEFAULT_HEALTH_INTERVAL_MS) / 1000);
    expect(LEAVE_DELAY_SECONDS).toBe(15);
  });

  test.each(models.map((m) => [m.ref, m] as const))("%s: every server role leaves gracefully: a preStop delay, and a grace period past it and the drain", (_ref, def) => {
    const drainSeconds = def.drainSeconds ?? 120;
    const v = buildModelServerValues(def, args({ drainSeconds })) as YamlDoc;
    const roles = [v.decode, ...(v.prefill && v.prefill.create !== false ? [v.prefill] : [])];
    for (const role of roles) {
      const preStop = role.containers[0].extraConfig.lifecycle.preStop;
      // vLLM: the drain hook, whose first argument after the budget is the delay; anything else: the sleep action.
      const delay = def.vllm ? Number(preStop.exec.command.at(-1)) : preStop.sleep.seconds;
      expect(delay).toBe(LEAVE_DELAY_SECONDS);
      expect(role.terminationGracePeriodSeconds).toBe(terminationGraceSeconds(drainSeconds));
      expect(role.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(delay + drainSeconds + TERMINATION_MARGIN_SECONDS);
    }
  });

  test("pod annotations given per role reach the pods; the folder's own win", () => {
    const scrape = { "prometheus.io/scrape": "true", "prometheus.io/port": "8000" };
    expect((buildModelServerValues(qwen, args({ podAnnotations: { decode: scrape } })) as YamlDoc).decode.podAnnotations).toEqual(scrape);
    expect((buildModelServerValues(qwen, args()) as YamlDoc).decode.podAnnotations).toBeUndefined();
  });

  test("replicas override; 0 frees every GPU", () => {
    expect((buildModelServerValues(qwen, args({ replicas: 0 })) as YamlDoc).decode.replicas).toBe(0);
  });

  test("the folder's values are not mutated, and chart keys the platform does not know pass through", () => {
    const before = JSON.stringify(qwen.serverValues);
    const v = buildModelServerValues(qwen, args({ replicas: 5, cachedUri: "pvc+hf://weights-qwen3-8b/hub/Qwen/Qwen3-8B" })) as YamlDoc;
    expect(JSON.stringify(qwen.serverValues)).toBe(before);
    expect(v.decode.volumes.map((x: { name: string }) => x.name)).toEqual(["metrics-volume", "torch-compile-cache", "shm"]);
    expect(v.multinode).toBe(false);
  });
});

describe("the drain script (preStop), run for real against a simulator that exports vLLM's metrics", () => {
  const python = spawnSync("python3", ["--version"]).status === 0;
  // The model-server images run it with their python3; here Debian's (.ci/apt-packages). Under CI a missing one fails.
  const maybe = python || process.env.CI ? test : test.skip;
  maybe(
    "keeps serving for the leave delay; then waits while a stream is in flight and returns once it ends; returns at once when idle; gives up at the budget",
    async () => {
      const sim = await startSimulator({ models: ["m"], latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 40, prefillTimePerTokenMs: 0 } });
      const port = new URL(sim.url).port;
      const run = (budget: number, settle = 0) =>
        new Promise<number>((resolve, reject) => {
          const t0 = Date.now();
          const p = spawn("python3", ["-c", DRAIN_SCRIPT, port, String(budget), String(settle)]);
          p.on("error", reject);
          p.on("close", (code) => (code === 0 ? resolve(Date.now() - t0) : reject(new Error(`drain exited ${code}`))));
        });
      try {
        expect(await run(30)).toBeLessThan(5_000);
        // The leave delay first, idle or not: the server keeps serving while discovery drops it.
        expect(await run(30, 1.5)).toBeGreaterThanOrEqual(1_500);
        let ended = 0;
        const stream = fetch(`${sim.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 40, stream: true }),
        }).then(async (r) => {
          await r.text();
          ended = Date.now();
        });
        await new Promise((r) => setTimeout(r, 200));
        const started = Date.now();
        await run(30);
        const drained = Date.now();
        await stream;
        // It returned after the stream ended (within one poll), not before.
        expect(drained).toBeGreaterThanOrEqual(ended);
        expect(drained - started).toBeGreaterThan(500);
        // A stream longer than the budget (at least 16 tokens of 500 ms): the hook gives up at the budget.
        const slow = await startSimulator({ models: ["m"], latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 500, prefillTimePerTokenMs: 0 } });
        const long = fetch(`${slow.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 500, stream: true }),
        }).then((r) => r.text());
        await new Promise((r) => setTimeout(r, 200));
        const t0 = Date.now();
        await new Promise<void>((resolve, reject) => {
          const p = spawn("python3", ["-c", DRAIN_SCRIPT, new URL(slow.url).port, "2", "0"]);
          p.on("error", reject);
          p.on("close", () => resolve());
        });
        const gaveUp = Date.now() - t0;
        expect(gaveUp).toBeGreaterThanOrEqual(2_000);
        expect(gaveUp).toBeLessThan(10_000);
        slow.kill();
        await long.catch(() => undefined);
        await slow.close().catch(() => undefined);
      } finally {
        await sim.close().catch(() => undefined);
      }
    },
    60_000,
  );
});

describe("InferencePool values", () => {
  test("the pool selector is narrowed to the model's slug; the folder's entries stay", () => {
    const v = buildInferencePoolValues(qwen, { labelDomain: D, namespace: "app-serving", clusterDomain: "cluster.local" }) as YamlDoc;
    expect(v.inferencePool.modelServers.matchLabels).toEqual({ "llm-d.ai/inference-serving": "true", "llm-d.ai/model": "qwen3-8b", "ai-platform.io/model-slug": "qwen3-8b" });
    expect(v.provider).toBeUndefined();
    // The narrowed selector still matches the pods (labels ⊇ selector after the merge).
    const labels = (buildModelServerValues(qwen, args()) as YamlDoc).modelArtifacts.labels;
    for (const [k, val] of Object.entries(v.inferencePool.modelServers.matchLabels)) expect(labels[k]).toBe(val);
  });

  test("the picker's metrics without a token, keeping the folder's monitoring settings", () => {
    const v = buildInferencePoolValues(qwen, { labelDomain: D, namespace: "s", clusterDomain: "cluster.local", eppMetricsAuth: false }) as YamlDoc;
    expect(v.inferenceExtension.monitoring).toEqual({ prometheus: { auth: { enabled: false } } });
    expect(v.inferenceExtension.flags).toEqual({ "kv-cache-usage-percentage-metric": "vllm:kv_cache_usage_perc" });
    expect((buildInferencePoolValues(qwen, { labelDomain: D, namespace: "s", clusterDomain: "cluster.local" }) as YamlDoc).inferenceExtension.monitoring).toBeUndefined();
  });

  test("istio provider gets the EPP DestinationRule host, as in the llm-d helmfiles", () => {
    const v = buildInferencePoolValues(qwen, { labelDomain: D, namespace: "llm", clusterDomain: "cluster.local", gatewayProvider: "istio" }) as YamlDoc;
    expect(v.provider).toEqual({ name: "istio", istio: { destinationRule: { host: "gaie-qwen3-8b-epp.llm.svc.cluster.local" } } });
    expect((buildInferencePoolValues(qwen, { labelDomain: D, namespace: "llm", clusterDomain: "cluster.local", gatewayProvider: "gke" }) as YamlDoc).provider).toEqual({ name: "gke" });
  });
});

describe("replica Service and HTTPRoute", () => {
  test("headless Service selects the model's decode pods on the serving port and is a valid Service", () => {
    const svc = buildReplicaService(qwen, "app-serving", D) as YamlDoc;
    expect(() => validateAnyObject(svc)).not.toThrow();
    expect(svc.metadata).toMatchObject({ name: "model-qwen3-8b", namespace: "app-serving" });
    expect(svc.spec).toEqual({
      clusterIP: "None",
      selector: { "ai-platform.io/platform": "ai-platform", "ai-platform.io/model-slug": "qwen3-8b", "llm-d.ai/role": "decode" },
      ports: [{ name: "http", protocol: "TCP", port: 8000, targetPort: 8000 }],
    });
  });

  test("HTTPRoute: parent Gateway, /<slug> prefix rewritten to /, backend the InferencePool; valid per the Gateway API schema", () => {
    const route = buildHttpRoute(qwen, "app-serving", D, { name: "inference-gateway", namespace: "gateway-system" }) as YamlDoc;
    expect(() => validateAnyObject(route)).not.toThrow();
    expect(route.spec.parentRefs).toEqual([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "inference-gateway", namespace: "gateway-system" }]);
    expect(route.spec.rules[0]).toMatchObject({
      matches: [{ path: { type: "PathPrefix", value: "/qwen3-8b" } }],
      filters: [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } }],
      backendRefs: [{ group: "inference.networking.k8s.io", kind: "InferencePool", name: "gaie-qwen3-8b", port: 8000 }],
    });
  });

  test("the HTTPRoute schema rejects what the Gateway API would", () => {
    const route = buildHttpRoute(qwen, "app-serving", D, { name: "gw" }) as YamlDoc;
    route.spec.rules[0].backendRefs[0].kind = "Deployment";
    expect(() => validateAnyObject(route)).toThrow(/HTTPRoute model-qwen3-8b is not a valid gateway\.networking\.k8s\.io\/v1\/HTTPRoute: spec\.rules\.0\.backendRefs\.0/);
    expect(() => validateAnyObject({ apiVersion: "example.com/v1", kind: "Widget" })).toThrow(/no schema known/);
  });
});
