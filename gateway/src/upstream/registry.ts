import type { Catalog, CatalogAlias } from "../config/catalog";
import { ModelPool } from "./model-pool";
import type { Replica } from "./replica";

/** What a name serves: a model, or a LoRA adapter on a model (requests go to the model's replicas). */
export interface Target {
  readonly pool: ModelPool;
  /** The adapter's id (vLLM's LoRA name), when the name is an adapter. */
  readonly adapter?: string;
}

/** What a requested name resolves to: the model (or adapter) that serves it, and the alias it was reached through. */
export interface Resolved extends Target {
  readonly alias?: CatalogAlias;
}

/** The id a target is known by: the adapter's, else the model's. */
export const targetId = (t: Target): string => t.adapter ?? t.pool.model.id;

/** All served models by id, built from the catalog, their adapters, and the aliases that stand for them. */
export class ModelRegistry {
  private readonly pools = new Map<string, ModelPool>();
  private readonly adapterTargets = new Map<string, Target>();
  private readonly aliasesById = new Map<string, { alias: CatalogAlias; targets: Target[] }>();
  readonly loadedAt = Math.floor(Date.now() / 1000);

  constructor(catalog: Catalog) {
    for (const model of catalog.models) {
      const pool = new ModelPool(model);
      this.pools.set(model.id, pool);
      for (const a of model.lora?.adapters ?? []) this.adapterTargets.set(a.id, { pool, adapter: a.id });
    }
    // The catalog schema guarantees every target exists.
    for (const alias of catalog.aliases ?? []) this.aliasesById.set(alias.id, { alias, targets: alias.models.map((id) => this.target(id)!) });
  }

  /** A model by its own id (not an alias, not an adapter). */
  get(id: string): ModelPool | undefined {
    return this.pools.get(id);
  }

  /** A model or an adapter by its own id. */
  target(id: string): Target | undefined {
    const pool = this.pools.get(id);
    return pool ? { pool } : this.adapterTargets.get(id);
  }

  /**
   * A model or adapter id, or an alias: its first target with a ready replica; when none is ready, its first that
   * wakes on demand (the request is held while it wakes), else its first, so the caller gets its "not ready" answer.
   */
  resolve(name: string, prefer?: ModelPool): Resolved | undefined {
    const direct = this.target(name);
    if (direct) return direct;
    const entry = this.aliasesById.get(name);
    if (!entry) return undefined;
    // `prefer`: the model holding the stored response a turn continues, if the alias stands for it.
    const ts = entry.targets;
    const target = (prefer && ts.find((t) => t.pool === prefer)) ?? ts.find((t) => t.pool.isReady) ?? ts.find((t) => t.pool.wakes) ?? ts[0]!;
    return { ...target, alias: entry.alias };
  }

  /** The names a model can be reached by: its id, its adapters' and the aliases that stand for them (for a key's model list). */
  namesOf(modelId: string): string[] {
    const own = [modelId, ...[...this.adapterTargets].filter(([, t]) => t.pool.model.id === modelId).map(([id]) => id)];
    const aliases = [...this.aliasesById.values()].filter((e) => e.alias.models.some((m) => own.includes(m))).map((e) => e.alias.id);
    return [...own, ...aliases];
  }

  all(): ModelPool[] {
    return [...this.pools.values()];
  }

  /** The adapters, each on its model. */
  adapters(): Target[] {
    return [...this.adapterTargets.values()];
  }

  /** The aliases, each with its targets in order of preference. */
  aliases(): { alias: CatalogAlias; targets: readonly Target[] }[] {
    return [...this.aliasesById.values()];
  }

  replicas(): Replica[] {
    return this.all().flatMap((p) => p.replicas);
  }
}
