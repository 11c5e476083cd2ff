// Autoscaling of a model's decode replicas (KEDA): the one schema of the block, read from a model folder
// (`ms-<slug>/values.yaml` `decode.autoscaling`) and from the stack (`serving:autoscaling.<category>/<model>`, the
// same shape with every field optional, winning key by key), and how the two merge. The modelservice chart's values
// schema accepts nothing under `decode.autoscaling` but `enabled`, so the block never reaches the chart (values.ts).
import { z } from "zod";
import { doc } from "../platform/config";

export const DEFAULT_AUTOSCALING = {
  minReplicas: 0,
  waitingPerReplica: 4,
  activationRequests: 0,
  // A model takes minutes to load: idling out sooner than a reload costs makes it flap between zero and one.
  cooldownSeconds: 900,
  pollingSeconds: 15,
  scaleDownStabilizationSeconds: 600,
  wakeTimeoutSeconds: 600,
  maxHeld: 64,
} as const;

const replicas = z.number().int().min(0).max(1000);

const targetsShape = {
  waitingPerReplica: z
    .number()
    .positive()
    .max(10_000)
    .optional()
    .meta(doc("Requests waiting in vLLM per replica (`vllm:num_requests_waiting`) above which a replica is added.", 4)),
  kvCacheUsage: z
    .number()
    .gt(0)
    .max(1)
    .optional()
    .meta(doc("Average KV-cache use (`vllm:kv_cache_usage_perc`, 0..1) above which replicas are added.", 0.8)),
};

const wakeShape = {
  timeoutSeconds: z
    .number()
    .int()
    .min(10)
    .max(3600)
    .meta(doc("How long the gateway holds a request for a model at zero replicas before answering 503 model_not_ready.", DEFAULT_AUTOSCALING.wakeTimeoutSeconds)),
  maxHeld: z.number().int().min(1).max(10_000).meta(doc("Requests the gateway holds per model while it wakes; more get 429 model_saturated.", DEFAULT_AUTOSCALING.maxHeld)),
};

const fieldsShape = {
  minReplicas: replicas.meta(doc("Fewest decode replicas; 0 scales the model to zero when idle (the gateway holds requests while it wakes).", 0)),
  maxReplicas: replicas.min(1).meta(doc("Most decode replicas; the GPU preflight and rollouts count this many.", 2)),
  activationRequests: z
    .number()
    .min(0)
    .max(10_000)
    .meta(doc("A model at zero wakes, and stays awake, while the gateway holds or serves more requests for it than this.", 0)),
  cooldownSeconds: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .meta(doc("Idle time before a model at `minReplicas: 0` scales to zero; keep it above a reload's duration so the model does not flap.", DEFAULT_AUTOSCALING.cooldownSeconds)),
  pollingSeconds: z.number().int().min(5).max(300).meta(doc("How often KEDA reads the signals (bounds how soon a model at zero wakes).", DEFAULT_AUTOSCALING.pollingSeconds)),
  scaleDownStabilizationSeconds: z
    .number()
    .int()
    .min(0)
    .max(3600)
    .meta(doc("The autoscaler removes a replica only when the signals asked for fewer over this whole window.", DEFAULT_AUTOSCALING.scaleDownStabilizationSeconds)),
};

function checkMinMax(v: { minReplicas?: number; maxReplicas?: number }, ctx: z.RefinementCtx): void {
  if (v.minReplicas !== undefined && v.maxReplicas !== undefined && v.minReplicas > v.maxReplicas) {
    ctx.addIssue({ code: "custom", path: ["minReplicas"], message: `must not exceed maxReplicas (${v.maxReplicas})` });
  }
}

/** The block as a model folder writes it (`decode.autoscaling`), defaults filled in. */
export const AutoscalingSchema = z
  .strictObject({
    minReplicas: fieldsShape.minReplicas.default(DEFAULT_AUTOSCALING.minReplicas),
    maxReplicas: fieldsShape.maxReplicas,
    targets: z
      .strictObject(targetsShape)
      .default({ waitingPerReplica: DEFAULT_AUTOSCALING.waitingPerReplica })
      .refine((t) => t.waitingPerReplica !== undefined || t.kvCacheUsage !== undefined, "name at least one target: waitingPerReplica or kvCacheUsage")
      .meta(doc("The signals that add replicas, each with its threshold (the autoscaler follows the one asking for most).", { waitingPerReplica: 4, kvCacheUsage: 0.8 })),
    activationRequests: fieldsShape.activationRequests.default(DEFAULT_AUTOSCALING.activationRequests),
    cooldownSeconds: fieldsShape.cooldownSeconds.default(DEFAULT_AUTOSCALING.cooldownSeconds),
    pollingSeconds: fieldsShape.pollingSeconds.default(DEFAULT_AUTOSCALING.pollingSeconds),
    scaleDownStabilizationSeconds: fieldsShape.scaleDownStabilizationSeconds.default(DEFAULT_AUTOSCALING.scaleDownStabilizationSeconds),
    wake: z
      .strictObject({ timeoutSeconds: wakeShape.timeoutSeconds.default(DEFAULT_AUTOSCALING.wakeTimeoutSeconds), maxHeld: wakeShape.maxHeld.default(DEFAULT_AUTOSCALING.maxHeld) })
      .prefault({})
      .meta(doc("How the gateway holds requests for a model at zero replicas.", { timeoutSeconds: 600, maxHeld: 64 })),
  })
  .superRefine(checkMinMax);
export type Autoscaling = z.infer<typeof AutoscalingSchema>;
export type AutoscalingInput = z.input<typeof AutoscalingSchema>;

/** `serving:autoscaling.<ref>`: the same fields, each optional; a field set here wins over the folder's. */
export const AutoscalingOverrideSchema = z
  .strictObject({
    minReplicas: fieldsShape.minReplicas.optional(),
    maxReplicas: fieldsShape.maxReplicas.optional(),
    targets: z.strictObject(targetsShape).optional().meta(doc("The signals and thresholds (replace the folder's whole `targets`).", { kvCacheUsage: 0.8 })),
    activationRequests: fieldsShape.activationRequests.optional(),
    cooldownSeconds: fieldsShape.cooldownSeconds.optional(),
    pollingSeconds: fieldsShape.pollingSeconds.optional(),
    scaleDownStabilizationSeconds: fieldsShape.scaleDownStabilizationSeconds.optional(),
    wake: z.strictObject({ timeoutSeconds: wakeShape.timeoutSeconds.optional(), maxHeld: wakeShape.maxHeld.optional() }).optional().meta(doc("Holding requests while the model wakes.", { maxHeld: 16 })),
  })
  .superRefine(checkMinMax);
export type AutoscalingOverride = z.infer<typeof AutoscalingOverrideSchema>;

/**
 * The model's autoscaling: the folder's block with the stack's fields over it (`targets` replaced whole, `wake` key by
 * key), validated again as a whole. Undefined when neither sets one; problems are lines for the caller to prefix.
 */
export function mergeAutoscaling(folder: AutoscalingInput | undefined, stack: AutoscalingOverride | undefined): { value?: Autoscaling; problems: string[] } {
  if (folder === undefined && stack === undefined) return { problems: [] };
  const merged: Record<string, unknown> = { ...(folder ?? {}) };
  for (const [k, v] of Object.entries(stack ?? {})) {
    if (v === undefined) continue;
    merged[k] = k === "wake" ? { ...((folder?.wake as object | undefined) ?? {}), ...(v as object) } : v;
  }
  const parsed = AutoscalingSchema.safeParse(merged);
  if (parsed.success) return { value: parsed.data, problems: [] };
  return { problems: parsed.error.issues.map((i) => `${i.path.length > 0 ? `${i.path.join(".")}: ` : ""}${i.message}`) };
}
