import type { Catalog } from "../config/catalog";
import type { GatewayMetrics } from "./metrics";

/** The inference endpoints a model of each category answers (the `endpoint` label of its successful requests). */
const ENDPOINTS_BY_CATEGORY: Record<Catalog["models"][number]["category"], readonly string[]> = {
  generative: ["/v1/chat/completions", "/v1/completions", "/v1/responses"],
  embedder: ["/v1/embeddings"],
};

/**
 * Starts every usage series a key can move at zero: tokens per key, model and type, successful requests per key,
 * model and endpoint. The metrics server's increase() counts from a series' first sample, so a series born with
 * the traffic that created it loses that traffic (everything between a pod's start or a key's first request and
 * the next scrape): per-key usage reports would come out short. Bounded: keys × the models each may use.
 */
export function seedUsageSeries(metrics: GatewayMetrics, keys: readonly { name: string; models?: readonly string[] }[], catalog: Catalog): void {
  for (const key of keys) {
    // A key given an alias moves the series of the models the alias stands for.
    const allowed = key.models ? new Set(key.models.flatMap((m) => catalog.aliases?.find((a) => a.id === m)?.models ?? [m])) : undefined;
    for (const model of catalog.models) {
      // A LoRA adapter is a model of its own in the usage series, answering its base model's endpoints.
      for (const id of [model.id, ...(model.lora?.adapters.map((a) => a.id) ?? [])]) {
        if (allowed && !allowed.has(id)) continue;
        // Looking a series up creates it at zero.
        for (const type of ["prompt", "completion"]) metrics.tokens.series(id, key.name, type);
        for (const endpoint of ENDPOINTS_BY_CATEGORY[model.category]) metrics.requests.series(id, endpoint, "200", key.name);
      }
    }
  }
}
