// Helpers shared by every stack's config module: read one config namespace as raw strings and turn zod issues
// into ONE error that names every offending key (that message is what `pulumi preview` prints).
import * as pulumi from "@pulumi/pulumi";
import * as runtimeConfig from "@pulumi/pulumi/runtime/config";
import { z } from "zod";

/**
 * Documentation of one configuration key, attached to its zod schema with `.meta(doc(…))`: the configuration
 * reference (docs/configuration.md) is generated from it, and a test validates every example against the key's schema.
 */
export function doc(description: string, ...examples: unknown[]): { description: string; examples?: unknown[] } {
  return examples.length > 0 ? { description, examples } : { description };
}

/** A problem with one key (and the path inside it), as a schema's cross-key check reports it. */
export interface KeyIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** Thrown for invalid stack configuration; the message lists every offending key, one per line. */
export class ConfigError extends Error {
  constructor(
    readonly namespace: string,
    readonly problems: readonly string[],
  ) {
    super(
      `Invalid stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n` +
        problems.map((p) => `  - ${p}`).join("\n"),
    );
    this.name = "ConfigError";
  }
}

/**
 * Every key of one config namespace as the runtime holds it: strings, with structured values (lists, maps)
 * JSON-encoded, exactly as the Pulumi language host passes them in PULUMI_CONFIG.
 */
export function readNamespace(namespace: string): Record<string, string> {
  const prefix = `${namespace}:`;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(pulumi.runtime.allConfig())) {
    if (key.startsWith(prefix)) out[key.slice(prefix.length)] = value;
  }
  return out;
}

/**
 * Whether the stack stores a key as a secret (encrypted in the stack file). The SDK knows (it warns when a secret is
 * read with `get`) but exports the check only internally; undefined when it cannot tell.
 */
export function isSecretConfig(key: string): boolean | undefined {
  const check = (runtimeConfig as unknown as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
  return typeof check === "function" ? check(key) : undefined;
}

/** True when the stack has at least one key in the namespace (how the composition root decides to deploy a part). */
export function hasNamespace(namespace: string): boolean {
  return Object.keys(readNamespace(namespace)).length > 0;
}

/** `namespace:key: message` lines from zod issues; `fallbackKey` names issues raised at the root. */
export function issuesToLines(namespace: string, issues: readonly z.core.$ZodIssue[], fallbackKey?: string): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      // At the root the unknown key is the config key itself; deeper down it sits under its config key.
      const [top, ...inner] = issue.path.map(String);
      for (const k of issue.keys) lines.push(top === undefined ? `${namespace}:${k}: unknown key` : `${namespace}:${top} [${[...inner, k].join(".")}]: unknown key`);
      continue;
    }
    const [head, ...rest] = issue.path.map(String);
    const key = head ?? fallbackKey ?? "(root)";
    const sub = rest.length > 0 ? ` [${rest.join(".")}]` : "";
    // zod words a missing key as a type error; say what an operator needs to hear.
    const missing = issue.code === "invalid_type" && /received undefined$/.test(issue.message);
    lines.push(`${namespace}:${key}${sub}: ${missing ? "required" : issue.message}`);
  }
  return [...new Set(lines)];
}

/**
 * Decodes a raw config string for a structured key. Pulumi passes lists and maps JSON-encoded; a value that is
 * not valid JSON is returned unchanged so that the schema reports it as the wrong type.
 */
export function decodeStructured(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * The value of a secret that could not be read: the offline render (and tests on the mock engine) cannot decrypt a
 * stack file's ciphertext, and stand in this for every secret. Validation takes such a secret as present, with a
 * content it cannot check.
 */
export const UNREADABLE_SECRET = "[secret]";

/** Stands in for a secret value during validation: schemas check a secret's presence only, never its value. */
export const SECRET_PRESENT = "<set>";
export const secretPresence = z.literal(SECRET_PRESENT);

/**
 * A namespace's raw strings as its schema takes them: secrets as SECRET_PRESENT (or absent when empty), structured
 * keys JSON-decoded, everything else as is.
 */
export function schemaInput(raw: Readonly<Record<string, string>>, secretKeys: readonly string[], structuredKeys: ReadonlySet<string>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (secretKeys.includes(key)) input[key] = value === "" ? undefined : SECRET_PRESENT;
    else input[key] = structuredKeys.has(key) ? decodeStructured(value) : value;
  }
  return input;
}
