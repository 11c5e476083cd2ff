// The bucket Job `logstore-create-bucket` (spec "Bucket job") as a pure manifest builder. Its shell scripts live in
// scripts/ so that the test suites can run them for real: create-bucket.sh (an S3 API, through the AWS CLI) against an
// S3-compatible server, create-bucket-gcs.sh (Cloud Storage's JSON API, through curl) against a double of Google's.
import * as fs from "fs";
import * as path from "path";
import type * as pulumi from "@pulumi/pulumi";
import { standardLabels } from "../platform/labels";
import { isAwsS3Endpoint } from "../platform/s3-endpoint";
import { buildScriptJobSpec, type EnvVar } from "../platform/script-job";
import { IMAGE_IDENTITIES } from "./chart-security";
import { BUCKET_JOB_ATTEMPTS, BUCKET_JOB_NAME } from "./constants";
import { S3_ENV } from "./logstore-values";
import type { ObjectStoreType } from "./object-store";
import { RESOURCES } from "./resources";

/** The script of each object store type, and its key in the script ConfigMap. */
export const BUCKET_SCRIPTS = {
  s3: { path: path.join(__dirname, "scripts", "create-bucket.sh"), key: "create-bucket.sh" },
  gcs: { path: path.join(__dirname, "scripts", "create-bucket-gcs.sh"), key: "create-bucket-gcs.sh" },
} as const satisfies Record<ObjectStoreType, { path: string; key: string }>;

export function bucketScript(store: ObjectStoreType): string {
  return fs.readFileSync(BUCKET_SCRIPTS[store].path, "utf8");
}

/** Where the bucket goes, and how the Job authenticates there. */
export type BucketTarget =
  | {
      readonly store: "s3";
      readonly s3Endpoint: string;
      /** `s3Region`: the region the requests are signed for (and, on AWS, where the bucket is created). */
      readonly region: string;
      /** Static keys: the Secret with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. Workload identity: the pod's service account. */
      readonly credentials: { readonly secretName: string } | { readonly serviceAccountName: string };
    }
  | {
      readonly store: "gcs";
      /** `s3Region`: the Cloud Storage location a missing bucket is created in. */
      readonly location: string;
      /** Its Workload Identity: the GKE metadata server gives tokens per Kubernetes service account. */
      readonly serviceAccountName: string;
    };

export interface BucketJobArgs {
  readonly image: string;
  readonly bucket: string;
  readonly target: BucketTarget;
  readonly scriptConfigMapName: string;
  /** Extra pod labels (the platform label, so the collector ships the Job's log). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`: run as `nobody`, or let the cluster assign the ids. */
  readonly fixedUserIds: boolean;
  /** Pod template annotations (the credentials digest: a rotation replaces the Job, which then runs again). */
  readonly podAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
}

/**
 * The LocationConstraint of the bucket's creation: AWS creates a bucket outside us-east-1 only with one, and refuses
 * one that names us-east-1. Other stores get none: Ceph, and MinIO with a region set, refuse one that is not theirs, and
 * Cloud Storage's XML API reads it as a Google location, not as the region the requests are signed for.
 */
export function locationConstraint(s3Endpoint: string, region: string): string | undefined {
  return isAwsS3Endpoint(s3Endpoint) && region !== "us-east-1" ? region : undefined;
}

/** What each script reads (see the header of each). */
function targetEnv(bucket: string, target: BucketTarget): EnvVar[] {
  if (target.store === "gcs") {
    return [
      { name: "GCS_BUCKET", value: bucket },
      { name: "GCS_LOCATION", value: target.location },
    ];
  }
  const location = locationConstraint(target.s3Endpoint, target.region);
  const secretName = "secretName" in target.credentials ? target.credentials.secretName : undefined;
  return [
    { name: "S3_ENDPOINT", value: target.s3Endpoint },
    { name: "S3_BUCKET", value: bucket },
    // Set here, so EKS's webhook does not add its own region.
    { name: "AWS_DEFAULT_REGION", value: target.region },
    ...(location ? [{ name: "S3_LOCATION_CONSTRAINT", value: location }] : []),
    ...(secretName ? [S3_ENV.accessKeyId, S3_ENV.secretAccessKey].map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } })) : []),
  ];
}

/**
 * Job spec (without metadata/apiVersion, which the Pulumi resource adds). The AWS CLI image runs as root by default;
 * the Job runs as `nobody` instead (see infra/platform/script-job.ts).
 */
export function buildBucketJobSpec(args: BucketJobArgs) {
  const t = args.target;
  const serviceAccountName = t.store === "gcs" ? t.serviceAccountName : "serviceAccountName" in t.credentials ? t.credentials.serviceAccountName : undefined;
  return buildScriptJobSpec({
    containerName: "create-bucket",
    image: args.image,
    scriptKey: BUCKET_SCRIPTS[t.store].key,
    scriptConfigMapName: args.scriptConfigMapName,
    env: targetEnv(args.bucket, t),
    // One failed pod fails the Job, so the total number of attempts is exactly the spec's 5.
    attempts: BUCKET_JOB_ATTEMPTS,
    resources: RESOURCES.bucketJob,
    identity: args.fixedUserIds ? IMAGE_IDENTITIES.nobody : undefined,
    serviceAccountName,
    labels: { ...standardLabels(BUCKET_JOB_NAME, "logstore"), ...(args.podLabels ?? {}) },
    annotations: args.podAnnotations,
  });
}
