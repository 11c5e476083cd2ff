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
   * A model id, or an alias: its first model with a ready replica; when none is ready, its first model that wakes on
   * demand (the request is held while it wakes), else its first model, so the caller gets its "not ready" answer.
   */
  resolve(name: string, prefer?: ModelPool): Resolved | undefined {
    const pool = this.pools.get(name);
    if (pool) return { pool };
    const entry = this.aliasesById.get(name);
    if (!entry) return undefined;
    // `prefer`: the model holding the stored response a turn continues, if the alias stands for it.
    const preferred = prefer && entry.pools.includes(prefer) ? prefer : undefined;
    const target = preferred ?? entry.pools.find((p) => p.isReady) ?? entry.pools.find((p) => p.wakeQueue) ?? entry.pools[0]!;
    return { pool: target, alias: entry.alias };
  }

  /** The names a model can be reached by: its id and the aliases that stand for it (for a key's model list). */
  namesOf(modelId: string): string[] {
    return [modelId, ...[...this.aliasesById.values()].filter((e) => e.alias.models.includes(modelId)).map((e) => e.alias.id)];
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
