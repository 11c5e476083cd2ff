// The names in the `models` lists of `gateway:apiKeys`, checked against the catalog the gateway will serve. The
// gateway matches a key's names exactly (gateway/src/auth/middleware.ts): a name it does not serve (a typo, a model
// swapped out or removed) would leave the key without that model, answered 404 as if it did not exist.
import { distance as levenshtein } from "fastest-levenshtein";
import type { CatalogInput } from "../../gateway/src/config/catalog";
import { CONFIG_NAMESPACE, type ApiKeySpec } from "./config";

/** Most names a message lists (close matches, or what the catalog serves). */
const LISTED = 8;

/** Every name a client may send: model ids, their LoRA adapters' ids, and aliases (the catalog's and `gateway:aliases`). */
export function servedNames(catalog: CatalogInput): string[] {
  return [...catalog.models.flatMap((m) => [m.id, ...(m.lora?.adapters.map((a) => a.id) ?? [])]), ...(catalog.aliases ?? []).map((a) => a.id)];
}

/**
 * The candidates `name` was probably meant to be, nearest first: those that contain it or that it contains (a
 * version suffix left out: `bge-small-en` for `bge-small-en-v1.5`), and those within a third of the longer name's
 * length in edits (a typo). Case is ignored: the same name in another case is the only match.
 */
export function closeMatches(name: string, candidates: readonly string[]): string[] {
  const wanted = name.toLowerCase();
  const scored = candidates.flatMap((candidate) => {
    const c = candidate.toLowerCase();
    const distance = levenshtein(wanted, c);
    const [shorter, longer] = wanted.length <= c.length ? [wanted, c] : [c, wanted];
    const close = (shorter.length >= 3 && longer.includes(shorter)) || distance <= Math.max(1, Math.floor(longer.length / 3));
    return close ? [{ candidate, distance }] : [];
  });
  // The same name in another case is the one meant.
  const same = scored.filter((s) => s.distance === 0);
  return (same.length > 0 ? same : scored.sort((x, y) => x.distance - y.distance)).slice(0, LISTED).map((s) => s.candidate);
}

const quotedList = (names: readonly string[]) => names.map((n) => `"${n}"`).join(", ");

/**
 * `gateway:apiKeys [1.models.0]: …` lines, one per name a key lists that `catalog` (aliases included) does not serve,
 * naming the key and its close matches, or else what the catalog serves. `from` says where the catalog came from
 * when it is not this stack's (another stack's output).
 */
export function keyModelProblems(keys: readonly Pick<ApiKeySpec, "name" | "models">[], catalog: CatalogInput, from?: string): string[] {
  const served = servedNames(catalog);
  const known = new Set(served);
  const where = from ? `the catalog of ${from}` : "the catalog";
  return keys.flatMap((key, i) =>
    (key.models ?? []).flatMap((name, j) => {
      if (known.has(name)) return [];
      const matches = closeMatches(name, served);
      const hint =
        matches.length > 0
          ? `; did you mean ${quotedList(matches)}?`
          : served.length === 0
            ? ` (it serves nothing)`
            : ` (it serves ${quotedList(served.slice(0, LISTED))}${served.length > LISTED ? ", …" : ""})`;
      return [`${CONFIG_NAMESPACE}:apiKeys [${i}.models.${j}]: key "${key.name}" names "${name}", which is not a model, adapter or alias of ${where}${hint}`];
    }),
  );
}
