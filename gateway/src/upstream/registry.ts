import type { Catalog } from "../config/catalog";
import { ModelPool } from "./model-pool";
import type { Replica } from "./replica";

/** All served models by id, built from the catalog. */
export class ModelRegistry {
  private readonly pools = new Map<string, ModelPool>();
  readonly loadedAt = Math.floor(Date.now() / 1000);

  constructor(catalog: Catalog) {
    for (const model of catalog.models) this.pools.set(model.id, new ModelPool(model));
  }

  get(id: string): ModelPool | undefined {
    return this.pools.get(id);
  }

  all(): ModelPool[] {
    return [...this.pools.values()];
  }

  replicas(): Replica[] {
    return this.all().flatMap((p) => p.replicas);
  }
}
