// A stack-wide transform the entry point registers: every Kubernetes resource must name a provider (the stack's
// one, handed down by the composition root). The engine's `pulumi:disable-default-providers` says the same, but only
// in stacks whose file sets it; this guard holds in every stack, whatever its file says.
import type * as pulumi from "@pulumi/pulumi";

export const requireStackProvider: pulumi.ResourceTransform = (args) => {
  if (!args.type.startsWith("kubernetes:")) return undefined;
  const opts = args.opts as pulumi.ResourceOptions & { providers?: Record<string, unknown> | unknown[] };
  const mapped = opts.providers !== undefined && !Array.isArray(opts.providers) && "kubernetes" in opts.providers;
  if (opts.provider === undefined && !mapped) {
    throw new Error(
      `${args.type}::${args.name} has no Kubernetes provider: every object must go through the stack's provider (cluster:context), never the current kube context`,
    );
  }
  return undefined;
};
