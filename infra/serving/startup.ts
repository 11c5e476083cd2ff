// How long `pulumi up` waits for a model server to become ready. Pulling the weights and loading them onto the GPUs
// takes minutes and grows with the weights: the provider's default await (10 minutes) would mark the update failed
// while a large model is still loading. The wait is derived from the model's volume size (`modelArtifacts.size`,
// the weights plus headroom) on top of a configurable floor, and set through the annotation pulumi-kubernetes reads
// on the Deployment (`pulumi.com/timeoutSeconds`; the chart copies `decode.annotations` onto it). With
// `serving:awaitModelServers: false` the update does not wait at all (`pulumi.com/skipAwait`), and readiness is
// what the gateway reports (a model is listed once a replica is ready; 503 until then).

/** `serving:startupTimeout`: the floor, and the allowance per GiB of weights (download and load). */
export interface StartupTimeout {
  readonly floorMinutes: number;
  readonly secondsPerGiB: number;
}

export const DEFAULT_STARTUP_TIMEOUT: StartupTimeout = { floorMinutes: 20, secondsPerGiB: 30 };

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

/** Seconds to wait for a model server: floor + size × allowance, rounded up to a whole second. */
export function startupTimeoutSeconds(weightsGiB: number | undefined, t: StartupTimeout = DEFAULT_STARTUP_TIMEOUT): number {
  return Math.ceil(t.floorMinutes * 60 + Math.max(0, weightsGiB ?? 0) * t.secondsPerGiB);
}

export const TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds";
export const SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait";

/** The Deployment annotations that carry the wait to pulumi-kubernetes. */
export function awaitAnnotations(weightsGiB: number | undefined, t: StartupTimeout, awaitReady: boolean): Record<string, string> {
  return awaitReady ? { [TIMEOUT_ANNOTATION]: String(startupTimeoutSeconds(weightsGiB, t)) } : { [SKIP_AWAIT_ANNOTATION]: "true" };
}
