// The stack configurations whose rendered objects the real-API-server suite applies: the dev stack file as it is,
// then variants of it that switch on what the dev stack leaves off (every model folder, HTTPRoutes with a Gateway
// implementation, the GKE provider, no metrics server, the log store on Cloud Storage, an Ingress with an issued
// certificate and the usage ledger with its bucket Job, a model autoscaled by the KEDA the program installs), and every
// stack file under stacks/examples/. Add a variant here: one entry, a name and a configuration.
import * as fs from "fs";
import * as path from "path";
import { QUALIFIED_SECRET_KEYS as MONITORING_SECRETS } from "../infra/monitoring/config";
import { USAGE_LEDGER_SECRET_KEYS } from "../infra/gateway/usage-ledger-config";
import { SECRET_PLACEHOLDER } from "../infra/platform/mocks";
import { REPO_ROOT } from "../infra/platform/charts";
import { withOverrides } from "../infra/platform/config-testing";
import { resolveStackConfig } from "../infra/platform/stack-config";
import { DEFAULT_MODELS_DIR } from "../infra/serving/constants";
import { gpuUsage } from "../infra/serving/gpu-preflight";
import { loadModelFolders } from "../infra/serving/model-folders";
import { planModels } from "../infra/serving/plan";

export interface StackVariant {
  readonly name: string;
  /** `namespace:key` → raw value, as the language host passes it; secrets hold placeholders. */
  readonly config: Record<string, string>;
  readonly secretKeys: readonly string[];
}

const PROJECT = "ai-platform";
/** Secrets every stack reads; one not set in a stack file renders with a placeholder, as `npm run render` does. */
const ALWAYS_READ_SECRETS = MONITORING_SECRETS;
/** Where example stack files are kept (a production stack file, for one); each one found is a variant. */
export const EXAMPLE_STACKS_DIR = path.join(REPO_ROOT, "stacks", "examples");

/** A stack file as the Pulumi CLI would hand it to the program, secrets as placeholders. */
function fromStackFile(name: string, file: string): StackVariant {
  const { config, secretKeys } = resolveStackConfig({ stackFile: file, project: PROJECT, env: {}, knownSecretKeys: ALWAYS_READ_SECRETS });
  return { name, config, secretKeys };
}

/** The usage ledger's keys: the gateway's and the bucket Job's. */
const LEDGER_SECRETS = USAGE_LEDGER_SECRET_KEYS.map((k) => `gateway:${k}`);

/** Every model folder, with exactly the GPUs they ask for and a token for gated weights. */
function everyModel(base: StackVariant): StackVariant {
  const folders = loadModelFolders(DEFAULT_MODELS_DIR);
  const refs = folders.map((f) => f.ref).sort();
  const capacity = Object.fromEntries(gpuUsage(planModels(refs, {}, folders, DEFAULT_MODELS_DIR), {}).map((u) => [u.pool, u.requested]));
  return {
    name: "every model folder",
    config: withOverrides(base.config, { "serving:models": JSON.stringify(refs), "serving:gpuCapacity": JSON.stringify(capacity), "serving:hfToken": "hf_placeholder_token" }),
    secretKeys: [...base.secretKeys, "serving:hfToken"],
  };
}

/** HTTPRoutes: each model's route to an inference Gateway of `provider` (pool mode), and the gateway's own route. */
function routes(base: StackVariant, provider: "istio" | "gke"): Record<string, string> {
  return withOverrides(base.config, {
    "serving:parentGateway": JSON.stringify({ name: "inference-gateway", namespace: "gateway-system" }),
    "serving:inferenceGatewayUrl": "http://inference-gateway.gateway-system.svc.cluster.local",
    "serving:gatewayProvider": provider,
    "gateway:exposure": JSON.stringify({ existingGateway: { name: "public", namespace: "gateway-system", httpsListener: "https", httpListener: "http" }, hostnames: ["llm.example.com"] }),
  });
}

/** The variants, in order; the stack files of `examplesDir` last. */
export function stackVariants(examplesDir = EXAMPLE_STACKS_DIR): StackVariant[] {
  const dev = fromStackFile("dev stack (Pulumi.dev.yaml)", path.join(REPO_ROOT, "Pulumi.dev.yaml"));
  const all = everyModel(dev);
  const components = (JSON.parse(dev.config["monitoring:components"] ?? "[]") as string[]).filter((c) => c !== "metrics");
  const examples = fs.existsSync(examplesDir)
    ? fs
        .readdirSync(examplesDir)
        .filter((f) => /^Pulumi\.[^.]+\.yaml$/.test(f))
        .sort()
        .map((f) => fromStackFile(path.relative(REPO_ROOT, path.join(examplesDir, f)), path.join(examplesDir, f)))
    : [];
  return [
    dev,
    all,
    // This one also installs the Gateway API CRDs itself (`install`); the GKE one assumes the cluster has them.
    {
      name: "HTTPRoutes with Istio",
      config: withOverrides(routes(all, "istio"), { "cluster:crds": JSON.stringify({ inferencePool: "install", gatewayApi: "install" }) }),
      secretKeys: all.secretKeys,
    },
    { name: "HTTPRoutes on GKE", config: routes(all, "gke"), secretKeys: all.secretKeys },
    { name: "no metrics server", config: withOverrides(dev.config, { "monitoring:components": JSON.stringify(components) }), secretKeys: dev.secretKeys },
    {
      name: "log store on Cloud Storage with Workload Identity",
      config: withOverrides(dev.config, {
        "monitoring:objectStore": "gcs",
        "monitoring:s3Region": "europe-west1",
        "monitoring:s3Endpoint": undefined,
        "monitoring:s3User": undefined,
        "monitoring:s3Password": undefined,
        "monitoring:s3ServiceAccountAnnotations": JSON.stringify({ "iam.gke.io/gcp-service-account": "logstore@my-project.iam.gserviceaccount.com" }),
        "monitoring:s3BucketJobServiceAccountAnnotations": JSON.stringify({ "iam.gke.io/gcp-service-account": "logstore-bucket@my-project.iam.gserviceaccount.com" }),
      }),
      secretKeys: dev.secretKeys.filter((k) => k !== "monitoring:s3Password"),
    },
    {
      name: "exposed through ingress-nginx, certificate from an Issuer",
      config: withOverrides(dev.config, {
        "gateway:exposure": JSON.stringify({ ingress: { className: "nginx", controller: "ingress-nginx" }, hostnames: ["llm.example.com"], tls: { issuer: { name: "internal-ca", kind: "Issuer" } } }),
        "gateway:usageLedger": JSON.stringify({ bucket: "ai-platform-usage", s3Endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", egress: { namespace: "app-shaide" } }),
        ...Object.fromEntries(LEDGER_SECRETS.map((k) => [k, SECRET_PLACEHOLDER])),
      }),
      secretKeys: [...dev.secretKeys, ...LEDGER_SECRETS],
    },
    {
      name: "autoscaled models, KEDA installed",
      config: withOverrides(all.config, {
        "cluster:keda": "install",
        // One GPU more on the on-prem nodes: qwen3-8b's second replica.
        "serving:gpuCapacity": JSON.stringify({ ...(JSON.parse(all.config["serving:gpuCapacity"] ?? "{}") as Record<string, number>), default: (JSON.parse(all.config["serving:gpuCapacity"] ?? "{}").default ?? 0) + 1 }),
        "serving:autoscaling": JSON.stringify({ "generative/qwen3-8b": { minReplicas: 0, maxReplicas: 2, targets: { waitingPerReplica: 4, kvCacheUsage: 0.8 } }, "generative/sim-chat": { minReplicas: 1, maxReplicas: 3 } }),
      }),
      secretKeys: all.secretKeys,
    },
    ...examples,
  ];
}
