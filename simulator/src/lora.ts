import type { LoraConfig } from "./config";
import type { EngineStalls } from "./engine-stalls";
import { VllmError } from "./errors";
import type { StatCounters } from "./stats";

/**
 * LoRA adapters as vLLM 0.14 keeps them. The API server registers them by name (`OpenAIServingModels.lora_requests`,
 * insertion order, each load a new integer id); the engine keeps the loaded weights in an LRU of `maxCpuLoras` and
 * the adapters the batch can use in an LRU of `maxLoras` GPU slots (vllm/lora/model_manager.py
 * `LRUCacheLoRAModelManager`). Unloading only forgets the name: the weights stay cached until evicted, as in vLLM.
 */

export interface Adapter {
  /** vLLM's `lora_int_id`: a new one for every load, so a re-loaded name is a new adapter to the engine. */
  id: number;
  name: string;
  path: string;
  /** The base model it belongs to: `/v1/models` shows it as `parent`. */
  parent: string;
}

/** An adapter load or unload refused, with the status, body and message vLLM answers. */
export const loraError = (status: number, message: string, type: string): VllmError => new VllmError(status, message, null, type);

/** Keys in recency order (a Map keeps insertion order; re-inserting moves a key to the end). */
class Lru {
  private readonly keys = new Map<number, true>();

  constructor(private readonly capacity: number) {}

  has(key: number): boolean {
    return this.keys.has(key);
  }

  /** Adds or refreshes a key; returns the keys evicted beyond capacity. */
  add(key: number): number[] {
    this.keys.delete(key);
    this.keys.set(key, true);
    const evicted: number[] = [];
    for (const oldest of this.keys.keys()) {
      if (this.keys.size <= this.capacity) break;
      this.keys.delete(oldest);
      evicted.push(oldest);
    }
    return evicted;
  }

  delete(key: number): void {
    this.keys.delete(key);
  }
}

export class LoraAdapters {
  private readonly registered = new Map<string, Adapter>();
  /** vLLM's per-name lock: a load, unload or request for a name waits for the one under way. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly cpu: Lru;
  private readonly gpu: Lru;
  private readonly missingPath: RegExp | undefined;
  private lastId = 0;

  constructor(
    private readonly config: LoraConfig,
    private readonly servedNames: readonly string[],
    private readonly stalls: EngineStalls,
    private readonly counters: StatCounters,
  ) {
    this.cpu = new Lru(config.maxCpuLoras ?? config.maxLoras);
    this.gpu = new Lru(config.maxLoras);
    this.missingPath = config.missingPathPattern === undefined ? undefined : new RegExp(config.missingPathPattern);
  }

  /** The `--lora-modules` adapters, registered before the server listens; as vLLM, a failure stops the start. */
  registerStatic(): void {
    for (const module of this.config.modules) {
      const adapter = this.newAdapter(module.name, module.path, module.baseModelName);
      const missing = this.missing(adapter);
      if (missing) throw new Error(missing.message);
      this.resident(adapter);
      this.registered.set(adapter.name, adapter);
    }
  }

  list(): Adapter[] {
    return [...this.registered.values()];
  }

  get(name: string): Adapter | undefined {
    return this.registered.get(name);
  }

  /** The adapter a request names, once a load of that name under way is over. */
  async resolve(name: string): Promise<Adapter | undefined> {
    await this.locks.get(name)?.catch(() => undefined);
    return this.registered.get(name);
  }

  /** `POST /v1/load_lora_adapter` (`OpenAIServingModels.load_lora_adapter`): the success text, or vLLM's error. */
  load(name: string, path: string): Promise<string> {
    return this.locked(name, async () => {
      if (!name || !path) throw loraError(400, "Both 'lora_name' and 'lora_path' must be provided.", "InvalidUserInput");
      if (this.registered.has(name)) throw loraError(400, `The lora adapter '${name}' has already been loaded.`, "InvalidUserInput");
      const adapter = this.newAdapter(name, path);
      // The engine's add_lora fails, and the API server turns its message into 400, or 404 for a missing adapter.
      if (!this.config.enabled) throw loraError(400, "Call to add_lora method failed: LoRA is not enabled. Use --enable-lora to enable LoRA.", "BadRequestError");
      const missing = this.missing(adapter);
      if (missing) throw missing;
      await this.stalls.stall(this.config.loadTimeMs);
      this.counters.loraLoadsTotal++;
      this.resident(adapter);
      this.registered.set(name, adapter);
      return `Success: LoRA adapter '${name}' added successfully.`;
    });
  }

  /** `POST /v1/unload_lora_adapter`: forgets the name; requests already running on it finish. */
  unload(name: string): Promise<string> {
    return this.locked(name, () => {
      if (!name) throw loraError(400, "'lora_name' needs to be provided to unload a LoRA adapter.", "InvalidUserInput");
      if (!this.registered.delete(name)) throw loraError(404, `The lora adapter '${name}' cannot be found.`, "NotFoundError");
      return Promise.resolve(`Success: LoRA adapter '${name}' removed successfully.`);
    });
  }

  /**
   * Makes a starting request's adapter usable: loaded again if it was evicted from the cache, copied into a GPU
   * slot if it is not in one. Each costs an engine stall. (vLLM checks every running request's adapter each step;
   * here only a starting request's, so a running adapter evicted by a load is not copied back.)
   */
  async prepare(adapter: Adapter): Promise<void> {
    const reload = !this.cpu.has(adapter.id);
    const swapIn = !this.gpu.has(adapter.id);
    // Resident at once: another request starting on it meanwhile waits out the same stall, not one more.
    this.resident(adapter);
    if (reload) {
      this.counters.loraLoadsTotal++;
      await this.stalls.stall(this.config.loadTimeMs);
    }
    if (swapIn) {
      this.counters.loraSwapInsTotal++;
      await this.stalls.stall(this.config.swapInTimeMs);
    }
  }

  private newAdapter(name: string, path: string, baseModelName?: string): Adapter {
    const parent = baseModelName !== undefined && this.servedNames.includes(baseModelName) ? baseModelName : (this.servedNames[0] as string);
    return { id: ++this.lastId, name, path, parent };
  }

  /** vLLM's worker raises this for a path with no adapter files; the engine client prefixes the call. */
  private missing(adapter: Adapter): VllmError | undefined {
    if (!this.missingPath?.test(adapter.path)) return undefined;
    return loraError(404, `Call to add_lora method failed: Loading lora ${adapter.name} failed: No adapter found for ${adapter.path}`, "NotFoundError");
  }

  /** Loaded and in a GPU slot, as vLLM's add_lora and each step leave it; eviction from the cache frees the slot too. */
  private resident(adapter: Adapter): void {
    for (const evicted of this.cpu.add(adapter.id)) this.gpu.delete(evicted);
    this.gpu.add(adapter.id);
  }

  private locked<T>(name: string, action: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(name) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(action);
    this.locks.set(name, run);
    const release = (): void => {
      if (this.locks.get(name) === run) this.locks.delete(name);
    };
    run.then(release, release);
    return run;
  }
}
