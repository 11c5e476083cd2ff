// The serving-side builders: the ports and paths they name are checked against the real serving charts, rendered by a
// real helm with the model folders' own values (the simulator's and Qwen3-8B's): the scrape port is the port vLLM is
// told to listen on, the EPP's is its metrics container port, and the EPP pod gets the labels the collector keeps.
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { REPO_ROOT } from "../platform/charts";
import { describeWithCharts, helmTemplate, type Manifest } from "../platform/helm";
import { allContainers, podOwners } from "../platform/manifests";
import { podLabelMeta } from "./collector-config";
import {
  EPP_METRICS,
  eppDeploymentName,
  eppPodLabels,
  eppPodMetadataTransform,
  eppScrapeAnnotations,
  modelServerScrapeAnnotations,
  vllmPort,
  withEppPodMetadata,
} from "./serving-observability";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const folder = (category: string, model: string, release: string): Obj =>
  parse(fs.readFileSync(path.join(REPO_ROOT, "deployments", "models", category, model, release, "values.yaml"), "utf8")) as Obj;

describe("serving observability builders", () => {
  test("vLLM's port follows the modelservice chart: servicePort without the routing sidecar or for prefill, the sidecar's target behind it", () => {
    expect(vllmPort({ servicePort: 8000, proxy: { enabled: false } }, "decode")).toBe(8000);
    expect(vllmPort({ servicePort: 8000, proxy: { enabled: true, targetPort: 8200 } }, "decode")).toBe(8200);
    expect(vllmPort({ servicePort: 8000, proxy: { enabled: true, targetPort: 8200 } }, "prefill")).toBe(8000);
    // The chart's defaults: proxy on, 8000 / 8200.
    expect(vllmPort({}, "decode")).toBe(8200);
    expect(modelServerScrapeAnnotations({ proxy: { enabled: false } }, "decode")).toEqual({ "prometheus.io/scrape": "true", "prometheus.io/port": "8000", "prometheus.io/path": "/metrics" });
  });

  test("the EPP: metrics on 9090, labels the collector keeps and promotes", () => {
    expect(eppScrapeAnnotations()).toEqual({ "prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics" });
    expect(eppPodLabels("ai-platform.io", { slug: "qwen3-8b", category: "generative" })).toEqual({
      "ai-platform.io/platform": "ai-platform",
      "ai-platform.io/model-slug": "qwen3-8b",
      "ai-platform.io/model-category": "generative",
      "app.kubernetes.io/component": "endpoint-picker",
      "app.kubernetes.io/part-of": "app-serving",
    });
    expect(eppDeploymentName("gaie-qwen3-8b")).toBe("gaie-qwen3-8b-epp");
  });

  test("the transform touches only the EPP Deployment of its release, and never its selector", () => {
    const epp = { kind: "Deployment", metadata: { name: "gaie-a-epp" }, spec: { selector: { matchLabels: { inferencepool: "gaie-a-epp" } }, template: { metadata: { labels: { inferencepool: "gaie-a-epp" } } } } };
    const other = { ...structuredClone(epp), metadata: { name: "gaie-b-epp" } };
    const meta = { labels: { x: "1" }, annotations: { y: "2" } };
    const out = withEppPodMetadata(epp, "gaie-a", meta) as Obj;
    expect(out.spec.template.metadata).toEqual({ labels: { inferencepool: "gaie-a-epp", x: "1" }, annotations: { y: "2" } });
    expect(out.spec.selector).toEqual(epp.spec.selector);
    expect(epp.spec.template.metadata.labels).toEqual({ inferencepool: "gaie-a-epp" }); // not mutated
    expect(withEppPodMetadata(other, "gaie-a", meta)).toBe(other);
    const transform = eppPodMetadataTransform("gaie-a", meta);
    expect(transform({ type: "kubernetes:core/v1:Service", name: "x", props: {}, opts: {} } as never)).toBeUndefined();
    expect((transform({ type: "kubernetes:apps/v1:Deployment", name: "gaie-a-epp", props: epp, opts: {} } as never) as Obj).props.spec.template.metadata.annotations).toEqual({ y: "2" });
  });
});

const SERVING_CHARTS = [
  { component: "llm-d-modelservice", version: "v0.4.5" },
  { component: "inferencepool", version: "v1.3.0" },
];

describeWithCharts("serving observability on the real serving charts", SERVING_CHARTS, ({ helm, archive }) => {
  const vllmArgPort = (objects: Manifest[], deployment: string): number => {
    const p = podOwners(objects).find((x) => x.name === deployment);
    const c = allContainers(p as NonNullable<typeof p>).find((x) => x.name === "vllm");
    const args = [...(c?.command ?? []), ...(c?.args ?? [])];
    const i = args.findIndex((a) => a === "--port" || a.startsWith("--port="));
    return Number(args[i]?.includes("=") ? args[i]?.split("=")[1] : args[i + 1]);
  };

  test.each([
    ["Qwen3-8B (vllmServe, no routing sidecar)", "generative", "qwen3-8b", {}],
    ["the simulator (imageDefault), no sidecar", "generative", "sim-chat", {}],
    ["the simulator behind the routing sidecar", "generative", "sim-chat", { routing: { servicePort: 8000, proxy: { enabled: true, targetPort: 8200 } } }],
  ] as const)("%s: decode.podAnnotations reach the pods and name the port vLLM listens on", (_name, category, model, over) => {
    const values = { ...folder(category, model, `ms-${model}`), ...over } as Obj;
    values.decode = { ...values.decode, podAnnotations: modelServerScrapeAnnotations(values.routing ?? {}, "decode") };
    const objects = helmTemplate(helm, archive("llm-d-modelservice"), `ms-${model}`, "app-serving", values);
    const name = `ms-${model}-llm-d-modelservice-decode`;
    const pod = podOwners(objects).find((p) => p.name === name);
    expect(pod?.metadata.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/path": "/metrics" });
    const listening = vllmArgPort(objects, name);
    expect(listening).toBe("routing" in over ? 8200 : 8000);
    expect(Number(pod?.metadata.annotations?.["prometheus.io/port"])).toBe(listening);
  });

  test("the EPP of a pool: metrics on the annotated port with auth off, platform labels on the pod, selector and pool untouched", () => {
    const release = "gaie-qwen3-8b";
    const values = folder("generative", "qwen3-8b", release);
    values.inferencePool.modelServers.matchLabels["ai-platform.io/model-slug"] = "qwen3-8b";
    // The metrics endpoint asks for a Kubernetes token by default; the metrics server scrapes without one.
    values.inferenceExtension.monitoring = { prometheus: { auth: { enabled: false } } };
    const labels = eppPodLabels("ai-platform.io", { slug: "qwen3-8b", category: "generative" });
    const objects = helmTemplate(helm, archive("inferencepool"), release, "app-serving", values).map((o) => withEppPodMetadata(o, release, { labels, annotations: eppScrapeAnnotations() }));
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === `${release}-epp`) as Obj;
    const pod = podOwners([deployment as Manifest])[0];
    const epp = allContainers(pod as NonNullable<typeof pod>).find((c) => c.name === "epp") as Obj;
    expect(epp.ports).toEqual(expect.arrayContaining([{ name: "metrics", containerPort: EPP_METRICS.port }]));
    expect(Number(pod?.metadata.annotations?.["prometheus.io/port"])).toBe(EPP_METRICS.port);
    expect(epp.args).toContain("--metrics-endpoint-auth=false");
    expect(pod?.metadata.labels).toMatchObject(labels);
    expect(deployment.spec.selector.matchLabels).toEqual({ inferencepool: `${release}-epp` });
    // The collector's first relabel rule keeps exactly pods whose platform label is ai-platform.
    expect(podLabelMeta("ai-platform.io/platform")).toBe("__meta_kubernetes_pod_label_ai_platform_io_platform");
    expect(pod?.metadata.labels?.["ai-platform.io/platform"]).toBe("ai-platform");
    // The pool selects model servers only: its selector does not match the picker's pod.
    const pool = objects.find((o) => o.kind === "InferencePool") as Obj;
    const selector = pool.spec.selector.matchLabels as Record<string, string>;
    expect(Object.entries(selector).every(([k, v]) => pod?.metadata.labels?.[k] === v)).toBe(false);
  });
});
