import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { issueLines } from "../api/schemas";
import { ApiKeysFileSchema, type ApiKeyEntry, type ApiKeyStore } from "./api-keys";
import type { Logger } from "../observability/logger";

/** Parses a keys file (YAML or JSON); the error names every offending field. */
export function parseKeysFile(text: string, path: string): ApiKeyEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`Invalid keys file ${path}: ${(err as Error).message}`);
  }
  const parsed = ApiKeysFileSchema.safeParse(doc);
  if (!parsed.success) {
    throw new Error(`Invalid keys file ${path}:\n  ${issueLines(parsed.error.issues).join("\n  ")}`);
  }
  const names = new Set<string>();
  for (const k of parsed.data.keys) {
    if (names.has(k.name)) throw new Error(`Invalid keys file ${path}: duplicate key name "${k.name}"`);
    names.add(k.name);
  }
  return parsed.data.keys;
}

export async function loadKeysFile(path: string): Promise<ApiKeyEntry[]> {
  return parseKeysFile(await readFile(path, "utf8"), path);
}

/**
 * Re-reads the keys file on an interval and swaps the key set when it changed. Polling, not fs.watch: a
 * Kubernetes Secret volume is updated by an atomic symlink swap that watchers miss on some filesystems.
 * A broken file keeps the last good key set (an operator's typo must not lock everyone out).
 */
export class KeysFileReloader {
  private timer: NodeJS.Timeout | undefined;
  private lastText: string | undefined;

  constructor(
    private readonly path: string,
    private readonly store: ApiKeyStore,
    private readonly extra: readonly ApiKeyEntry[],
    private readonly log: Logger,
    /** Told the whole key set after every load (e.g. to start the new keys' usage series). */
    private readonly onLoad: (entries: readonly ApiKeyEntry[]) => void = () => undefined,
  ) {}

  /** Loads once (throwing on a bad file, so a bad start fails loudly), then keeps polling. */
  async start(intervalMs: number): Promise<void> {
    const text = await readFile(this.path, "utf8");
    this.apply(text);
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async poll(): Promise<void> {
    try {
      const text = await readFile(this.path, "utf8");
      if (text !== this.lastText) {
        this.apply(text);
        this.log.info({ keys: this.store.size }, "API keys reloaded");
      }
    } catch (err) {
      this.log.error({ err: (err as Error).message }, "keys file unreadable or invalid; keeping the previous keys");
    }
  }

  private apply(text: string): void {
    const entries = [...parseKeysFile(text, this.path), ...this.extra];
    this.store.replace(entries);
    this.lastText = text;
    this.onLoad(entries);
  }
}
