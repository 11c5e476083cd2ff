// Test helpers for the parts' configuration schemas (each part's testing.ts builds on these).
import { ConfigError } from "./config";

/**
 * The `cluster:` keys every stack needs, and the engine setting that disables the default Kubernetes provider
 * (the mock engine enforces it as the real one does).
 */
export function clusterConfig(): Record<string, string> {
  return { "cluster:context": "kind-ai-platform", "pulumi:disable-default-providers": JSON.stringify(["kubernetes"]) };
}

/** A stack config with overrides applied; an override of `undefined` removes the key. */
export function withOverrides(base: Record<string, string>, overrides: Record<string, string | undefined>): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...base, ...overrides };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

/** One namespace of a stack config without its prefix, as the parts' config parsers take it. */
export function namespaceKeys(config: Record<string, string>, namespace: string): Record<string, string> {
  const prefix = `${namespace}:`;
  return Object.fromEntries(
    Object.entries(config)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]) => [k.slice(prefix.length), v]),
  );
}

/** The problems of the ConfigError `fn` throws (fails the test if it throws nothing or something else). */
export function configProblems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return [...(e as ConfigError).problems];
  }
  throw new Error("expected a ConfigError");
}
