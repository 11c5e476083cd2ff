// Entry point of the Pulumi program (Pulumi.yaml `main: stacks/`): the stack outputs are the parts' outputs.
import { program } from "./program";

const outputs = program();
export const monitoring = outputs.monitoring;
export const serving = outputs.serving;
export const gateway = outputs.gateway;
