// Fixed facts of the model-serving stack (spec "Model management"; deploy reference §1).
import * as path from "path";
import { DEFAULT_DNS_REFRESH_MS } from "../../gateway/src/config/catalog";
import { DEFAULT_HEALTH_INTERVAL_MS } from "../../gateway/src/config/settings";
import { REPO_ROOT } from "../platform/charts";

export const CONFIG_NAMESPACE = "serving";
export const DEFAULT_NAMESPACE = "app-serving";

/** Where the model folders live: `deployments/models/<category>/<model>/{gaie-<slug>,ms-<slug>}/values.yaml`. */
export const DEFAULT_MODELS_DIR = path.join(REPO_ROOT, "deployments", "models");

/** `<category>` directory names; also the gateway catalog's categories. */
export const CATEGORIES = ["generative", "embedder"] as const;
export type Category = (typeof CATEGORIES)[number];

/** Chart archives (`charts/<component>-<version>.tgz`) and the versions the llm-d guides pin (both charts tag with a `v`). */
export const PINNED_CHARTS = {
  "llm-d-modelservice": { version: "v0.4.5", source: "https://llm-d-incubation.github.io/llm-d-modelservice/#llm-d-modelservice" },
  inferencepool: { version: "v1.3.0", source: "oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool" },
} as const;

/** Release name prefixes: the folder names are the release names (`gaie-<slug>`, `ms-<slug>`), as in the llm-d guides. */
export const POOL_PREFIX = "gaie-";
export const SERVER_PREFIX = "ms-";

/** Value of `app.kubernetes.io/part-of` on every model-server pod (the collector and dashboards select on it). */
export const PART_OF = "app-serving";

/**
 * The serving namespace's Pod Security level: baseline. The model servers' vLLM images run as root (restricted
 * requires runAsNonRoot) and the picker chart sets no securityContext; nothing they run needs the host's namespaces,
 * paths or ports, or a capability baseline refuses.
 */
export const SERVING_POD_SECURITY_LEVEL = "baseline";

/** On-prem GPU nodes carry this label instead of a node group; models that name no node group select it. */
export const ONPREM_GPU_SELECTOR: Readonly<Record<string, string>> = { workload: "gpu" };
/** `serving:gpuCapacity` key of the on-prem GPU nodes (models without `nodeGroup`). */
export const DEFAULT_GPU_POOL = "default";

/** Role label the modelservice chart adds to decode pods (and to the Deployment selector). */
export const DECODE_ROLE_LABEL = { key: "llm-d.ai/role", value: "decode" } as const;

/** Defaults of the modelservice chart that the loader needs to reason about values (chart values.yaml v0.4.x). */
export const MODELSERVICE_DEFAULTS = { servicePort: 8000, proxyEnabled: true, proxyTargetPort: 8200, replicas: 1 } as const;

/** The llm-d simulator image: the chart requests no accelerator for it, whatever `accelerator.type` says. */
export const SIMULATOR_IMAGE_MARKER = "llm-d-inference-sim";

/**
 * How long a stopping model server keeps serving what it has in flight (`serving:drainSeconds`). The llm-d guides
 * drain 30 s to 300 s; long reasoning streams need minutes, and the drain ends as soon as nothing is in flight.
 */
export const DEFAULT_DRAIN_SECONDS = 120;

/** Kubernetes' DNS (CoreDNS's kubernetes plugin) answers with a 5 s TTL: a pod that left may be listed that long. */
export const CLUSTER_DNS_TTL_SECONDS = 5;

/**
 * How long a stopping model server keeps serving and accepting before it drains (its preStop delay): long enough for
 * every gateway pod to stop sending it requests. A terminating pod leaves the headless Service's addresses at once;
 * the cluster's DNS may answer with it for one TTL, the gateway resolves again every refresh, and one health interval
 * is the margin. In pool mode the endpoint picker watches the pods and drops a terminating one within a second.
 */
export const LEAVE_DELAY_SECONDS = CLUSTER_DNS_TTL_SECONDS + Math.ceil((DEFAULT_DNS_REFRESH_MS + DEFAULT_HEALTH_INTERVAL_MS) / 1000);
