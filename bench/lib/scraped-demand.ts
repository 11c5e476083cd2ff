import type { GatewayView } from "../../local/scaler";

/**
 * A gateway in another process as the local scaler's view of demand: its `/metrics`, read every `intervalMs`, as
 * KEDA's trigger reads it (`gateway_requests_in_flight{model}`, which counts `gateway_model_held_requests` too).
 * The gateway's replica addresses are fixed in its catalog file, so publishing is left to its health checks.
 */
export function scrapedDemand(metricsUrl: string, intervalMs = 100): GatewayView & { stop(): void; seen: Set<string> } {
  const inFlight = new Map<string, number>();
  /** Metric names seen with a `model` label (to report which of the trigger's series exist). */
  const seen = new Set<string>();
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    fetch(metricsUrl)
      .then((r) => r.text())
      .then((text) => {
        for (const m of text.matchAll(/^(gateway_requests_in_flight|gateway_model_held_requests)\{model="([^"]+)"\} (\d+(?:\.\d+)?)$/gm)) {
          seen.add(m[1]!);
          if (m[1] === "gateway_requests_in_flight") inFlight.set(m[2]!, Number(m[3]));
        }
      })
      .catch(() => undefined)
      .finally(() => (reading = false));
  }, intervalMs);
  timer.unref();
  return {
    demand: (id) => inFlight.get(id) ?? 0,
    publish: () => undefined,
    stop: () => clearInterval(timer),
    seen,
  };
}
