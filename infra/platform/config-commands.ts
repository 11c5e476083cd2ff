// `pulumi config set` and `pulumi config rm` as the Pulumi CLI applies them to a stack file, so that a runbook's
// commands can be run against a test stack and the result rendered (the CLI itself is not on the test machines).
// Semantics followed (pulumi config set --help, and the CLI's config map): a top-level value is a string; with
// --path the key walks into maps (`a.b`, `a["b.c"]`) and lists (`a[0]`, appending at the end), where "true"/"false"
// become booleans and integers without a leading zero numbers; --secret stores `{ secure: … }` (here a placeholder:
// no encryption key in a test).
import { parse as parseShell } from "shell-quote";
import { parse as parseYaml, stringify } from "yaml";
import { SECRET_PLACEHOLDER } from "./mocks";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The part of `Pulumi.<stack>.yaml` the commands change. */
export interface StackDocument {
  config: Record<string, Json>;
}

export class ConfigCommandError extends Error {}

/** `gateway:apiKeys[0].name` → ["gateway:apiKeys", 0, "name"]. */
export function parseConfigPath(key: string): (string | number)[] {
  const head = /^[^.[]+/.exec(key)?.[0];
  if (!head) throw new ConfigCommandError(`${key}: a path starts with a key`);
  const segments: (string | number)[] = [head];
  let rest = key.slice(head.length);
  while (rest.length > 0) {
    const m = /^\.([^.[]+)|^\[(\d+)\]|^\["((?:[^"\\]|\\.)*)"\]/.exec(rest);
    if (!m) throw new ConfigCommandError(`${key}: cannot parse the path at "${rest}"`);
    segments.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (m[3] as string).replace(/\\(.)/g, "$1")));
    rest = rest.slice(m[0].length);
  }
  return segments;
}

function typedLeaf(value: string, type: string | undefined): Json {
  if (type === "string") return value;
  if (type === "bool" || (type === undefined && (value === "true" || value === "false"))) return value === "true";
  // Integers as the CLI's config map reads them: no leading zero ("007" stays a string).
  if (type === "int" || type === "float" || (type === undefined && /^-?(0|[1-9]\d*)$/.test(value))) {
    const n = Number(value);
    if (Number.isNaN(n)) throw new ConfigCommandError(`${value}: not a number`);
    return n;
  }
  return value;
}

function qualify(key: string, project: string): string {
  return key.includes(":") ? key : `${project}:${key}`;
}

type Container = Json[] | { [key: string]: Json };
const isContainer = (v: Json | undefined): v is Container => typeof v === "object" && v !== null;

function setPath(doc: StackDocument, segments: (string | number)[], leaf: Json, key: string): void {
  const [head, ...rest] = segments as [string, ...(string | number)[]];
  if (rest.length === 0) {
    doc.config[head] = leaf;
    return;
  }
  // A key that holds a string is replaced by the map or list the path walks into, as the CLI does.
  const existing = doc.config[head];
  const top = isContainer(existing) ? existing : typeof rest[0] === "number" ? [] : {};
  doc.config[head] = top;
  let container: Container = top;
  for (let i = 0; i < rest.length; i++) {
    const seg = rest[i] as string | number;
    const next = rest[i + 1];
    let child: Json | undefined;
    if (typeof seg === "number") {
      if (!Array.isArray(container)) throw new ConfigCommandError(`${key}: [${seg}] indexes a map`);
      if (seg > container.length) throw new ConfigCommandError(`${key}: index ${seg} is past the end of a list of ${container.length}`);
      if (next === undefined) container[seg] = leaf;
      else child = container[seg] ??= typeof next === "number" ? [] : {};
    } else {
      if (Array.isArray(container)) throw new ConfigCommandError(`${key}: .${seg} indexes a list`);
      if (next === undefined) container[seg] = leaf;
      else child = container[seg] ??= typeof next === "number" ? [] : {};
    }
    if (next === undefined) return;
    if (!isContainer(child)) throw new ConfigCommandError(`${key}: cannot walk into a scalar at ${String(seg)}`);
    container = child;
  }
}

function removePath(doc: StackDocument, segments: (string | number)[]): void {
  const [head, ...rest] = segments as [string, ...(string | number)[]];
  if (rest.length === 0) {
    delete doc.config[head];
    return;
  }
  let container: Json | undefined = doc.config[head];
  for (const seg of rest.slice(0, -1)) container = (container as Record<string | number, Json> | undefined)?.[seg];
  const last = rest[rest.length - 1] as string | number;
  if (Array.isArray(container) && typeof last === "number") container.splice(last, 1);
  else if (container && typeof container === "object") delete (container as Record<string, Json>)[last as string];
}

export interface ApplyOptions {
  readonly project: string;
  /** Values of the shell variables the commands use (`"$S3_PASSWORD"`). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Applies every `pulumi config set|rm` line of a shell script to the document, in order; other commands are skipped.
 * A command substitution (`"$(openssl rand -hex 24)"`) stands for a generated value. A variable the script uses
 * but `env` does not define is an error, as is a `config set` without a value (the CLI would prompt).
 */
export function applyConfigCommands(script: string, doc: StackDocument, options: ApplyOptions): StackDocument {
  const lines = script.replace(/\\\n/g, " ").split("\n");
  for (const raw of lines) {
    const line = raw.replace(/#.*$/, "").trim();
    if (!/^pulumi\s+config\s+(set|rm)\b/.test(line)) continue;
    const substituted = line.replace(/\$\((?:[^()]|\([^()]*\))*\)/g, "generated-value");
    const words = parseShell(substituted, (name) => {
      const v = options.env?.[name];
      if (v === undefined) throw new ConfigCommandError(`${line}: $${name} is not set`);
      return v;
    });
    if (words.some((w) => typeof w !== "string")) throw new ConfigCommandError(`${line}: only plain words are supported (no pipes or redirections)`);
    const [, , verb, ...args] = words as string[];
    const flags = new Set(args.filter((a) => a.startsWith("--") && !a.startsWith("--type")));
    const typeIndex = args.indexOf("--type");
    const type = typeIndex >= 0 ? args[typeIndex + 1] : args.find((a) => a.startsWith("--type="))?.slice("--type=".length);
    const positional = args.filter((a, i) => !a.startsWith("--") && !(typeIndex >= 0 && i === typeIndex + 1));
    const [key, value] = positional;
    if (!key) throw new ConfigCommandError(`${line}: no key`);
    const segments = flags.has("--path") ? parseConfigPath(key) : [key];
    segments[0] = qualify(segments[0] as string, options.project);
    if (verb === "rm") {
      removePath(doc, segments);
      continue;
    }
    if (value === undefined) throw new ConfigCommandError(`${line}: no value (the CLI would prompt for it)`);
    // Typed only inside a map or list: a top-level value is a string even with --path.
    const leaf: Json = flags.has("--secret") ? { secure: SECRET_PLACEHOLDER } : segments.length > 1 ? typedLeaf(value, type) : value;
    setPath(doc, segments, leaf, key);
  }
  return doc;
}

/** A stack file's text as a document, and back. */
export function readStackDocument(text: string): StackDocument {
  const parsed = (parseYaml(text) ?? {}) as { config?: Record<string, Json> | null };
  return { config: { ...(parsed.config ?? {}) } };
}

export function writeStackDocument(doc: StackDocument): string {
  return stringify({ config: doc.config });
}
