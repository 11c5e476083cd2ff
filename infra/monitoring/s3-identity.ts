// How the log store and the bucket Job authenticate to the object store: static keys (`s3User`/`s3Password`, the
// default), or workload identity (`s3ServiceAccountAnnotations`): annotations on their service accounts, and no key
// at all in the pods. Without keys, Loki's S3 client (aws-sdk-go) and the bucket Job's AWS CLI take credentials from
// the default AWS chain, whose web-identity step reads what EKS's pod identity webhook injects into pods whose service
// account carries `eks.amazonaws.com/role-arn` (AWS_ROLE_ARN and a projected token, independent of
// automountServiceAccountToken). Those are AWS STS credentials: they sign requests to AWS S3 only.
//
// GKE's Workload Identity gives Google OAuth tokens. S3 requests are signed with HMAC keys (SigV4), which such a
// token cannot do: Cloud Storage's S3-compatible API wants HMAC keys (as s3User/s3Password), and a bucket created
// through it needs them too. So the GKE annotation is refused here with that explanation.

import type { KeyIssue } from "../platform/config";
import { isAwsS3Endpoint } from "../platform/s3-endpoint";

/** The IRSA annotation: the IAM role the pods of the service account assume. */
export const IRSA_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn";
/** GKE Workload Identity's annotation: the Google service account the pods act as. */
export const GKE_SERVICE_ACCOUNT_ANNOTATION = "iam.gke.io/gcp-service-account";

const IAM_ROLE_ARN = /^arn:aws(?:-cn|-us-gov|-iso|-iso-b)?:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

/** What cannot work with these service-account annotations, each on the key to change. */
export function workloadIdentityIssues(annotations: Readonly<Record<string, string>>, s3Endpoint: string | undefined): KeyIssue[] {
  const key = "s3ServiceAccountAnnotations";
  const issues: KeyIssue[] = [];
  if (annotations[GKE_SERVICE_ACCOUNT_ANNOTATION] !== undefined) {
    issues.push({
      path: [key],
      message:
        `${GKE_SERVICE_ACCOUNT_ANNOTATION}: GKE Workload Identity gives Google tokens, which cannot sign S3 requests (the log store's S3 client, the bucket Job's AWS CLI); ` +
        "on Cloud Storage use HMAC keys of a service account as s3User/s3Password with s3Endpoint https://storage.googleapis.com",
    });
  }
  const role = annotations[IRSA_ROLE_ANNOTATION];
  if (role === undefined) {
    // The GKE message above already says what to do instead.
    if (issues.length === 0) issues.push({ path: [key], message: `must hold ${IRSA_ROLE_ANNOTATION} (the IAM role the log store and the bucket Job assume, EKS IRSA)` });
  } else if (!IAM_ROLE_ARN.test(role)) {
    issues.push({ path: [key], message: `${IRSA_ROLE_ANNOTATION} must be an IAM role ARN such as arn:aws:iam::123456789012:role/ai-platform-logstore` });
  }
  if (s3Endpoint !== undefined && URL.canParse(s3Endpoint) && !isAwsS3Endpoint(s3Endpoint)) {
    issues.push({
      path: ["s3Endpoint"],
      message: "must be an AWS S3 endpoint such as https://s3.eu-west-1.amazonaws.com with s3ServiceAccountAnnotations (the pods get AWS credentials, which other stores refuse); set s3User/s3Password for another store",
    });
  }
  return issues;
}
