// The GKE HealthCheckPolicy the inferencepool chart renders for `serving:gatewayProvider: gke` (chart v1.3.0,
// templates/gke.yaml): an HTTP check of `/health` on the pool's target port, given as `port` alone. The current GKE CRD
// (networking.gke.io/v1, gke-gateway-api config/crd) refuses that: a CEL rule allows `port` only beside
// `portSpecification: USE_FIXED_PORT`, an absent portSpecification meaning USE_SERVING_PORT, which takes no port.
// USE_FIXED_PORT ("the port number in port is used") keeps the chart's meaning, and the older CRDs (v1.4.0, with the
// same enum and no rule) accept it too. The chart has no value for it, hence a transform on what it renders.
import type * as pulumi from "@pulumi/pulumi";

export const HEALTH_CHECK_POLICY_TYPE = "kubernetes:networking.gke.io/v1:HealthCheckPolicy";
const CHECKS = ["httpHealthCheck", "httpsHealthCheck", "http2HealthCheck", "grpcHealthCheck", "tcpHealthCheck"] as const;

type Obj = Record<string, unknown>;

/** The policy with `portSpecification: USE_FIXED_PORT` beside every `port` that has no portSpecification. */
export function withFixedHealthCheckPort<T extends Obj>(policy: T): T {
  const config = ((policy.spec as Obj | undefined)?.default as Obj | undefined)?.config as Obj | undefined;
  if (!config || !CHECKS.some((c) => (config[c] as Obj | undefined)?.port !== undefined)) return policy;
  const copy = structuredClone(policy) as Obj & { spec: { default: { config: Obj } } };
  for (const c of CHECKS) {
    const check = copy.spec.default.config[c] as Obj | undefined;
    if (check?.port !== undefined && check.portSpecification === undefined) check.portSpecification = "USE_FIXED_PORT";
  }
  return copy as unknown as T;
}

/** The same as a Pulumi resource transform, for the inferencepool `helm.v4.Chart` of a GKE stack. */
export const fixedHealthCheckPortTransform: pulumi.ResourceTransform = (args) =>
  args.type === HEALTH_CHECK_POLICY_TYPE ? { props: withFixedHealthCheckPort(args.props as Obj), opts: args.opts } : undefined;
