// The whole Pulumi program, as one function the entry point (stacks/index.ts), the offline render and the tests
// all run. It is the composition root: it reads every configuration namespace first (so one preview names every
// bad key of every part), makes the stack's one Kubernetes provider, the CRDs the parts need, then the parts.
import { ConfigError, hasNamespace } from "../infra/platform/config";
import { createCluster } from "../infra/platform/cluster";
import { CLUSTER_NAMESPACE, type ClusterConfig, loadClusterConfig, loadClusterSecrets } from "../infra/platform/cluster-config";
import { ClusterCrds, type ClusterCrdsArgs, defaultCrdSource, REQUIRED_CRDS } from "../infra/platform/crds";
import { CONFIG_NAMESPACE as GATEWAY, type GatewayConfig, loadGatewayConfig } from "../infra/gateway";
import { CONFIG_NAMESPACE as MONITORING, loadMonitoringConfig, type MonitoringConfig } from "../infra/monitoring";
import { CONFIG_NAMESPACE as SERVING, loadServingConfig, type ServingConfig } from "../infra/serving";
import { deployGateway, type GatewayOutputs } from "./gateway";
import { deployMonitoring, type MonitoringOutputs } from "./monitoring";
import { deployServing, planServing, servingCrdNeeds, type ServingOutputs, type ServingPlan } from "./serving";

export interface ProgramOutputs {
  readonly monitoring?: MonitoringOutputs;
  readonly serving?: ServingOutputs;
  readonly gateway?: GatewayOutputs;
}

interface Configs {
  readonly cluster: ClusterConfig;
  readonly monitoring?: MonitoringConfig;
  readonly serving?: ServingConfig;
  readonly gateway?: GatewayConfig;
}

/** Runs a loader, collecting its ConfigError's lines instead of stopping at the first bad namespace. */
function collect<T>(problems: string[], load: () => T): T | undefined {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return undefined;
  }
}

/** Every namespace the stack has, validated together; undefined when the stack deploys nothing. */
export function loadConfigs(): Configs | undefined {
  const parts = [MONITORING, SERVING, GATEWAY].filter(hasNamespace);
  if (parts.length === 0) return undefined;
  const problems: string[] = [];
  const cluster = collect(problems, loadClusterConfig);
  const monitoring = parts.includes(MONITORING) ? collect(problems, loadMonitoringConfig) : undefined;
  const serving = parts.includes(SERVING) ? collect(problems, loadServingConfig) : undefined;
  const gateway = parts.includes(GATEWAY) ? collect(problems, loadGatewayConfig) : undefined;
  if (problems.length > 0 || !cluster) throw new ConfigError(CLUSTER_NAMESPACE, [...new Set(problems)]);
  return { cluster, monitoring, serving, gateway };
}

/** The CRD sets the declared objects need, each with its mode and source from `cluster:`. */
export function crdRequests(cluster: ClusterConfig, serving?: ServingPlan, gateway?: GatewayConfig): ClusterCrdsArgs {
  const needs = serving ? servingCrdNeeds(serving) : { inferencePool: [], gatewayApi: false };
  const args: { -readonly [K in keyof ClusterCrdsArgs]: ClusterCrdsArgs[K] } = {};
  if (serving && needs.inferencePool.length > 0) {
    args.inferencePool = {
      mode: cluster.crds.inferencePool,
      source: cluster.crdSources.inferencePool ?? defaultCrdSource("inferencePool", serving.cfg.inferencePoolVersion),
      names: needs.inferencePool,
    };
  }
  if (needs.gatewayApi || gateway?.httpRoute) {
    args.gatewayApi = {
      mode: cluster.crds.gatewayApi,
      source: cluster.crdSources.gatewayApi ?? defaultCrdSource("gatewayApi", cluster.gatewayApiVersion),
      names: REQUIRED_CRDS.gatewayApi,
    };
  }
  return args;
}

export function program(): ProgramOutputs {
  const configs = loadConfigs();
  if (!configs) return {};
  const plan = configs.serving ? planServing(configs.serving) : undefined;

  const cluster = createCluster(configs.cluster, loadClusterSecrets().kubeconfig);
  const crds = new ClusterCrds("cluster-crds", crdRequests(configs.cluster, plan, configs.gateway), { providers: { kubernetes: cluster.provider } });
  const gatewayApi = crds.ready.gatewayApi ?? [];

  const monitoring = configs.monitoring ? deployMonitoring(cluster, configs.monitoring) : undefined;
  const serving = plan ? deployServing(cluster, plan, { inferencePool: crds.ready.inferencePool ?? [], gatewayApi }) : undefined;
  // The serving part (when in the program) hands the gateway its catalog and namespace.
  const gateway = configs.gateway ? deployGateway(cluster, configs.gateway, serving, gatewayApi) : undefined;
  return { monitoring, serving, gateway };
}
