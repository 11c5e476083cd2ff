// The whole Pulumi program, as one function the entry point (stacks/index.ts), the offline render and the tests
// all run. It is the composition root: it reads and checks every configuration namespace and plans every part first
// (so one preview names every bad key, and nothing is declared when anything is wrong), then makes the stack's one
// Kubernetes provider, the CRDs the parts need, and the parts.
import * as pulumi from "@pulumi/pulumi";
import { CONFIG_NAMESPACE as GATEWAY, type GatewayConfig, loadGatewayConfig, loadGatewaySecrets, QUALIFIED_SECRET_KEYS as GATEWAY_SECRETS } from "../infra/gateway";
import { CONFIG_NAMESPACE as MONITORING, loadMonitoringConfig, monitoringChartArchives, loadMonitoringSecrets, type MonitoringConfig, QUALIFIED_SECRET_KEYS as MONITORING_SECRETS } from "../infra/monitoring";
import { missingChartArchives } from "../infra/platform/charts";
import { createCluster } from "../infra/platform/cluster";
import { CLUSTER_NAMESPACE, type ClusterConfig, loadClusterConfig, loadClusterSecrets, QUALIFIED_CLUSTER_SECRET_KEYS } from "../infra/platform/cluster-config";
import { ConfigError, hasNamespace, isSecretConfig } from "../infra/platform/config";
import { ClusterCrds, type ClusterCrdsArgs, defaultCrdSource, GATEWAY_CRDS, REQUIRED_CRDS } from "../infra/platform/crds";
import { createDigestKey } from "../infra/platform/secret-digest";
import { CONFIG_NAMESPACE as SERVING, loadServingConfig, loadServingSecrets, QUALIFIED_SECRET_KEYS as SERVING_SECRETS } from "../infra/serving";
import { deployKeda, kedaChartArchives, kedaCrdRequest } from "./autoscaling";
import { deployGateway, type GatewayOutputs, type GatewayPlan, planGateway } from "./gateway";
import { deployMonitoring, type MonitoringOutputs } from "./monitoring";
import { deployServing, planServing, servingCrdNeeds, servingNamespace, type ServingOutputs, type ServingPlan } from "./serving";

export interface ProgramOutputs {
  readonly monitoring?: MonitoringOutputs;
  readonly serving?: ServingOutputs;
  readonly gateway?: GatewayOutputs;
}

/** Configuration namespaces a stack may use: the platform's, and the engine's own (`pulumi:`). */
export const KNOWN_NAMESPACES = [CLUSTER_NAMESPACE, "platform", MONITORING, SERVING, GATEWAY, "pulumi"] as const;
const SECRET_KEYS = [...QUALIFIED_CLUSTER_SECRET_KEYS, ...MONITORING_SECRETS, ...SERVING_SECRETS, ...GATEWAY_SECRETS];

export interface ProgramOptions {
  /**
   * Fail the preview, naming the file, when a chart archive the stack renders from is not there. The entry point
   * (index.ts) sets it; the mock runs and the offline render leave it off, since the mock engine renders no chart.
   */
  readonly requireChartArchives?: boolean;
}

interface Plan {
  readonly cluster: ClusterConfig;
  readonly monitoring?: MonitoringConfig;
  readonly serving?: ServingPlan;
  readonly gateway?: GatewayPlan;
}

/** Runs a step, collecting its ConfigError's lines instead of stopping at the first bad namespace. */
function collect<T>(problems: string[], step: () => T): T | undefined {
  try {
    return step();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return undefined;
  }
}

/** Keys of namespaces nobody reads (a typo such as `gatway:`), and secrets stored in plain text. */
function stackFileProblems(): string[] {
  const problems: string[] = [];
  const keys = Object.keys(pulumi.runtime.allConfig());
  for (const key of keys) {
    const ns = key.slice(0, key.indexOf(":"));
    if (!(KNOWN_NAMESPACES as readonly string[]).includes(ns)) problems.push(`${key}: unknown configuration namespace "${ns}" (the stack reads ${KNOWN_NAMESPACES.join(", ")})`);
  }
  for (const key of SECRET_KEYS.filter((k) => keys.includes(k))) {
    if (isSecretConfig(key) === false) problems.push(`${key}: must be stored as a secret (pulumi config set --secret ${key} …)`);
  }
  return problems;
}

/** Every namespace validated and every part planned, before anything is declared; undefined when nothing to deploy. */
export function planProgram(options: ProgramOptions = {}): Plan | undefined {
  const parts = [MONITORING, SERVING, GATEWAY].filter(hasNamespace);
  const problems = stackFileProblems();
  if (parts.length === 0 && !hasNamespace(CLUSTER_NAMESPACE)) {
    if (problems.length > 0) throw new ConfigError("stack", problems);
    return undefined;
  }
  const cluster = collect(problems, loadClusterConfig);
  const monitoring = parts.includes(MONITORING) ? collect(problems, loadMonitoringConfig) : undefined;
  const servingCfg = parts.includes(SERVING) ? collect(problems, loadServingConfig) : undefined;
  const gatewayCfg = parts.includes(GATEWAY) ? collect(problems, loadGatewayConfig) : undefined;
  if (problems.length > 0 || !cluster) throw new ConfigError("stack", [...new Set(problems)]);

  const serving = servingCfg ? collect(problems, () => planServing(servingCfg, cluster.domain, gatewayCfg?.namespace)) : undefined;
  if (problems.length > 0) throw new ConfigError("stack", problems);
  const gateway = gatewayCfg ? collect(problems, () => planGateway(gatewayCfg, serving ? { catalog: serving.catalog, namespace: serving.cfg.namespace } : undefined)) : undefined;
  if (options.requireChartArchives) {
    problems.push(
      ...missingChartArchives([
        ...(monitoring ? monitoringChartArchives(monitoring) : []),
        ...(serving && serving.models.length > 0 ? serving.cfg.chartArchives : []),
        ...kedaChartArchives(cluster, serving),
      ]),
    );
  }
  if (problems.length > 0) throw new ConfigError("stack", problems);
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
  const exposure = gateway?.exposure;
  // An own Gateway is declared, an existing one read, and a GatewayClass read: those kinds must exist beside HTTPRoute.
  const gatewayKind = exposure?.ownGateway !== undefined || exposure?.existingGateway !== undefined;
  if (needs.gatewayApi || gatewayKind) {
    args.gatewayApi = {
      mode: cluster.crds.gatewayApi,
      source: cluster.crdSources.gatewayApi ?? defaultCrdSource("gatewayApi", cluster.gatewayApiVersion),
      names: [...REQUIRED_CRDS.gatewayApi, ...(gatewayKind ? GATEWAY_CRDS : [])],
    };
  }
  if (exposure?.tls?.issuer) args.certManager = { mode: cluster.crds.certManager, names: REQUIRED_CRDS.certManager };
  const keda = kedaCrdRequest(cluster, serving);
  if (keda) args.keda = keda;
  return args;
}

export function program(options: ProgramOptions = {}): ProgramOutputs {
  const plan = planProgram(options);
  if (!plan || (!plan.monitoring && !plan.serving && !plan.gateway)) return {};

  const cluster = createCluster(plan.cluster, loadClusterSecrets().kubeconfig);
  const digestKey = createDigestKey();
  const crds = new ClusterCrds("cluster-crds", crdRequests(plan.cluster, plan.serving, plan.gateway?.cfg), { providers: { kubernetes: cluster.provider } });
  const gatewayApi = crds.ready.gatewayApi ?? [];

  const monitoring = plan.monitoring ? deployMonitoring(cluster, plan.monitoring, loadMonitoringSecrets(plan.monitoring), digestKey) : undefined;
  const namespace = plan.serving ? servingNamespace(cluster, plan.serving.cfg) : undefined;
  const autoscaler = plan.serving && namespace !== undefined ? deployKeda(cluster, plan.cluster, plan.serving, namespace, crds.ready.keda ?? []) : [];
  const serving =
    plan.serving && namespace !== undefined
      ? deployServing({
          cluster,
          plan: plan.serving,
          namespace,
          secrets: loadServingSecrets(plan.serving.cfg),
          crds: { inferencePool: crds.ready.inferencePool ?? [], gatewayApi },
          autoscaler,
          digestKey,
        })
      : undefined;
  const gatewaySecrets = plan.gateway ? loadGatewaySecrets() : undefined;
  const gateway = plan.gateway
    ? deployGateway({
        cluster,
        plan: plan.gateway,
        redisUrl: gatewaySecrets?.redisUrl,
        usageLedgerKeys: gatewaySecrets?.usageLedger,
        upstreamApiKey: serving?.upstreamApiKey ?? gatewaySecrets?.upstreamApiKey,
        crds: { gatewayApi, certManager: crds.ready.certManager ?? [] },
        digestKey,
      })
    : undefined;
  return { monitoring, serving, gateway };
}
