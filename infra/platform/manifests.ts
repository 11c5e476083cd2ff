// Reading rendered Kubernetes objects: the pod templates of workloads, their containers and images, and RBAC rules.
// Shared by the render tests and the air-gap image list (scripts/docs-images.ts), so both see the same pods.
import type { Manifest } from "./helm";

export type Obj = Record<string, unknown>;
export interface PodOwner {
  readonly kind: string;
  readonly name: string;
  /** The pod template's metadata and spec (a bare Pod's own metadata and spec). */
  readonly metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  readonly spec: Obj & { containers: Container[]; initContainers?: Container[]; volumes?: Obj[]; tolerations?: Obj[]; nodeSelector?: Record<string, string>; securityContext?: Obj };
}
export interface Container extends Obj {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  env?: Obj[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Obj;
  volumeMounts?: { name: string; mountPath: string }[];
}

const WORKLOADS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"]);

/** Every pod a set of objects would run: workload templates, CronJob job templates and bare Pods. */
export function podOwners(objects: readonly Manifest[]): PodOwner[] {
  const out: PodOwner[] = [];
  for (const o of objects) {
    const spec = o.spec as Obj | undefined;
    if (WORKLOADS.has(o.kind)) {
      const t = spec?.template as PodOwner | undefined;
      if (t) out.push({ kind: o.kind, name: o.metadata.name, metadata: t.metadata ?? {}, spec: t.spec });
    } else if (o.kind === "CronJob") {
      const t = ((spec?.jobTemplate as Obj)?.spec as Obj)?.template as PodOwner | undefined;
      if (t) out.push({ kind: o.kind, name: o.metadata.name, metadata: t.metadata ?? {}, spec: t.spec });
    } else if (o.kind === "Pod") {
      out.push({ kind: o.kind, name: o.metadata.name, metadata: (o.metadata as PodOwner["metadata"]) ?? {}, spec: o.spec as PodOwner["spec"] });
    }
  }
  return out;
}

/** Containers and init containers of a pod. */
export function allContainers(pod: PodOwner): Container[] {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
}

/** Every image the objects would pull, sorted and without repeats. */
export function imagesOf(objects: readonly Manifest[]): string[] {
  return [...new Set(podOwners(objects).flatMap((p) => allContainers(p).map((c) => c.image)))].sort();
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  nonResourceURLs?: string[];
}

/** Whether a rule lets its subject read (get/list/watch) Secrets. */
export function readsSecrets(rule: PolicyRule): boolean {
  const core = (rule.apiGroups ?? []).some((g) => g === "" || g === "*");
  const secrets = (rule.resources ?? []).some((r) => r === "secrets" || r === "*");
  const reads = (rule.verbs ?? []).some((v) => ["get", "list", "watch", "*"].includes(v));
  return core && secrets && reads;
}

/** Flags given more than once to one container (`--a=1 --a=2`, `-a x -a y`). */
export function duplicatedFlags(args: readonly string[]): string[] {
  const seen = new Map<string, number>();
  for (const a of args) {
    if (!a.startsWith("-")) continue;
    const flag = a.split("=", 1)[0] as string;
    seen.set(flag, (seen.get(flag) ?? 0) + 1);
  }
  return [...seen].filter(([, n]) => n > 1).map(([f]) => f);
}
