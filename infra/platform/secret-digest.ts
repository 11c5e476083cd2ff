// A changed secret must reach the processes that read it at start (env from a Secret, a password applied at boot).
// The pod template carries a digest of the secret values: a rotation changes the template, so Kubernetes rolls the
// pods (and a Job, whose template is immutable, is replaced and runs again).
//
// Why a digest of the config values and not the Secret's resourceVersion: the digest is known at preview, so the
// charts that carry it still render in the preview (a chart with unknown values cannot be previewed). It is a
// salted SHA-256, truncated: it identifies a version, it is not the secret; like Helm's `checksum/secret`
// convention, it is only as strong as the secret it hashes, so use generated secrets (docs/operations.md).
import { createHash } from "crypto";
import * as pulumi from "@pulumi/pulumi";

/** Pod-template annotation key of a secret's digest: `checksum/<what>`, as Helm charts name theirs. */
export function digestAnnotation(what: string): string {
  return `checksum/${what}`;
}

/** A 16-hex-character digest of the values, not marked secret (it reveals nothing usable about them). */
export function secretDigest(purpose: string, ...values: pulumi.Input<string>[]): pulumi.Output<string> {
  const digest = pulumi
    .all(values)
    .apply((vs) => createHash("sha256").update(`ai-platform/${purpose}\0${vs.join("\0")}`).digest("hex").slice(0, 16));
  return pulumi.unsecret(digest);
}
