// The log store's object store keys: which combinations of `objectStore`, `s3Endpoint`, static keys, service-account
// annotations and `s3Region` can work, each refusal on the key to change.
//
// `objectStore: s3` (the default) speaks an S3 API with static keys (`s3User`/`s3Password`), or on EKS with workload
// identity (IRSA): without keys, Loki's S3 client (aws-sdk-go) and the bucket Job's AWS CLI take credentials from the
// default AWS chain, whose web-identity step reads what EKS's pod identity webhook injects into pods whose service
// account carries `eks.amazonaws.com/role-arn`. Those are AWS STS credentials: they sign requests to AWS S3 only.
// GKE's Workload Identity gives Google OAuth tokens, which cannot sign S3 requests (SigV4 wants HMAC keys).
//
// `objectStore: gcs` speaks Cloud Storage's own API with those Google tokens: Loki's `gcs` backend through Application
// Default Credentials, the bucket Job through the GKE metadata server's token endpoint. No endpoint and no key.

import type { KeyIssue } from "../platform/config";
import { endpointRegionIssue, isAwsS3Endpoint } from "../platform/s3-endpoint";

export const OBJECT_STORES = ["s3", "gcs"] as const;
export type ObjectStoreType = (typeof OBJECT_STORES)[number];

/** The IRSA annotation: the IAM role the pods of the service account assume. */
export const IRSA_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn";
/** GKE Workload Identity's annotation: the Google service account the pods act as. */
export const GKE_SERVICE_ACCOUNT_ANNOTATION = "iam.gke.io/gcp-service-account";

/** The key of the log store's annotations (and the bucket Job's, unless it has its own). */
export const ANNOTATIONS_KEY = "s3ServiceAccountAnnotations";
/** The key of the bucket Job's own annotations (least privilege: only it may create the bucket). */
export const BUCKET_JOB_ANNOTATIONS_KEY = "s3BucketJobServiceAccountAnnotations";

const IAM_ROLE_ARN = /^arn:aws(?:-cn|-us-gov|-iso|-iso-b)?:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/** A user-managed Google service account (`name@project.iam.gserviceaccount.com`, domain-scoped projects included). */
const GOOGLE_SERVICE_ACCOUNT = /^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z0-9][a-z0-9.-]*\.iam\.gserviceaccount\.com$/;
/** A Cloud Storage location: a region (europe-west1), a dual-region (nam4) or a multi-region (eu). */
const GCS_LOCATION = /^(?:[a-z]+[0-9]*|[a-z]+-[a-z]+[0-9]+)$/;

/** What cannot work with one annotations key on this store. */
function annotationIssues(key: string, annotations: Readonly<Record<string, string>>, store: ObjectStoreType): KeyIssue[] {
  const role = annotations[IRSA_ROLE_ANNOTATION];
  const account = annotations[GKE_SERVICE_ACCOUNT_ANNOTATION];
  const issue = (message: string): KeyIssue => ({ path: [key], message });
  if (store === "gcs") {
    if (role !== undefined) return [issue(`${IRSA_ROLE_ANNOTATION}: an AWS role, which Cloud Storage does not take; objectStore gcs uses ${GKE_SERVICE_ACCOUNT_ANNOTATION}`)];
    if (account === undefined) return [issue(`must hold ${GKE_SERVICE_ACCOUNT_ANNOTATION} (the Google service account to act as), or be left out when IAM grants the Kubernetes service account itself`)];
    return GOOGLE_SERVICE_ACCOUNT.test(account) ? [] : [issue(`${GKE_SERVICE_ACCOUNT_ANNOTATION} must be a Google service account such as logstore@my-project.iam.gserviceaccount.com`)];
  }
  if (account !== undefined) {
    return [issue(`${GKE_SERVICE_ACCOUNT_ANNOTATION}: GKE Workload Identity gives Google tokens, which cannot sign S3 requests; set objectStore gcs (Cloud Storage's own API), or HMAC keys as s3User/s3Password`)];
  }
  if (role === undefined) return [issue(`must hold ${IRSA_ROLE_ANNOTATION} (the IAM role to assume, EKS IRSA)`)];
  return IAM_ROLE_ARN.test(role) ? [] : [issue(`${IRSA_ROLE_ANNOTATION} must be an IAM role ARN such as arn:aws:iam::123456789012:role/ai-platform-logstore`)];
}

const asRecord = (v: unknown) => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, string>) : undefined);

/** The store a (possibly invalid) configuration asks for; an invalid `objectStore` is the schema's to report. */
export function objectStoreOf(present: Readonly<Record<string, unknown>>): ObjectStoreType {
  return present.objectStore === "gcs" ? "gcs" : "s3";
}

/** True when the pods take credentials from their service accounts: no `s3User`/`s3Password`. */
export function withoutKeys(present: Readonly<Record<string, unknown>>): boolean {
  return objectStoreOf(present) === "gcs" || asRecord(present[ANNOTATIONS_KEY]) !== undefined;
}

/** Keys the key table requires with `logstore` that this store does not use. */
export function keysNotUsed(present: Readonly<Record<string, unknown>>): ReadonlySet<string> {
  if (objectStoreOf(present) === "gcs") return new Set(["s3Endpoint", "s3User", "s3Password"]);
  return withoutKeys(present) ? new Set(["s3User", "s3Password"]) : new Set();
}

/** Every object store key that cannot work with the others, as the schema's refinement sees them (`present`). */
export function objectStoreIssues(present: Readonly<Record<string, unknown>>): KeyIssue[] {
  const store = objectStoreOf(present);
  const logstore = asRecord(present[ANNOTATIONS_KEY]);
  const bucketJob = asRecord(present[BUCKET_JOB_ANNOTATIONS_KEY]);
  const issues: KeyIssue[] = [];
  if (logstore) issues.push(...annotationIssues(ANNOTATIONS_KEY, logstore, store));
  if (bucketJob) issues.push(...annotationIssues(BUCKET_JOB_ANNOTATIONS_KEY, bucketJob, store));

  if (store === "gcs") {
    for (const key of keysNotUsed(present)) {
      if (present[key] !== undefined) {
        issues.push({ path: [key], message: "not used with objectStore gcs (Loki and the bucket Job call Cloud Storage's own API as their GKE Workload Identity): remove it; Cloud Storage with HMAC keys is objectStore s3" });
      }
    }
    const region = present.s3Region;
    if (typeof region === "string" && (region === "auto" || !GCS_LOCATION.test(region))) {
      issues.push({ path: ["s3Region"], message: "with objectStore gcs: the bucket's Cloud Storage location, such as europe-west1, eu or us (Google writes us-east1, not us-east-1)" });
    }
    return issues;
  }

  if (logstore) {
    for (const key of ["s3User", "s3Password"]) {
      if (present[key] !== undefined) issues.push({ path: [key], message: `not used with ${ANNOTATIONS_KEY} (the pods take credentials from their service account): remove one of the two` });
    }
    const endpoint = present.s3Endpoint;
    if (typeof endpoint === "string" && URL.canParse(endpoint) && !isAwsS3Endpoint(endpoint)) {
      issues.push({
        path: ["s3Endpoint"],
        message: `must be an AWS S3 endpoint such as https://s3.eu-west-1.amazonaws.com with ${ANNOTATIONS_KEY} (the pods get AWS credentials, which other stores refuse); set s3User/s3Password for another store`,
      });
    }
  } else {
    if (bucketJob) issues.push({ path: [BUCKET_JOB_ANNOTATIONS_KEY], message: `needs ${ANNOTATIONS_KEY}: with s3User/s3Password the bucket Job uses those keys` });
    if (present.s3Password === undefined) issues.push({ path: ["s3Password"], message: "required (pulumi config set --secret monitoring:s3Password …)" });
  }
  const regionIssue = endpointRegionIssue(present.s3Endpoint, present.s3Region, "s3Endpoint");
  if (regionIssue) issues.push({ path: ["s3Region"], message: regionIssue });
  return issues;
}
