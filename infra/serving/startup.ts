// How long a model may take to come up. Loading the weights onto the GPUs (and compiling CUDA graphs) takes minutes
// and grows with the weights; downloading them, once, takes longer still. Both budgets are a configurable floor plus
// an allowance per GiB of the model's weights (model.yaml `weights.sizeGiB`):
//   - the download Job's wait (`serving:downloadTimeout`);
//   - the model server's (`serving:startupTimeout`): what `pulumi up` waits for the Deployment (the provider's own
//     default of 10 minutes would fail the update while a large model still loads) and the startup probe's budget
//     (values.ts), so the kubelet does not restart a server that is still loading.
// pulumi-kubernetes reads the wait from an annotation on the object (the chart copies `decode.annotations` onto the
// Deployment). With `serving:awaitModelServers: false` the update does not wait at all, and readiness is what the
// gateway reports (a model is listed once a replica is ready; 503 until then).
import { awaitFor } from "../platform/await-annotations";

export { SKIP_AWAIT_ANNOTATION, TIMEOUT_ANNOTATION } from "../platform/await-annotations";

/** A budget: the floor, and the allowance per GiB of weights. */
export interface StartupTimeout {
  readonly floorMinutes: number;
  readonly secondsPerGiB: number;
}

export const DEFAULT_STARTUP_TIMEOUT: StartupTimeout = { floorMinutes: 20, secondsPerGiB: 30 };
/** The weights download: a slow registry link moves ~10 MiB/s, about 100 s per GiB. */
export const DEFAULT_DOWNLOAD_TIMEOUT: StartupTimeout = { floorMinutes: 10, secondsPerGiB: 120 };

const BINARY: Readonly<Record<string, number>> = { Ki: 2 ** -20, Mi: 2 ** -10, Gi: 1, Ti: 2 ** 10 };
const DECIMAL: Readonly<Record<string, number>> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** A Kubernetes storage quantity (`20Gi`, `140G`, `5Mi`) in GiB; undefined when it is not one. */
export function quantityGiB(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === "number") return q / 2 ** 30;
  const m = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2];
  if (unit === undefined) return n / 2 ** 30;
  if (unit in BINARY) return n * (BINARY[unit] as number);
  return (n * (DECIMAL[unit] as number)) / 2 ** 30;
}

/** Seconds of a budget for weights of this size: floor + size × allowance, rounded up to a whole second. */
export function startupTimeoutSeconds(weightsGiB: number | undefined, t: StartupTimeout = DEFAULT_STARTUP_TIMEOUT): number {
  return Math.ceil(t.floorMinutes * 60 + Math.max(0, weightsGiB ?? 0) * t.secondsPerGiB);
}

/** The Deployment annotations that carry the wait to pulumi-kubernetes. */
export function awaitAnnotations(weightsGiB: number | undefined, t: StartupTimeout, awaitReady: boolean): Record<string, string> {
  return awaitFor(startupTimeoutSeconds(weightsGiB, t), awaitReady);
}
