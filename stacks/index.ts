// Composition root of the Pulumi program (Pulumi.yaml `main: stacks/`).
// Each part is deployed when its configuration namespace is present in the stack.
import { deployGatewayIfConfigured } from "./gateway";
import { deployMonitoringIfConfigured } from "./monitoring";
import { deployServingIfConfigured } from "./serving";

export const monitoring = deployMonitoringIfConfigured();
export const serving = deployServingIfConfigured();
// The serving part (when in the program) hands the gateway its catalog and namespace.
export const gateway = deployGatewayIfConfigured(serving);
