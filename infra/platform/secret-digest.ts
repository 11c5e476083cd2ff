// A changed secret must reach the processes that read it at start (env from a Secret, a password applied at boot).
// The pod template carries a digest of the secret values: a rotation changes the template, so Kubernetes rolls the
// pods (and a Job, whose template is immutable, is replaced and runs again).
//
// The digest is an HMAC keyed with a random key the stack keeps in its state (a secret), so what appears in pod
// annotations, chart values and renders cannot be used to test guesses of the secret offline. A config-derived value
// (rather than the Secret's resourceVersion) keeps the charts previewable; the key is unknown only on the stack's
// very first preview.
import { createHmac } from "crypto";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";

/** Pod-template annotation key of a secret's digest: `checksum/<what>`, as Helm charts name theirs. */
export function digestAnnotation(what: string): string {
  return `checksum/${what}`;
}

/** The stack's digest key: 32 random bytes in state. Made once by the composition root. */
export function createDigestKey(): pulumi.Output<string> {
  return new random.RandomBytes("secret-digest-key", { length: 32 }).hex;
}

/** A 16-hex-character HMAC-SHA256 of the values under the stack's key, not marked secret (it reveals nothing). */
export function secretDigest(key: pulumi.Input<string>, purpose: string, ...values: pulumi.Input<string>[]): pulumi.Output<string> {
  const digest = pulumi
    .all([key, ...values])
    .apply(([k, ...vs]) => createHmac("sha256", Buffer.from(k as string, "hex")).update(`${purpose}\0${vs.join("\0")}`).digest("hex").slice(0, 16));
  return pulumi.unsecret(digest);
}
