// The bucket Job `logstore-create-bucket` (spec "Bucket job") as a pure manifest builder. The shell script lives in
// scripts/create-bucket.sh so that the test suite can run it for real against an S3-compatible server.
import * as fs from "fs";
import * as path from "path";
import type * as pulumi from "@pulumi/pulumi";
import { standardLabels } from "../platform/labels";
import { BUCKET_JOB_ATTEMPTS, BUCKET_JOB_NAME } from "./constants";
import { S3_ENV } from "./logstore-values";

export const BUCKET_SCRIPT_PATH = path.join(__dirname, "scripts", "create-bucket.sh");
export const BUCKET_SCRIPT_KEY = "create-bucket.sh";

export function bucketScript(): string {
  return fs.readFileSync(BUCKET_SCRIPT_PATH, "utf8");
}

export interface BucketJobArgs {
  readonly image: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  readonly credentialsSecretName: string;
  readonly scriptConfigMapName: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Pod template annotations (the credentials digest: a rotation replaces the Job, which then runs again). */
  readonly podAnnotations?: Readonly<Record<string, pulumi.Input<string>>>;
}

/** Job spec (without metadata/apiVersion, which the Pulumi resource adds). */
export function buildBucketJobSpec(args: BucketJobArgs) {
  return {
    // The script makes every attempt itself (BUCKET_JOB_ATTEMPTS); one failed pod fails the Job
    // ("backoff limit exceeded"), so the total number of attempts is exactly the spec's 5.
    backoffLimit: 0,
    template: {
      metadata: { labels: standardLabels(BUCKET_JOB_NAME, "logstore"), ...(args.podAnnotations ? { annotations: { ...args.podAnnotations } } : {}) },
      spec: {
        restartPolicy: "Never",
        nodeSelector: { ...args.nodeSelector },
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
              { name: S3_ENV.accessKeyId, valueFrom: { secretKeyRef: { name: args.credentialsSecretName, key: S3_ENV.accessKeyId } } },
              {
                name: S3_ENV.secretAccessKey,
                valueFrom: { secretKeyRef: { name: args.credentialsSecretName, key: S3_ENV.secretAccessKey } },
              },
            ],
            volumeMounts: [{ name: "script", mountPath: "/scripts", readOnly: true }],
          },
        ],
        volumes: [{ name: "script", configMap: { name: args.scriptConfigMapName } }],
      },
    },
  };
}
