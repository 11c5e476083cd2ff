// What the model-serving releases need so that monitoring sees them: scrape annotations on the vLLM pods (modelservice
// chart: decode/prefill `podAnnotations`) and on the endpoint-picker pods, and the platform labels on the EPP pods so
// the collector ships their logs. Pure builders; the serving stack applies them (infra/serving is another part's).
//
// The GAIE inferencepool chart v1.3.0 has no value for the EPP pod's labels or annotations (its Deployment template
// sets only `inferencepool: <release>-epp`), so they are added to the rendered Deployment by a Pulumi transform on
// that Chart: `eppPodMetadataTransform`.
import type * as pulumi from "@pulumi/pulumi";
import { PLATFORM_NAME, platformLabelKeys } from "../platform/labels";
import { scrapeAnnotations } from "./scrape";

/** vLLM (and the llm-d simulator) serve Prometheus metrics on the OpenAI API port. */
export const VLLM_METRICS_PATH = "/metrics";

/** The endpoint picker's metrics port and path (GAIE v1.3.0: `--metrics-port` default 9090, container port `metrics`). */
export const EPP_METRICS = { port: 9090, path: "/metrics" } as const;

/** The modelservice chart's `routing` values that decide the port vLLM listens on (chart defaults v0.4.x). */
export interface ModelServiceRouting {
  readonly servicePort?: number;
  readonly proxy?: { readonly enabled?: boolean; readonly targetPort?: number };
}

/**
 * The port vLLM listens on, as the modelservice chart's `llm-d-modelservice.vllmPort` helper computes it: prefill pods
 * and decode pods without the routing sidecar listen on `routing.servicePort` (8000); decode pods behind the sidecar
 * on `routing.proxy.targetPort` (8200), the sidecar taking servicePort.
 */
export function vllmPort(routing: ModelServiceRouting, role: "decode" | "prefill"): number {
  const servicePort = routing.servicePort ?? 8000;
  const proxyEnabled = routing.proxy?.enabled ?? true;
  return role === "prefill" || !proxyEnabled ? servicePort : (routing.proxy?.targetPort ?? 8200);
}

/** `decode.podAnnotations` / `prefill.podAnnotations` of a modelservice release: scrape vLLM on its own port. */
export function modelServerScrapeAnnotations(routing: ModelServiceRouting, role: "decode" | "prefill"): Record<string, string> {
  return scrapeAnnotations(vllmPort(routing, role), VLLM_METRICS_PATH);
}

/** Annotations of the endpoint-picker pod: scrape its metrics port. */
export function eppScrapeAnnotations(): Record<string, string> {
  return scrapeAnnotations(EPP_METRICS.port, EPP_METRICS.path);
}

/**
 * Labels of a model's endpoint-picker pod: the platform label (the collector keeps only pods with it), the model's
 * slug and category (stream labels `model_slug`, `model_category`), and the recommended labels that become `component`
 * and `part_of`. The pool's own selector (`modelServers.matchLabels`) never matches it: those are the folder's
 * model-server labels, which the picker does not carry.
 */
export function eppPodLabels(labelDomain: string, model: { readonly slug: string; readonly category: string }, partOf = "app-serving"): Record<string, string> {
  const k = platformLabelKeys(labelDomain);
  return {
    [k.platform]: PLATFORM_NAME,
    [k.modelSlug]: model.slug,
    [k.modelCategory]: model.category,
    "app.kubernetes.io/component": "endpoint-picker",
    "app.kubernetes.io/part-of": partOf,
  };
}

export interface PodMetadata {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The EPP Deployment of an inferencepool release: `<release>-epp` (chart helper `gateway-api-inference-extension.name`). */
export function eppDeploymentName(release: string): string {
  return `${release.toLowerCase().trim().slice(0, 40)}-epp`;
}

/**
 * A rendered object with extra pod-template labels and annotations when it is the EPP Deployment of `release`;
 * anything else unchanged. The Deployment's selector is left alone (it must not change once deployed).
 */
export function withEppPodMetadata<T extends Record<string, unknown>>(object: T, release: string, metadata: PodMetadata): T {
  const meta = object.metadata as { name?: string } | undefined;
  if (object.kind !== "Deployment" || meta?.name !== eppDeploymentName(release)) return object;
  const copy = structuredClone(object) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const template = (copy.spec.template.metadata ??= {});
  template.labels = { ...(template.labels ?? {}), ...(metadata.labels ?? {}) };
  template.annotations = { ...(template.annotations ?? {}), ...(metadata.annotations ?? {}) };
  return copy as T;
}

/**
 * The same as a Pulumi resource transform, for the `transforms` option of the inferencepool `helm.v4.Chart`: every
 * object the chart renders passes through it, the EPP Deployment gets the metadata.
 */
export function eppPodMetadataTransform(release: string, metadata: PodMetadata): pulumi.ResourceTransform {
  return (args) => {
    if (args.type !== "kubernetes:apps/v1:Deployment") return undefined;
    return { props: withEppPodMetadata(args.props as Record<string, unknown>, release, metadata), opts: args.opts };
  };
}
