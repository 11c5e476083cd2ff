// The annotations pulumi-kubernetes reads on an object to decide how `pulumi up` waits for it (provider docs,
// "Resource readiness"): how long, whether at all, and whether a Job that did not succeed is replaced next time.
export const TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds";
export const SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait";
/** A Job found failed or unfinished on the next `up` is replaced (and so runs again) instead of being left as is. */
export const REPLACE_UNREADY_ANNOTATION = { "pulumi.com/replaceUnready": "true" } as const;

/** Wait up to `seconds` for readiness, or not at all. */
export function awaitFor(seconds: number, awaitReady = true): Record<string, string> {
  return awaitReady ? { [TIMEOUT_ANNOTATION]: String(seconds) } : { [SKIP_AWAIT_ANNOTATION]: "true" };
}
