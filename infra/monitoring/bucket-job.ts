// The bucket Job `logstore-create-bucket` (spec "Bucket job") as a pure manifest builder. The shell script lives in
// scripts/create-bucket.sh so that the test suite can run it for real against an S3-compatible server.
import * as fs from "fs";
import * as path from "path";
import type * as pulumi from "@pulumi/pulumi";
import { standardLabels } from "../platform/labels";
import { isAwsS3Endpoint } from "../platform/s3-endpoint";
import { containerSecurityContext, podSecurityContext } from "../platform/security";
import { IMAGE_IDENTITIES } from "./chart-security";
import { BUCKET_JOB_ATTEMPTS, BUCKET_JOB_NAME } from "./constants";
import { S3_ENV } from "./logstore-values";
import { RESOURCES } from "./resources";

export const BUCKET_SCRIPT_PATH = path.join(__dirname, "scripts", "create-bucket.sh");
export const BUCKET_SCRIPT_KEY = "create-bucket.sh";

export function bucketScript(): string {
  return fs.readFileSync(BUCKET_SCRIPT_PATH, "utf8");
}

export interface BucketJobArgs {
  readonly image: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  /** `s3Region`: the region the requests are signed for (and, on AWS, where the bucket is created). */
  readonly region: string;
  /** Static keys: the Secret with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. Workload identity: the pod's service account. */
  readonly credentials: { readonly secretName: string } | { readonly serviceAccountName: string };
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
 * one that names us-east-1. Other stores get none: MinIO and Ceph refuse one that differs from their own region, and
 * Cloud Storage's XML API reads it as a Google location, not as the region the requests are signed for.
 */
export function locationConstraint(s3Endpoint: string, region: string): string | undefined {
  return isAwsS3Endpoint(s3Endpoint) && region !== "us-east-1" ? region : undefined;
}

/**
 * Job spec (without metadata/apiVersion, which the Pulumi resource adds). The AWS CLI image runs as root by default;
 * it needs no privilege, only a writable home for its cache, so it runs as `nobody` with /tmp as home on a read-only
 * root filesystem.
 */
export function buildBucketJobSpec(args: BucketJobArgs) {
  const identity = args.fixedUserIds ? IMAGE_IDENTITIES.nobody : undefined;
  const location = locationConstraint(args.s3Endpoint, args.region);
  const secretName = "secretName" in args.credentials ? args.credentials.secretName : undefined;
  const keyEnv = secretName
    ? [S3_ENV.accessKeyId, S3_ENV.secretAccessKey].map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } }))
    : [];
  return {
    // The script makes every attempt itself (BUCKET_JOB_ATTEMPTS); one failed pod fails the Job
    // ("backoff limit exceeded"), so the total number of attempts is exactly the spec's 5.
    backoffLimit: 0,
    template: {
      metadata: {
        labels: { ...standardLabels(BUCKET_JOB_NAME, "logstore"), ...(args.podLabels ?? {}) },
        ...(args.podAnnotations ? { annotations: { ...args.podAnnotations } } : {}),
      },
      spec: {
        restartPolicy: "Never",
        // No Kubernetes API token; with workload identity, EKS's webhook mounts a token of its own for AWS STS.
        automountServiceAccountToken: false,
        ...("serviceAccountName" in args.credentials ? { serviceAccountName: args.credentials.serviceAccountName } : {}),
        securityContext: podSecurityContext(identity),
        containers: [
          {
            name: "create-bucket",
            image: args.image,
            command: ["/bin/sh", `/scripts/${BUCKET_SCRIPT_KEY}`],
            env: [
              { name: "S3_ENDPOINT", value: args.s3Endpoint },
              { name: "S3_BUCKET", value: args.bucket },
              { name: "ATTEMPTS", value: String(BUCKET_JOB_ATTEMPTS) },
              { name: "RETRY_DELAY_SECONDS", value: "10" },
              { name: "HOME", value: "/tmp" },
              // Set here, so EKS's webhook does not add its own region.
              { name: "AWS_DEFAULT_REGION", value: args.region },
              ...(location ? [{ name: "S3_LOCATION_CONSTRAINT", value: location }] : []),
              ...keyEnv,
            ],
            resources: RESOURCES.bucketJob,
            securityContext: containerSecurityContext(identity),
            volumeMounts: [
              { name: "script", mountPath: "/scripts", readOnly: true },
              { name: "tmp", mountPath: "/tmp" },
            ],
          },
        ],
        volumes: [
          { name: "script", configMap: { name: args.scriptConfigMapName } },
          { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
        ],
      },
    },
  };
}
