// How a model's Deployments roll. The modelservice chart (v0.4.5) leaves Kubernetes' default, RollingUpdate with a
// 25 % surge: on a GPU pool without a spare GPU the surge pod stays Pending forever and the rollout never ends
// (the spec's trap, on every upgrade). So a model rolls with a surge only when the GPUs it would borrow are spare
// after every referenced model is counted; otherwise it is recreated (old pods stop before new ones start). The
// chart has no key for the strategy: a transform sets it on the rendered Deployments (served-model.ts).
import type { PlannedModel } from "./plan";

export type Rollout =
  /** One surge pod at a time, never fewer ready pods than replicas (it fits in the pool's spare GPUs). */
  | { readonly type: "RollingUpdate"; readonly surgeGpus: number }
  /** Old pods go before new ones start: no extra GPU, a gap in this model's service while the new pod loads. */
  | { readonly type: "Recreate"; readonly reason: string };

/** GPUs one surge of the model borrows: a decode pod, and a prefill pod when it has prefill. */
export function surgeGpus(m: PlannedModel): number {
  const g = m.def.gpus;
  return g.perDecodeReplica + (g.prefillReplicas > 0 ? g.perPrefillReplica : 0);
}

export interface RolloutArgs {
  readonly capacity: Readonly<Record<string, number>>;
  /** A ReadWriteOnce cache attaches to one node: a surge pod elsewhere could not mount it. */
  readonly cacheAccessMode: "ReadWriteMany" | "ReadWriteOnce";
  /** Refs of models whose weights come from a cache volume. */
  readonly cached: ReadonlySet<string>;
}

/**
 * The rollout of each model, in `serving:models` order: spare GPUs (capacity minus everything requested) go to the
 * first models that need them for a surge; the rest recreate. Models without GPUs keep the default surge.
 */
export function planRollouts(models: readonly PlannedModel[], args: RolloutArgs): Map<string, Rollout> {
  const spare = new Map<string, number>();
  for (const m of models) if (m.gpuPool !== undefined) spare.set(m.gpuPool, (spare.get(m.gpuPool) ?? args.capacity[m.gpuPool] ?? 0) - m.gpus);
  const out = new Map<string, Rollout>();
  for (const m of models) {
    const need = m.gpuPool === undefined ? 0 : surgeGpus(m);
    if (m.maxReplicas === 0 && need > 0) {
      out.set(m.def.ref, { type: "Recreate", reason: "it is scaled to zero" });
    } else if (args.cacheAccessMode === "ReadWriteOnce" && args.cached.has(m.def.ref)) {
      out.set(m.def.ref, { type: "Recreate", reason: "its ReadWriteOnce weights volume attaches to one node" });
    } else if (need === 0) {
      out.set(m.def.ref, { type: "RollingUpdate", surgeGpus: 0 });
    } else if ((spare.get(m.gpuPool as string) ?? 0) >= need) {
      spare.set(m.gpuPool as string, (spare.get(m.gpuPool as string) as number) - need);
      out.set(m.def.ref, { type: "RollingUpdate", surgeGpus: need });
    } else {
      out.set(m.def.ref, { type: "Recreate", reason: `node group "${m.gpuPool}" has no ${need} spare GPU${need === 1 ? "" : "s"} for a surge pod` });
    }
  }
  return out;
}

/** The Deployment `spec.strategy` of a rollout. */
export function deploymentStrategy(r: Rollout): Record<string, unknown> {
  return r.type === "Recreate" ? { type: "Recreate" } : { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
}

type Manifest = { kind?: unknown; apiVersion?: unknown; spec?: Record<string, unknown> };

/** A rendered object with the rollout applied when it is one of the model's Deployments; other objects unchanged. */
export function withRollout<T extends Manifest>(obj: T, rollout: Rollout): T {
  if (obj.kind !== "Deployment" || obj.apiVersion !== "apps/v1" || !obj.spec) return obj;
  return { ...obj, spec: { ...obj.spec, strategy: deploymentStrategy(rollout) } };
}
