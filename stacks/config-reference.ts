// The stack configuration, namespace by namespace, as docs/configuration.md presents it: the schemas of every part,
// assembled here (stacks/ is where the parts meet). `npm run docs:config` writes the page.
import { QUALIFIED_SECRET_KEYS as GATEWAY_SECRETS, gatewaySchema } from "../infra/gateway/config";
import { gatewayEnvReference } from "../infra/gateway/env-reference";
import { QUALIFIED_SECRET_KEYS as MONITORING_SECRETS, monitoringSchema } from "../infra/monitoring/config";
import { clusterSchema, QUALIFIED_CLUSTER_SECRET_KEYS } from "../infra/platform/cluster-config";
import { type NamespaceReference, renderReference } from "../infra/platform/config-reference";
import { platformSchema } from "../infra/platform/labels";
import { SECRET_KEYS as SERVING_SECRETS, servingSchema } from "../infra/serving/config";

const unqualified = (keys: readonly string[]) => keys.map((k) => k.slice(k.indexOf(":") + 1));

export const CONFIG_NAMESPACES: readonly NamespaceReference[] = [
  {
    namespace: "cluster",
    title: "which cluster, and what it is like",
    intro:
      "Every stack needs it: its one Kubernetes provider ([lifecycle.md](lifecycle.md#which-cluster-a-stack-changes)) and what differs between clusters.",
    schema: clusterSchema,
    secretKeys: unqualified(QUALIFIED_CLUSTER_SECRET_KEYS),
  },
  {
    namespace: "platform",
    title: "shared by every stack",
    intro: "One key that every stack of a cluster must set to the same value.",
    schema: platformSchema,
    secretKeys: [],
  },
  {
    namespace: "monitoring",
    title: "the logging and metrics stack",
    intro:
      "Present in a stack: the monitoring part is deployed into namespace `monitoring` ([monitoring.md](monitoring.md)). Every key of an enabled component must be set; a preview names each one that is missing.",
    schema: monitoringSchema,
    secretKeys: unqualified(MONITORING_SECRETS),
  },
  {
    namespace: "serving",
    title: "model serving",
    intro: "Present in a stack: the models listed are deployed from their folders ([models.md](models.md)), and their catalog is handed to the gateway.",
    schema: servingSchema,
    secretKeys: [...SERVING_SECRETS],
  },
  {
    namespace: "gateway",
    title: "the OpenAI-compatible gateway",
    intro:
      "Present in a stack: the gateway is deployed in front of the models of the serving part of the same program, of another stack (`servingStack`), or of `catalog`. Its process settings are the [environment variables](#gateway-environment-variables) below.",
    schema: gatewaySchema,
    secretKeys: unqualified(GATEWAY_SECRETS),
  },
];

const PREAMBLE = `Generated from the zod schemas that validate the configuration (\`npm run docs:config\`). Every key is validated at
\`pulumi preview\`: an unknown key, a wrong type or a value out of range fails the preview with a message naming the key,
before anything is declared.

Set a value with \`pulumi config set gateway:replicas 3\`, a list or object with
\`pulumi config set --path 'serving:models[0]' generative/qwen3-8b\` or in \`Pulumi.<stack>.yaml\` (the examples are JSON,
which is YAML too), a secret with \`pulumi config set --secret monitoring:s3Password\` (it prompts; the stack file holds
only the ciphertext).`;

export function configurationReference(): string {
  return renderReference("Configuration reference", PREAMBLE, CONFIG_NAMESPACES, [gatewayEnvReference()]);
}
