// The model catalog as the gateway reads it (GATEWAY_CATALOG), rendered once for the ConfigMap and for the
// checksum annotation that rolls the pods when it changes.
import { createHash } from "crypto";
import { stringify } from "yaml";
import { CatalogSchema, type CatalogInput } from "../../gateway/src/config/catalog";

/** The catalog file text; throws naming every problem when the gateway would refuse the catalog at start. */
export function renderCatalog(catalog: CatalogInput): string {
  const parsed = CatalogSchema.safeParse(catalog);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`Invalid model catalog for the gateway:\n  ${lines.join("\n  ")}`);
  }
  // The input as given (defaults stay the gateway's), in YAML: what an operator reads with kubectl.
  return stringify(catalog);
}

/** SHA-256 of the catalog text: the pod template annotation that makes a catalog change a rollout. */
export function catalogChecksum(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
