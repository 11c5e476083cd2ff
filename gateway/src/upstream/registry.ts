import type { Catalog, CatalogAlias } from "../config/catalog";
import { ModelPool } from "./model-pool";
import type { Replica } from "./replica";

/** What a requested name resolves to: the model that serves it, and the alias it was reached through. */
export interface Resolved {
  readonly pool: ModelPool;
  readonly alias?: CatalogAlias;
}

/** All served models by id, built from the catalog, and the aliases that stand for them. */
export class ModelRegistry {
  private readonly pools = new Map<string, ModelPool>();
  private readonly aliasesById = new Map<string, { alias: CatalogAlias; pools: ModelPool[] }>();
  readonly loadedAt = Math.floor(Date.now() / 1000);

  constructor(catalog: Catalog) {
    for (const model of catalog.models) this.pools.set(model.id, new ModelPool(model));
    // The catalog schema guarantees every target exists.
    for (const alias of catalog.aliases ?? []) this.aliasesById.set(alias.id, { alias, pools: alias.models.map((id) => this.pools.get(id)!) });
  }

  /** A model by its own id (not an alias). */
  get(id: string): ModelPool | undefined {
    return this.pools.get(id);
  }

  /**
   * A model id, or an alias: its first model with a ready replica; when none is ready, its first model, so the
   * caller gets that model's "not ready" answer.
   */
  resolve(name: string): Resolved | undefined {
    const pool = this.pools.get(name);
    if (pool) return { pool };
    const entry = this.aliasesById.get(name);
    if (!entry) return undefined;
    return { pool: entry.pools.find((p) => p.isReady) ?? entry.pools[0]!, alias: entry.alias };
  }

  all(): ModelPool[] {
    return [...this.pools.values()];
  }

  /** The aliases, each with its models in order of preference. */
  aliases(): { alias: CatalogAlias; pools: readonly ModelPool[] }[] {
    return [...this.aliasesById.values()];
  }

  replicas(): Replica[] {
    return this.all().flatMap((p) => p.replicas);
  }
}
