// Reads a `Pulumi.<stack>.yaml` into the runtime's config map (what the Pulumi CLI would put in PULUMI_CONFIG),
// so the offline render and tests evaluate the program with the stack's real configuration.
import * as fs from "fs";
import { parse } from "yaml";
import { SECRET_PLACEHOLDER } from "./mocks";

export interface StackConfig {
  /** `namespace:key` → raw string (structured values JSON-encoded, as the language host passes them). */
  readonly config: Record<string, string>;
  readonly secretKeys: string[];
}

/** `{ secure: … }` values are encrypted with the stack's key, which the render does not have. */
function isSecure(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && "secure" in v;
}

export function encodeConfigValue(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** Parses stack YAML text. Keys without a namespace belong to the project. */
export function parseStackYaml(text: string, project: string): StackConfig {
  const doc = (parse(text) ?? {}) as { config?: Record<string, unknown> | null };
  const config: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [rawKey, value] of Object.entries(doc.config ?? {})) {
    const key = rawKey.includes(":") ? rawKey : `${project}:${rawKey}`;
    if (isSecure(value)) {
      config[key] = SECRET_PLACEHOLDER;
      secretKeys.push(key);
    } else {
      config[key] = encodeConfigValue(value);
    }
  }
  return { config, secretKeys };
}

/**
 * Stack file, then the environment on top (PULUMI_CONFIG JSON object of `namespace:key` → value, and
 * PULUMI_CONFIG_SECRET_KEYS JSON array), then a placeholder for every known secret that is still missing.
 */
export function resolveStackConfig(args: {
  stackFile: string;
  project: string;
  env: NodeJS.ProcessEnv;
  knownSecretKeys: readonly string[];
}): StackConfig {
  const base = fs.existsSync(args.stackFile) ? parseStackYaml(fs.readFileSync(args.stackFile, "utf8"), args.project) : { config: {}, secretKeys: [] };
  const config = { ...base.config };
  const secretKeys = new Set(base.secretKeys);
  if (args.env.PULUMI_CONFIG) {
    const overrides = JSON.parse(args.env.PULUMI_CONFIG) as Record<string, unknown>;
    for (const [k, v] of Object.entries(overrides)) config[k] = encodeConfigValue(v);
  }
  if (args.env.PULUMI_CONFIG_SECRET_KEYS) {
    for (const k of JSON.parse(args.env.PULUMI_CONFIG_SECRET_KEYS) as string[]) secretKeys.add(k);
  }
  for (const k of args.knownSecretKeys) {
    if (config[k] === undefined) config[k] = SECRET_PLACEHOLDER;
    secretKeys.add(k);
  }
  return { config, secretKeys: [...secretKeys] };
}
