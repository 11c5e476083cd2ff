// Pure builders of what `gateway:usageLedger` adds: the gateway container's ledger settings, the least-privilege policy
// the operator attaches to the gateway's credentials, and the `usage-ledger-bucket` Job (bucket and lifecycle rule,
// scripts/usage-ledger-bucket.sh, run by the test suite against real S3 servers).
import { LEDGER_RULE_ID } from "../../gateway/src/ledger/format";
import * as fs from "fs";
import * as path from "path";
import { SETTINGS_ENV } from "../../gateway/src/config/settings";
import { AWS_CLI_IMAGE } from "../platform/images";
import { standardLabels } from "../platform/labels";
import { buildScriptJobSpec, type EnvVar } from "../platform/script-job";
import { locationConstraint } from "../monitoring/bucket-job";
import { IMAGE_IDENTITIES } from "../monitoring/chart-security";
import { RESOURCES } from "../monitoring/resources";
import { APP_NAME, OBJECT_NAMES } from "./constants";
import type { UsageLedgerSetting } from "./usage-ledger-config";

/** The names of what the Job brings: itself, its script's ConfigMap, its admin keys' Secret or its service account. */
export const LEDGER_BUCKET_JOB = {
  name: "usage-ledger-bucket",
  script: "usage-ledger-bucket-script",
  adminKeys: "usage-ledger-bucket-admin",
  serviceAccount: "usage-ledger-bucket",
} as const;

/** The lifecycle rule's ID: the Job replaces only the rule of this ID and keeps the bucket's others. */
export { LEDGER_RULE_ID };
export const LEDGER_SCRIPT = { path: path.join(__dirname, "scripts", "usage-ledger-bucket.sh"), key: "usage-ledger-bucket.sh" } as const;
export const LEDGER_JOB_ATTEMPTS = 5;

/** The environment variables the AWS SDK and CLI read static keys from (the keys of both Secrets). */
export const AWS_KEY_ENV = { accessKeyId: "AWS_ACCESS_KEY_ID", secretAccessKey: "AWS_SECRET_ACCESS_KEY" } as const;

export function ledgerScript(): string {
  return fs.readFileSync(LEDGER_SCRIPT.path, "utf8");
}

const fromSecret = (secretName: string): EnvVar[] =>
  [AWS_KEY_ENV.accessKeyId, AWS_KEY_ENV.secretAccessKey].map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } }));

/** The gateway container's ledger settings; with static keys, the SDK's two variables from the `gateway-usage-ledger` Secret. */
export function ledgerEnv(ledger: UsageLedgerSetting): EnvVar[] {
  return [
    { name: SETTINGS_ENV.ledgerBucket, value: ledger.bucket },
    ...(ledger.s3Endpoint ? [{ name: SETTINGS_ENV.ledgerEndpoint, value: ledger.s3Endpoint }] : []),
    { name: SETTINGS_ENV.ledgerRegion, value: ledger.region },
    { name: SETTINGS_ENV.ledgerPrefix, value: ledger.prefix },
    ...(ledger.flushSeconds !== undefined ? [{ name: SETTINGS_ENV.ledgerFlushMs, value: String(ledger.flushSeconds * 1000) }] : []),
    ...(ledger.gateway.kind === "keys" ? fromSecret(OBJECT_NAMES.usageLedger) : []),
  ];
}

/** The AWS partition of an endpoint (its ARNs differ in China). */
function partition(endpoint: string): string {
  return new URL(endpoint).hostname.endsWith(".amazonaws.com.cn") ? "aws-cn" : "aws";
}

/**
 * The IAM policy (AWS's JSON, which MinIO and Ceph take too) of what the gateway does: put and get objects under its
 * prefix, list the bucket under it. Nothing else: no delete, no other prefix, no bucket settings.
 */
export function ledgerPolicy(ledger: UsageLedgerSetting) {
  const arn = `arn:${partition(ledger.endpoint)}:s3:::${ledger.bucket}`;
  return {
    Version: "2012-10-17",
    Statement: [
      { Sid: "UsageLedgerObjects", Effect: "Allow", Action: ["s3:PutObject", "s3:GetObject"], Resource: [`${arn}/${ledger.prefix}*`] },
      {
        Sid: "UsageLedgerList",
        Effect: "Allow",
        Action: ["s3:ListBucket"],
        Resource: [arn],
        ...(ledger.prefix ? { Condition: { StringLike: { "s3:prefix": [`${ledger.prefix}*`] } } } : {}),
      },
    ],
  };
}

/** The lifecycle rule the Job puts (replacing only a rule of its ID). */
export function lifecycleRule(ledger: Pick<UsageLedgerSetting, "prefix" | "retentionDays">) {
  return { ID: LEDGER_RULE_ID, Status: "Enabled", Filter: { Prefix: ledger.prefix }, Expiration: { Days: ledger.retentionDays } };
}

export interface LedgerBucketJobArgs {
  readonly ledger: UsageLedgerSetting;
  /** Pod labels beyond the Job's own (the platform label, so the collector ships its log). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** Pod template annotations: digests of the credentials and the script, so a change runs the Job again. */
  readonly podAnnotations?: Readonly<Record<string, string>>;
  readonly fixedUserIds: boolean;
  readonly image?: string;
}

/**
 * The Job's spec (the resource adds metadata), hardened as infra/platform/script-job.ts says; its labels are not the
 * gateway's, so the gateway's NetworkPolicy does not select it.
 */
export function buildLedgerBucketJobSpec(args: LedgerBucketJobArgs) {
  const { ledger } = args;
  const job = ledger.bucketJob;
  if (!job) throw new Error("no bucket Job without admin credentials");
  const location = locationConstraint(ledger.endpoint, ledger.region);
  return buildScriptJobSpec({
    containerName: LEDGER_BUCKET_JOB.name,
    image: args.image ?? AWS_CLI_IMAGE,
    scriptKey: LEDGER_SCRIPT.key,
    scriptConfigMapName: LEDGER_BUCKET_JOB.script,
    env: [
      { name: "S3_ENDPOINT", value: ledger.endpoint },
      { name: "S3_BUCKET", value: ledger.bucket },
      { name: "LEDGER_PREFIX", value: ledger.prefix },
      { name: "RETENTION_DAYS", value: String(ledger.retentionDays) },
      { name: "RULE_ID", value: LEDGER_RULE_ID },
      // Set here, so EKS's webhook does not add its own region.
      { name: "AWS_DEFAULT_REGION", value: ledger.region },
      ...(location ? [{ name: "S3_LOCATION_CONSTRAINT", value: location }] : []),
      ...(job.kind === "keys" ? fromSecret(LEDGER_BUCKET_JOB.adminKeys) : []),
    ],
    attempts: LEDGER_JOB_ATTEMPTS,
    resources: RESOURCES.bucketJob,
    identity: args.fixedUserIds ? IMAGE_IDENTITIES.nobody : undefined,
    serviceAccountName: job.kind === "irsa" ? LEDGER_BUCKET_JOB.serviceAccount : undefined,
    labels: { ...standardLabels(LEDGER_BUCKET_JOB.name, APP_NAME), ...(args.podLabels ?? {}) },
    annotations: args.podAnnotations,
  });
}
