// What `gateway:usageLedger` declares in the gateway namespace: the gateway's keys in a Secret (or its own service
// account with the IRSA role), and, with admin credentials, the `usage-ledger-bucket` Job that makes the bucket and its
// lifecycle rule. No NetworkPolicy for the Job: the namespace's only policies select the gateway's and Valkey's pods.
import { createHash } from "crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { REPLACE_UNREADY_ANNOTATION } from "../platform/await-annotations";
import { PLATFORM_NAME, platformLabelKeys, standardLabels } from "../platform/labels";
import { digestAnnotation, secretDigest } from "../platform/secret-digest";
import type { GatewaySecrets, S3Keys } from "./config";
import { APP_NAME, OBJECT_NAMES, PART_OF } from "./constants";
import { AWS_KEY_ENV, buildLedgerBucketJobSpec, LEDGER_BUCKET_JOB, LEDGER_SCRIPT, ledgerPolicy, ledgerScript } from "./usage-ledger";
import type { UsageLedgerSetting } from "./usage-ledger-config";

export interface UsageLedgerArgs {
  readonly ledger: UsageLedgerSetting;
  readonly keys?: GatewaySecrets["usageLedger"];
  readonly namespace: pulumi.Input<string>;
  readonly labelDomain: string;
  /** The gateway's object labels (for its Secret and service account). */
  readonly labels: Readonly<Record<string, string>>;
  readonly digestKey: pulumi.Input<string>;
  readonly fixedUserIds: boolean;
}

export interface DeclaredUsageLedger {
  /** What the gateway's Deployment waits for: its credentials and the bucket Job. */
  readonly resources: pulumi.Resource[];
  /** Digest of the gateway's keys or role, for its pod template. */
  readonly digest: pulumi.Output<string>;
  /** With IRSA, the gateway's own service account. */
  readonly serviceAccountName?: string;
  /** The least-privilege policy for the gateway's credentials. */
  readonly policy: ReturnType<typeof ledgerPolicy>;
}

function keysSecret(parent: pulumi.Resource, name: string, metadata: Record<string, unknown>, keys: S3Keys): k8s.core.v1.Secret {
  return new k8s.core.v1.Secret(
    name,
    { metadata: { ...metadata, name }, type: "Opaque", stringData: { [AWS_KEY_ENV.accessKeyId]: pulumi.secret(keys.accessKeyId), [AWS_KEY_ENV.secretAccessKey]: pulumi.secret(keys.secretAccessKey) } },
    { parent },
  );
}

function serviceAccount(parent: pulumi.Resource, name: string, metadata: Record<string, unknown>, annotations: Readonly<Record<string, string>>): k8s.core.v1.ServiceAccount {
  return new k8s.core.v1.ServiceAccount(name, { metadata: { ...metadata, name, annotations: { ...annotations } }, automountServiceAccountToken: false }, { parent });
}

/** The keys' digest, or the role's: either reaches pods only when they are created. */
function credentialsDigest(digestKey: pulumi.Input<string>, purpose: string, keys: S3Keys | undefined, annotations: Readonly<Record<string, string>> | undefined) {
  return keys ? secretDigest(digestKey, purpose, keys.accessKeyId, keys.secretAccessKey) : secretDigest(digestKey, purpose, JSON.stringify(Object.entries(annotations ?? {}).sort()));
}

export function declareUsageLedger(parent: pulumi.Resource, args: UsageLedgerArgs): DeclaredUsageLedger {
  const { ledger } = args;
  const gatewayMeta = { namespace: args.namespace, labels: { ...args.labels } };
  const resources: pulumi.Resource[] = [];

  // Validation (usage-ledger-config.ts) made sure the keys are there when no role is.
  const gatewayKeys = ledger.gateway.kind === "keys" ? (args.keys?.gateway as S3Keys) : undefined;
  const gatewayRole = ledger.gateway.kind === "irsa" ? ledger.gateway.annotations : undefined;
  resources.push(gatewayKeys ? keysSecret(parent, OBJECT_NAMES.usageLedger, gatewayMeta, gatewayKeys) : serviceAccount(parent, OBJECT_NAMES.serviceAccount, gatewayMeta, gatewayRole ?? {}));
  const digest = credentialsDigest(args.digestKey, "usage-ledger-credentials", gatewayKeys, gatewayRole);

  if (ledger.bucketJob) {
    const jobLabels = { ...standardLabels(LEDGER_BUCKET_JOB.name, APP_NAME), "app.kubernetes.io/part-of": PART_OF, [platformLabelKeys(args.labelDomain).platform]: PLATFORM_NAME };
    const jobMeta = { namespace: args.namespace, labels: jobLabels };
    const adminKeys = ledger.bucketJob.kind === "keys" ? (args.keys?.admin as S3Keys) : undefined;
    const adminRole = ledger.bucketJob.kind === "irsa" ? ledger.bucketJob.annotations : undefined;
    const credentials = adminKeys ? keysSecret(parent, LEDGER_BUCKET_JOB.adminKeys, jobMeta, adminKeys) : serviceAccount(parent, LEDGER_BUCKET_JOB.serviceAccount, jobMeta, adminRole ?? {});
    const text = ledgerScript();
    const script = new k8s.core.v1.ConfigMap(LEDGER_BUCKET_JOB.script, { metadata: { ...jobMeta, name: LEDGER_BUCKET_JOB.script }, data: { [LEDGER_SCRIPT.key]: text } }, { parent });
    const scriptDigest = createHash("sha256").update(text).digest("hex").slice(0, 16);
    const job = new k8s.batch.v1.Job(
      LEDGER_BUCKET_JOB.name,
      {
        metadata: { ...jobMeta, name: LEDGER_BUCKET_JOB.name, annotations: { ...REPLACE_UNREADY_ANNOTATION } },
        spec: credentialsDigest(args.digestKey, "usage-ledger-admin", adminKeys, adminRole).apply((adminDigest) =>
          buildLedgerBucketJobSpec({
            ledger,
            podLabels: jobLabels,
            fixedUserIds: args.fixedUserIds,
            // New credentials or a changed script run the Job again (its template is immutable: it is replaced).
            podAnnotations: { [digestAnnotation("usage-ledger-admin")]: adminDigest, [digestAnnotation("script")]: scriptDigest },
          }),
        ),
      },
      // Same name on replacement, so the old Job goes first.
      { parent, deleteBeforeReplace: true, dependsOn: [credentials, script] },
    );
    resources.push(job);
  }
  return { resources, digest, ...(gatewayRole ? { serviceAccountName: OBJECT_NAMES.serviceAccount } : {}), policy: ledgerPolicy(ledger) };
}
