// Entry point of the Pulumi program (Pulumi.yaml `main: stacks/`): the stack outputs are the parts' outputs.
import * as pulumi from "@pulumi/pulumi";
import { requireStackProvider } from "../infra/platform/provider-guard";
import { program } from "./program";

// Before anything is declared: no Kubernetes resource may reach the cluster of the current kube context.
pulumi.runtime.registerResourceTransform(requireStackProvider);

// A missing chart archive fails here, naming the file, before any Chart reaches the provider.
const outputs = program({ requireChartArchives: true });
export const monitoring = outputs.monitoring;
export const serving = outputs.serving;
export const gateway = outputs.gateway;
