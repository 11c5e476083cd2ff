// Durations as Prometheus and the Gateway API write them (`1h30m`, `500ms`, `30d`): the Gateway API's units are a
// subset of Prometheus's, so one reader serves both.
const UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };

/** Seconds of a duration (`1d12h`, `600s`, `1500ms`; a year is 365 days, as Prometheus counts it). */
export function durationSeconds(duration: string): number {
  return [...duration.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)].reduce((sum, m) => sum + Number(m[1]) * UNIT_SECONDS[m[2]!]!, 0);
}
