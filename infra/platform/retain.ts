// What survives when its part leaves the program (docs/lifecycle.md has the whole table). In Pulumi a resource that
// leaves the program is deleted on the next `up`, unless it is marked retainOnDelete: then it only leaves the
// stack's state and stays in the cluster; the provider's upsertExistingObjects adopts it if it comes back.
//
// Retained: namespaces (shared with other stacks), CRDs (deleting one deletes every object of its kind) and the
// monitoring stack's objects (spec: omitting a component does not remove what it deployed). Not retained: what must
// stop when it is removed (models, the gateway and its keys) and objects that are replaced under the same name (the
// bucket Job): a retained object is not deleted on replacement either, so its replacement would collide with it.
//
// retainOnDelete is not inherited by children, and a Helm v4 Chart or yaml/v2 ConfigFile does not pass it on to the
// objects it renders (pulumi-kubernetes#3065, won't fix), so those get an engine-side transform that marks every
// rendered object.
//
// Retention also applies to replacement: the engine does not delete the old object, and under the same name the
// "new" one is an apply onto it. A change to a field Kubernetes refuses to change (a StatefulSet's volume claim
// templates, a selector, a claim's storage class) would then fail every `pulumi up`. The transform makes the stack
// leave those fields of a retained object as they are (ignoreChanges); docs/lifecycle.md says how to apply such a
// change by hand.
import * as pulumi from "@pulumi/pulumi";

/** Options for every retained resource a stack declares directly. */
export const RETAIN: Readonly<pulumi.CustomResourceOptions> = { retainOnDelete: true };

/** Fields Kubernetes does not let an update change, by kind: a retained object keeps them as created. */
export const IMMUTABLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "kubernetes:apps/v1:StatefulSet": ["spec.selector", "spec.serviceName", "spec.volumeClaimTemplates", "spec.podManagementPolicy"],
  "kubernetes:apps/v1:Deployment": ["spec.selector"],
  "kubernetes:apps/v1:DaemonSet": ["spec.selector"],
  "kubernetes:core/v1:PersistentVolumeClaim": ["spec.storageClassName", "spec.accessModes", "spec.volumeName", "spec.selector", "spec.volumeMode"],
  "kubernetes:batch/v1:Job": ["spec.selector", "spec.template"],
};

/** Marks a resource (here: each object a Chart or ConfigFile renders) retainOnDelete, keeping its immutable fields. */
export const retainOnDeleteTransform: pulumi.ResourceTransform = (args) => {
  const immutable = IMMUTABLE_FIELDS[args.type] ?? [];
  return {
    props: args.props,
    opts: pulumi.mergeOptions(args.opts, { retainOnDelete: true, ...(immutable.length > 0 ? { ignoreChanges: [...immutable] } : {}) }),
  };
};

/** Options for a Helm v4 Chart or a yaml/v2 ConfigFile: it and everything it renders are retained on removal. */
export function retainRenderedOptions(opts: pulumi.ComponentResourceOptions): pulumi.ComponentResourceOptions {
  return pulumi.mergeOptions(opts, { retainOnDelete: true, transforms: [retainOnDeleteTransform] });
}
