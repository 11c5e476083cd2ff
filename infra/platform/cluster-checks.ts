// Checks of objects the program reads from the cluster at preview (an existing Gateway's listeners, say), which can
// only run once the read has answered. Each registers here; the entry point (stacks/index.ts) and the mock engine
// await them all after the program has declared everything, and a failing one fails the preview with one message
// naming every key, as a configuration error does. Registering nothing when the value is unknown (a read the engine
// did not perform) keeps an offline render from waiting forever.
//
// What must not exist unless the checks pass (an HTTPRoute on a listener the check refused could serve API keys over
// plain HTTP) is declared through `whenClusterChecksPass`: only once every check has passed, so with
// `pulumi up --skip-preview` or the Automation API it is never registered when one fails.
import * as pulumi from "@pulumi/pulumi";
import { ConfigError } from "./config";

let pending: Promise<readonly string[]>[] = [];

/** Opened once every check has passed; never, when one fails. */
function newGate(): { readonly passed: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const passed = new Promise<void>((resolve) => (open = resolve));
  return { passed, open };
}

let gate = newGate();

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

/**
 * Declares what `declare` declares once every check has passed, and nothing when one fails. Not an input that waits
 * (a spec as an Output of the checks): the SDK counts a registration as pending from its constructor on, so a spec
 * that never resolved would keep the Automation API waiting for it after the failure, and one that rejected would be
 * a second error in the CLI's output.
 */
export function whenClusterChecksPass(declare: () => void): void {
  void gate.passed.then(declare);
}

/** Awaits every registered check; then declares what waits for them, or throws one ConfigError with all their problems. */
export async function settleClusterChecks(): Promise<void> {
  const results: (readonly string[])[] = [];
  // A check may register another (a read that needs what an earlier read returned): until none is left.
  while (pending.length > 0) results.push(...(await Promise.all(pending.splice(0))));
  const problems = [...new Set(results.flat())];
  if (problems.length > 0) throw new ConfigError("stack", problems);
  gate.open();
}

/** Forgets the checks of an earlier run (the mock engine runs many programs in one process). */
export function resetClusterChecks(): void {
  pending = [];
  gate = newGate();
}
