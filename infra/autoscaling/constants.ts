// Fixed facts of KEDA as the platform installs it (kedacore/charts, chart `keda`).
export const KEDA_CHART = { component: "keda", version: "2.20.2", appVersion: "2.20.2", source: "https://kedacore.github.io/charts#keda" } as const;

/** Release name: the chart names its objects after `operator.name` (`keda-operator…`), not after the release. */
export const KEDA_RELEASE = "keda";
export const DEFAULT_KEDA_NAMESPACE = "keda";

/** The CRD the platform's objects need (ScaledObject). */
export const SCALED_OBJECT_CRD = "scaledobjects.keda.sh";

/** The aggregated API the HPA controller reads KEDA's metrics through: one per cluster. */
export const EXTERNAL_METRICS_APISERVICE = "v1beta1.external.metrics.k8s.io";
/** The Service the chart puts behind it (`keda-operator-metrics-apiserver`). */
export const KEDA_METRICS_SERVICE = "keda-operator-metrics-apiserver";

/** The KEDA release's CRD manifest (kedacore/keda's release workflow uploads `keda-<version>-crds.yaml`). */
export function defaultKedaCrdSource(version: string): string {
  return `https://github.com/kedacore/keda/releases/download/v${version}/keda-${version}-crds.yaml`;
}

/** Port of the operator's Prometheus metrics (chart `prometheus.operator.port`). */
export const KEDA_OPERATOR_METRICS_PORT = 8080;
