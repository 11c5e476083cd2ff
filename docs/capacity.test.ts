// docs/capacity.md against the code that defines its figures: the shipped folders' GPUs, vLLM flags and requests,
// the gateway's defaults, Valkey's and the monitoring stack's requests and limits, the sums the page draws from them,
// and the gateway figures it quotes from benchmarks.md. Published vLLM figures are sources, not code: not held here.
import { RoutingSchema } from "../gateway/src/config/catalog";
import { DEFAULT_RESOURCES, gatewaySchema } from "../infra/gateway/config";
import { buildRedisDeploymentSpec } from "../infra/gateway/redis-builders";
import { buildKedaValues } from "../infra/autoscaling/values";
import { RESOURCES, type ContainerResources } from "../infra/monitoring/resources";
import { readDoc } from "../infra/platform/docs-testing";
import { loadModelFolders, type ModelDefinition } from "../infra/serving/model-folders";
import { DECODE_ROLE_LABEL } from "../infra/serving/constants";
import { flagValue } from "../infra/serving/server-args";

const page = readDoc("capacity.md");
/** The page with line breaks folded, so a phrase wrapped over two lines still matches. */
const flat = page.replace(/\s+/g, " ");
const models = loadModelFolders();

/** The cells of the table row whose first cell is `first`, trimmed. */
function row(first: string): string[] {
  const line = page.split("\n").find((l) => l.startsWith(`| ${first} |`));
  if (line === undefined) throw new Error(`docs/capacity.md has no row "${first}"`);
  return line.split("|").slice(1, -1).map((c) => c.trim());
}

function model(ref: string): ModelDefinition {
  const def = models.find((m) => m.ref === ref);
  if (!def) throw new Error(`no model folder ${ref}`);
  return def;
}

function flag(def: ModelDefinition, name: string): string {
  const v = flagValue(def.serverArgs, name);
  if (v === undefined) throw new Error(`${def.ref} sets no ${name}`);
  return v;
}

const milliCpu = (q: string): number => (q.endsWith("m") ? Number(q.slice(0, -1)) : Number(q) * 1000);
const mebibytes = (q: string): number => (q.endsWith("Gi") ? Number(q.slice(0, -2)) * 1024 : Number(q.replace(/Mi$/, "")));
const cpu = (m: number): string => (m < 1000 ? `${m}m` : String(m / 1000));
const memory = (mi: number): string => (mi % 1024 === 0 ? `${mi / 1024}Gi` : `${mi}Mi`);
const thousands = (n: number): string => n.toLocaleString("en-US");

/** A pod's requests and limits: the sum of its containers', as the scheduler counts them. */
interface Pod {
  readonly cpu: readonly [number, number];
  readonly memory: readonly [number, number];
}
function pod(...containers: readonly ContainerResources[]): Pod {
  const sum = (f: (c: ContainerResources) => number) => containers.reduce((s, c) => s + f(c), 0);
  return {
    cpu: [sum((c) => milliCpu(c.requests.cpu)), sum((c) => milliCpu(c.limits.cpu))],
    memory: [sum((c) => mebibytes(c.requests.memory)), sum((c) => mebibytes(c.limits.memory))],
  };
}
const cells = (p: Pod): [string, string] => [`${cpu(p.cpu[0])} / ${cpu(p.cpu[1])}`, `${memory(p.memory[0])} / ${memory(p.memory[1])}`];
const times = (p: Pod, n: number): Pod => ({ cpu: [p.cpu[0] * n, p.cpu[1] * n], memory: [p.memory[0] * n, p.memory[1] * n] });
const plus = (...pods: readonly Pod[]): Pod => ({
  cpu: [pods.reduce((s, p) => s + p.cpu[0], 0), pods.reduce((s, p) => s + p.cpu[1], 0)],
  memory: [pods.reduce((s, p) => s + p.memory[0], 0), pods.reduce((s, p) => s + p.memory[1], 0)],
});

const gatewayDefaults = gatewaySchema.parse({ image: "registry.example.com/ai-gateway:1.0.0" });
const gateway = pod(DEFAULT_RESOURCES);
const valkey = pod(
  buildRedisDeploymentSpec({ image: "valkey", configDigest: "d", secretName: "s", fixedUserIds: false, labelDomain: "example.com" }).template.spec.containers[0]
    ?.resources as ContainerResources,
);
/**
 * KEDA's operator and metrics API server: the platform sets only the CPU limit; the rest are the defaults of the pinned
 * chart (kedacore/charts keda 2.20.2, values.yaml `resources.operator` and `resources.metricServer`).
 */
const kedaValues = buildKedaValues({ watchNamespaces: ["app-serving"], scrape: false }) as { resources: { operator: { limits: { cpu: string } }; metricServer: { limits: { cpu: string } } } };
const keda = pod({ requests: { cpu: "100m", memory: "100Mi" }, limits: { cpu: kedaValues.resources.operator.limits.cpu, memory: "1000Mi" } });
const CPU_NODE_PODS: readonly (readonly [string, Pod, number])[] = [
  ["gateway", gateway, gatewayDefaults.replicas],
  ["Valkey (shared limits)", valkey, 1],
  ["KEDA operator, metrics API server", keda, 2],
  ["log store", pod(RESOURCES.logstore), 1],
  ["viewer, with its dashboard sidecar", pod(RESOURCES.viewer, RESOURCES.viewerDashboardSidecar), 1],
  ["metrics server, with its config reloader", pod(RESOURCES.metricsServer, RESOURCES.metricsConfigReloader), 1],
  ["kube-state-metrics", pod(RESOURCES.kubeStateMetrics), 1],
];
const EVERY_NODE_PODS: readonly (readonly [string, Pod])[] = [
  ["collector, with its config reloader", pod(RESOURCES.collector, RESOURCES.collectorConfigReloader)],
  ["node-exporter", pod(RESOURCES.nodeExporter)],
];

describe("docs/capacity.md", () => {
  const shipped = models.filter((m) => m.vllm);

  test("lists every shipped vLLM folder with its GPUs, flags and requests", () => {
    expect(shipped.map((m) => m.ref).sort()).toEqual(["embedder/bge-small-en", "generative/llama-3.3-70b", "generative/qwen3-8b"]);
    for (const def of shipped) {
      const requests = def.serverValues.decode.containers[0]?.resources?.requests ?? {};
      expect({ ref: def.ref, row: row(`\`${def.ref}\``) }).toEqual({
        ref: def.ref,
        row: [
          `\`${def.ref}\``,
          `${def.gpus.perDecodeReplica} \`${def.gpus.resource}\``,
          flag(def, "--max-model-len"),
          flag(def, "--max-num-seqs"),
          flag(def, "--gpu-memory-utilization"),
          `${requests.cpu}, ${requests.memory}`,
        ],
      });
    }
  });

  test("the gateway's queue as the catalog defaults it", () => {
    const routing = RoutingSchema.parse({});
    expect(flat).toContain(`\`routing.queueTimeoutMs\` (${routing.queueTimeoutMs} ms), at most \`routing.maxQueueLength\` (${routing.maxQueueLength})`);
  });

  test("the KV cache arithmetic uses the folders' slots and context lengths", () => {
    const qwen = model("generative/qwen3-8b");
    const llama = model("generative/llama-3.3-70b");
    const full = (def: ModelDefinition) => {
      const seqs = Number(flag(def, "--max-num-seqs"));
      const len = Number(flag(def, "--max-model-len"));
      return `${seqs} × ${thousands(len)} = ${thousands(seqs * len)}`;
    };
    expect(flat).toContain(`${full(qwen)} tokens, ${full(llama)}.`);
    expect(page).toContain(`# Maximum concurrency for ${thousands(Number(flag(qwen, "--max-model-len")))} tokens per request: <N>x`);
    // The command that shows those lines selects the model's decode pods as the platform labels them.
    expect(page).toContain(`-l "$LD/model-slug=${qwen.slug},${DECODE_ROLE_LABEL.key}=${DECODE_ROLE_LABEL.value}" -c vllm`);
    expect(qwen.serverValues.decode.containers[0]?.name).toBe("vllm");
  });

  test("the worked example quotes qwen3-8b's own flags", () => {
    const qwen = model("generative/qwen3-8b");
    const section = page.slice(page.indexOf("## Worked example: qwen3-8b"), page.indexOf("\n## The gateway"));
    const quoted = [...section.matchAll(/`(--[a-z-]+)` (\d[\d.]*)/g)].map((m) => [m[1] as string, m[2] as string]);
    expect(quoted.length).toBeGreaterThan(0);
    expect(quoted).toEqual(quoted.map(([name]) => [name, flag(qwen, name as string)]));
  });

  test("the gateway's replicas, autoscaling target and limit are the defaults", () => {
    const { replicas, maxReplicas, targetCpuUtilization } = gatewayDefaults;
    expect(row("gateway")[1]).toBe(`${replicas} to ${maxReplicas}`);
    const perPod = (milliCpu(DEFAULT_RESOURCES.requests.cpu) * targetCpuUtilization) / 100;
    expect(flat).toContain(`at ${targetCpuUtilization}% of the ${DEFAULT_RESOURCES.requests.cpu} request, ${perPod}m a pod`);
    expect(flat).toContain(`the ${DEFAULT_RESOURCES.limits.memory} limit`);
  });

  test.each(CPU_NODE_PODS.map(([name, p]) => [name, p] as const))("CPU nodes: %s", (name, p) => {
    expect(row(name).slice(2)).toEqual(cells(p));
  });

  test.each(EVERY_NODE_PODS.map(([name, p]) => [name, p] as const))("every node: %s", (name, p) => {
    expect(row(name).slice(1)).toEqual(cells(p));
  });

  test("the total is the sum at the gateway's minimum, and two 4 vCPU / 16 GiB nodes hold the maximum", () => {
    const at = (gatewayReplicas: number) => plus(...CPU_NODE_PODS.map(([name, p, n]) => times(p, name === "gateway" ? gatewayReplicas : n)));
    expect(row("**total**, gateway at 2").slice(2)).toEqual(cells(at(gatewayDefaults.replicas)));
    expect(gatewayDefaults.replicas).toBe(2);
    const daemons = times(plus(...EVERY_NODE_PODS.map(([, p]) => p)), 2);
    const peak = plus(at(gatewayDefaults.maxReplicas), daemons);
    // Requests must schedule; memory limits must fit what a node leaves after the kubelet's reservations (~10%).
    expect(peak.cpu[0]).toBeLessThanOrEqual(2 * 4000);
    expect(peak.memory[1]).toBeLessThanOrEqual(2 * 16 * 1024 * 0.9);
    expect(flat).toContain("Two CPU nodes of 4 vCPU and 16 GiB hold all of it");
  });

  test("the gateway figures are the ones benchmarks.md reports", () => {
    const bench = readDoc("benchmarks.md");
    // Each figure as the page words it, and the row or sentence of benchmarks.md it comes from.
    const quoted: readonly (readonly [string, RegExp])[] = [
      ["725 µs of CPU per chat request", /^\| CPU per chat request, µs \|[^\n]*\| 725 \|/m],
      ["173 to 206 µs on a quieter machine", /173 to 206 µs[^\n]*quieter machine/],
      ["4.3 µs per further stream event", /^\| one more stream event[^|]*\| 4\.3 \|/m],
      ["141 MiB resident after load", /^\| RSS after the rounds[^|]*\|[^\n]*\| 141 \//m],
      ["149 MiB with 2000 streams open", /^\| RSS with 2000 streams open[^|]*\|[^\n]*\| 149[ |]/m],
      ["421 MiB at the worst", /Peak RSS 421 MiB/],
    ];
    for (const [onPage, inBench] of quoted) expect({ onPage, found: flat.includes(onPage), inBench: inBench.test(bench) }).toEqual({ onPage, found: true, inBench: true });
  });
});
