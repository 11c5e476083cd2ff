// Checks of objects the program reads from the cluster at preview (an existing Gateway's listeners, say), which can
// only run once the read has answered. Each registers here; the entry point (stacks/index.ts) and the mock engine
// await them all after the program has declared everything, and a failing one fails the preview with one message
// naming every key, as a configuration error does. Registering nothing when the value is unknown (a read the engine
// did not perform) keeps an offline render from waiting forever.
import * as pulumi from "@pulumi/pulumi";
import { ConfigError } from "./config";

const pending: Promise<readonly string[]>[] = [];

/** Runs `check` on a value read from the cluster; its problems (`namespace:key …` lines) fail the preview. */
export function checkClusterValue<T>(value: pulumi.Output<T>, check: (v: T) => readonly string[]): void {
  pending.push(
    new Promise((resolve) => {
      value.apply((v) => {
        resolve(check(v));
        return v;
      });
      // An unknown value never reaches the apply: nothing to check then. (`isKnown` is the SDK's, not in its types.)
      void (value as unknown as { isKnown: Promise<boolean> }).isKnown.then((known) => known || resolve([]));
    }),
  );
}

/** Awaits every registered check; throws one ConfigError with all their problems. Clears the list. */
export async function settleClusterChecks(): Promise<void> {
  const results: (readonly string[])[] = [];
  // A check may register another (a read that needs what an earlier read returned): until none is left.
  while (pending.length > 0) results.push(...(await Promise.all(pending.splice(0))));
  const problems = [...new Set(results.flat())];
  if (problems.length > 0) throw new ConfigError("stack", problems);
}

/** Forgets the checks of an earlier run (the mock engine runs many programs in one process). */
export function resetClusterChecks(): void {
  pending.length = 0;
}
