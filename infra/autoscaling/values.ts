// KEDA chart values (kedacore/charts keda 2.20.2) for least privilege, and the transform that empties what the chart
// renders for a component that is off. Each value names the template that reads it. No Pulumi here.
import { KEDA_OPERATOR_METRICS_PORT } from "./constants";

export interface KedaValuesArgs {
  /** Namespaces whose ScaledObjects KEDA acts on (the serving namespace): RoleBindings there, no ClusterRoleBinding. */
  readonly watchNamespaces: readonly string[];
  /** A registry mirror for the three images (`global.image.registry`). */
  readonly imageRegistry?: string;
  /** The operator's pods carry the metrics server's scrape annotations (KEDA's scaler metrics). */
  readonly scrape: boolean;
}

export function buildKedaValues(args: KedaValuesArgs): Record<string, unknown> {
  return {
    // The program applies (or checks for) the CRDs itself, as a CRD set kept on destroy (templates/crds/*, gated here).
    crds: { install: false },
    // manager/clusterrolebindings.yaml: with a list, the operator's ClusterRole is bound by a RoleBinding in each of
    // these namespaces and its own; without, cluster-wide. The Deployments get WATCH_NAMESPACE.
    watchNamespace: [...args.watchNamespaces].sort().join(","),
    rbac: {
      // manager/clusterrole.yaml: true (the default) adds get on every resource of every API group (`*/*`) and the
      // scale of any kind. Deployments are supported without it (the `apps` rules are unconditional).
      enabledCustomScaledRefKinds: false,
      aggregateToDefaultRoles: false,
    },
    // The Prometheus triggers read the platform's metrics server without credentials: no Secret outside KEDA's
    // namespace is needed (manager/clusterrole.yaml drops cluster-wide secrets list/watch; KEDA_RESTRICT_SECRET_ACCESS).
    permissions: { operator: { restrict: { secret: true } }, metricServer: { restrict: { secret: true } } },
    // Off: the ScaledObjects are the program's, checked against the CRD before they are sent. The admission webhook
    // would add a Deployment, a ValidatingWebhookConfiguration and a ClusterRole; the operator stops patching it
    // (`--enable-webhook-patching=false`). The chart still renders the webhook's ClusterRole and binding
    // (webhooks/clusterrole*.yaml, gated only on rbac.create): withoutWebhookRbac empties the role.
    webhooks: { enabled: false },
    serviceAccount: { webhooks: { create: false } },
    image: { pullPolicy: "IfNotPresent" },
    // The chart's default CPU limit is the integer 1, which the API server stores as the string "1": quoted, what is
    // stored equals what is sent (the other defaults are strings already).
    resources: { operator: { limits: { cpu: "1" } }, metricServer: { limits: { cpu: "1" } } },
    ...(args.imageRegistry ? { global: { image: { registry: args.imageRegistry } } } : {}),
    enableServiceLinks: false,
    ...(args.scrape
      ? {
          prometheus: { operator: { enabled: true, port: KEDA_OPERATOR_METRICS_PORT } },
          podAnnotations: { keda: { "prometheus.io/scrape": "true", "prometheus.io/port": String(KEDA_OPERATOR_METRICS_PORT), "prometheus.io/path": "/metrics" } },
        }
      : {}),
  };
}

type Rendered = { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown }; [k: string]: unknown };

/** The webhook's ClusterRole (`keda-operator-webhook`), which the chart renders even with webhooks off. */
export const WEBHOOK_CLUSTER_ROLE = "keda-operator-webhook";

/**
 * With webhooks off, the webhook's ClusterRole as a role that grants nothing (no `rules`: an empty list is not stored):
 * a Chart transform cannot drop an object, and its binding names a ServiceAccount that no longer exists. Other
 * objects unchanged.
 */
export function withoutWebhookRbac<T extends Rendered>(obj: T): T {
  if (obj.apiVersion !== "rbac.authorization.k8s.io/v1" || obj.kind !== "ClusterRole" || obj.metadata?.name !== WEBHOOK_CLUSTER_ROLE) return obj;
  const { rules: _rules, ...granting } = obj;
  return granting as T;
}
