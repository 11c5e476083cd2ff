import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { CatalogSchema, type Catalog, type CatalogInput } from "./catalog";
import { issueLines } from "../api/schemas";

/** Validates a catalog object; the error names every offending field. */
export function parseCatalog(input: unknown, source = "catalog"): Catalog {
  const result = CatalogSchema.safeParse(input);
  if (result.success) return result.data;
  throw new Error(`Invalid model catalog (${source}):\n  ${issueLines(result.error.issues).join("\n  ")}`);
}

/** Reads a catalog file; YAML is a superset of JSON, so one parser serves both. */
export function loadCatalogFile(path: string): Catalog {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`Cannot read model catalog ${path}: ${(err as Error).message}`);
  }
  return parseCatalog(doc, path);
}

export type { Catalog, CatalogInput };
