// The annotations the metrics server's `kubernetes-pods` job selects pods by (spec "Metrics server": opt-in with
// `prometheus.io/scrape: "true"`, optional `prometheus.io/port` and `prometheus.io/path`).

export const SCRAPE_ANNOTATION_KEYS = { scrape: "prometheus.io/scrape", port: "prometheus.io/port", path: "prometheus.io/path" } as const;

/** Pod annotations that make the metrics server scrape `path` on `port` of every container IP of the pod. */
export function scrapeAnnotations(port: number, path: string): Record<string, string> {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`scrape port must be 1-65535, got ${port}`);
  if (!path.startsWith("/")) throw new Error(`scrape path must start with /, got ${path}`);
  return { [SCRAPE_ANNOTATION_KEYS.scrape]: "true", [SCRAPE_ANNOTATION_KEYS.port]: String(port), [SCRAPE_ANNOTATION_KEYS.path]: path };
}
