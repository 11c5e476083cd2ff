// "Omitting a component skips its deployment and does not remove existing resources" (monitoring spec), and the
// same holds for the other stacks. In Pulumi a resource that leaves the program is deleted on the next `up`,
// unless it is marked retainOnDelete: then it only leaves the stack's state and stays in the cluster.
//
// retainOnDelete is not inherited by children, and a Helm v4 Chart does not pass it on to the objects it renders
// (pulumi-kubernetes#3065, won't fix), so charts get an engine-side transform that marks every rendered object.
import * as pulumi from "@pulumi/pulumi";

/** Options for every resource a stack declares directly. */
export const RETAIN: Readonly<pulumi.CustomResourceOptions> = { retainOnDelete: true };

/** Marks a resource (here: each object a Helm v4 Chart renders) retainOnDelete. */
export const retainOnDeleteTransform: pulumi.ResourceTransform = (args) => ({
  props: args.props,
  opts: pulumi.mergeOptions(args.opts, { retainOnDelete: true }),
});

/** Options for a Helm v4 Chart: the chart and everything it renders are retained on removal. */
export function retainChartOptions(opts: pulumi.ComponentResourceOptions): pulumi.ComponentResourceOptions {
  return pulumi.mergeOptions(opts, { retainOnDelete: true, transforms: [retainOnDeleteTransform] });
}
