// API keys as the stack issues them. The secret part comes from a `random.RandomBytes` (32 bytes, the same
// entropy and the same `sk-` + base64url form as `generateApiKey()` in the gateway), and only its SHA-256 goes
// into the keys file the gateway reads. Pure functions: the component calls them inside `apply`.
import { stringify } from "yaml";
import { type ApiKeyEntry, ApiKeysFileSchema, hashApiKey, KEY_PREFIX } from "../../gateway/src/auth/api-keys";
import type { ApiKeySpec } from "./config";

/** Bytes of randomness per key (256 bits, as generateApiKey). */
export const KEY_BYTES = 32;

/** `sk-` + the bytes in base64url without padding: 43 characters for 32 bytes, like generateApiKey(). */
export function apiKeyFromBase64(base64: string): string {
  return KEY_PREFIX + Buffer.from(base64, "base64").toString("base64url");
}

/** Keepers of a key's random resource: changing any of them replaces it, i.e. issues a new secret. */
export function keyKeepers(spec: ApiKeySpec): Record<string, string> {
  return { name: spec.name, rotation: String(spec.rotation ?? 0) };
}

/** One keys-file entry: everything of the spec except `rotation`, plus the hash of the full key. */
export function keyEntry(spec: ApiKeySpec, key: string): ApiKeyEntry {
  const { rotation: _rotation, ...rest } = spec;
  return ApiKeysFileSchema.shape.keys.element.parse({ ...rest, sha256: hashApiKey(key) });
}

/**
 * The keys file (`keys: [...]`, YAML) for the given specs and their full keys, checked against the schema the
 * gateway loads it with. Holds hashes only.
 */
export function buildKeysFile(specs: readonly ApiKeySpec[], keys: readonly string[]): string {
  if (specs.length !== keys.length) throw new Error(`${specs.length} key specs but ${keys.length} keys`);
  const file = ApiKeysFileSchema.parse({ keys: specs.map((s, i) => keyEntry(s, keys[i] as string)) });
  return stringify(file);
}
