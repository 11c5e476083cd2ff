// KEDA for the autoscaled models, per `cluster:keda`:
//   install  its pinned chart in its own namespace (kept on destroy, as the other namespaces), with the
//            least-privilege values of values.ts; its CRDs come from the CRD set `keda` (infra/platform/crds.ts);
//   assume   the cluster runs it: besides the CRD (read by the CRD set), the external metrics APIService is read at
//            preview and must be served by KEDA; anything else fails the preview naming `cluster:keda`.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { checkClusterValue } from "../platform/cluster-checks";
import { PLATFORM_NAME } from "../platform/labels";
import { podSecurityLabels } from "../platform/pod-security";
import { RETAIN } from "../platform/retain";
import { EXTERNAL_METRICS_APISERVICE, KEDA_RELEASE } from "./constants";
import { buildKedaPolicies } from "./network";
import { buildKedaValues, type KedaValuesArgs, withoutWebhookRbac } from "./values";

export interface KedaArgs extends Omit<KedaValuesArgs, "watchNamespaces"> {
  readonly namespace: string;
  /** The namespace whose ScaledObjects KEDA acts on (the serving namespace, as an Output when the stack creates it). */
  readonly watchNamespace: pulumi.Input<string>;
  readonly chart: string;
  /** Namespace of the metrics server, which scrapes the operator. */
  readonly monitoringNamespace: string;
  /** The KEDA CRDs (installed or read): the chart's operator starts only once they exist. */
  readonly crds: pulumi.Input<pulumi.Resource>[];
}

/** The chart's objects as the engine registers them, with the webhook's orphaned role emptied. */
const webhookRbacTransform: pulumi.ResourceTransform = (args) => ({ props: withoutWebhookRbac(args.props as Record<string, unknown>), opts: args.opts });

export class Keda extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: KedaArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:autoscaling:Keda", name, {}, opts);
    const ns = new k8s.core.v1.Namespace(
      args.namespace,
      // restricted: the chart's operator and metrics server run as non-root with every capability dropped.
      { metadata: { name: args.namespace, labels: { "app.kubernetes.io/part-of": PLATFORM_NAME, "app.kubernetes.io/managed-by": "pulumi", ...podSecurityLabels("restricted") } } },
      { ...RETAIN, parent: this },
    );
    this.chart = new k8s.helm.v4.Chart(
      KEDA_RELEASE,
      {
        name: KEDA_RELEASE,
        chart: args.chart,
        namespace: ns.metadata.name,
        values: pulumi.output(args.watchNamespace).apply((watched) => buildKedaValues({ ...args, watchNamespaces: [watched] })),
      },
      { parent: this, dependsOn: args.crds, transforms: [webhookRbacTransform] },
    );
    for (const p of buildKedaPolicies(args.namespace, args.monitoringNamespace)) {
      const meta = p.metadata as { name: string };
      new k8s.networking.v1.NetworkPolicy(meta.name, { ...p, metadata: { ...meta, namespace: ns.metadata.name } } as k8s.networking.v1.NetworkPolicyArgs, { parent: this });
    }
    this.registerOutputs({});
  }
}

/** The logical name of the APIService read in assume mode: a failing preview prints it, so it names the key. */
export const ASSUMED_APISERVICE_NAME = `cluster:keda:${EXTERNAL_METRICS_APISERVICE}`;

/** What an APIService read in assume mode must be: served by a Service of KEDA's. */
export function externalMetricsProblems(spec: { service?: { name?: string; namespace?: string } } | undefined): string[] {
  const service = spec?.service;
  if (!service?.name) return [`cluster:keda: assume, but the APIService ${EXTERNAL_METRICS_APISERVICE} has no Service: KEDA's metrics server is not installed (set cluster:keda to install, or install KEDA)`];
  if (!service.name.includes("keda")) {
    return [`cluster:keda: assume, but ${EXTERNAL_METRICS_APISERVICE} is served by ${service.namespace ?? "?"}/${service.name}, not KEDA: one external metrics adapter per cluster, and the autoscaled models need KEDA's`];
  }
  return [];
}

/** Assume mode: reads the external metrics APIService (a missing one fails the read) and checks it is KEDA's. */
export function assumeKeda(opts: pulumi.CustomResourceOptions): k8s.apiregistration.v1.APIService {
  const api = k8s.apiregistration.v1.APIService.get(ASSUMED_APISERVICE_NAME, EXTERNAL_METRICS_APISERVICE, opts);
  checkClusterValue(api.spec, (spec) => externalMetricsProblems(spec as { service?: { name?: string; namespace?: string } }));
  return api;
}
