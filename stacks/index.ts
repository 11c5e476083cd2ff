// Entry point of the Pulumi program (Pulumi.yaml `main: stacks/`): the stack outputs are the parts' outputs. An
// async function, so that the checks of what the program read from the cluster (infra/platform/cluster-checks.ts)
// fail the preview with their message once the reads have answered.
import * as pulumi from "@pulumi/pulumi";
import { settleClusterChecks } from "../infra/platform/cluster-checks";
import { requireStackProvider } from "../infra/platform/provider-guard";
import { program } from "./program";

export = async () => {
  // Before anything is declared: no Kubernetes resource may reach the cluster of the current kube context.
  pulumi.runtime.registerResourceTransform(requireStackProvider);
  // A missing chart archive fails here, naming the file, before any Chart reaches the provider.
  const outputs = program({ requireChartArchives: true });
  await settleClusterChecks();
  return { monitoring: outputs.monitoring, serving: outputs.serving, gateway: outputs.gateway };
};
