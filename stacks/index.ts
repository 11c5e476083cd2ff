// Composition root of the Pulumi program (Pulumi.yaml `main: stacks/`).
// Each part is deployed when its configuration namespace is present in the stack.
import { deployMonitoringIfConfigured } from "./monitoring";

export const monitoring = deployMonitoringIfConfigured();
