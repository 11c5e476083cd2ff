// `gateway:usageLedger` and its secrets: where the gateway writes the usage ledger (an S3 bucket and prefix), how it
// authenticates (static keys, or EKS IRSA), how long the store keeps the objects, and who creates the bucket and its
// lifecycle rule (the `usage-ledger-bucket` Job with admin credentials of its own, or the operator). Each combination
// that cannot work is refused on the key to change.
import { DEFAULT_RETENTION_DAYS } from "../../gateway/src/ledger/format";
import { z } from "zod";
import { GatewaySettingsSchema } from "../../gateway/src/config/settings";
import { doc, type KeyIssue } from "../platform/config";
import { endpointRegionIssue, isAwsS3Endpoint } from "../platform/s3-endpoint";
import { cidr, DEFAULT_S3_REGION, dnsLabel, labelMap, port, s3Region } from "../platform/schema-rules";

/** The gateway's keys (Put/Get/List on its prefix only) and the bucket Job's admin keys, each pair both or neither. */
export const USAGE_LEDGER_SECRET_KEYS = ["usageLedgerAccessKeyId", "usageLedgerSecretAccessKey", "usageLedgerAdminAccessKeyId", "usageLedgerAdminSecretAccessKey"] as const;
const GATEWAY_KEYS = ["usageLedgerAccessKeyId", "usageLedgerSecretAccessKey"] as const;
const ADMIN_KEYS = ["usageLedgerAdminAccessKeyId", "usageLedgerAdminSecretAccessKey"] as const;

/** The IRSA annotation: the IAM role the pods of the service account assume. */
export const IRSA_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn";
const IAM_ROLE_ARN = /^arn:aws(?:-cn|-us-gov|-iso|-iso-b)?:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

/** 13 months: a year-over-year comparison of last month still finds it. */
export { DEFAULT_RETENTION_DAYS };

const irsaAnnotations = z.record(z.string(), z.string());
const egressPort = port.optional().meta(doc("Default: the endpoint's port (443 for https, 80 for http, 443 for AWS)."));

export const usageLedgerSchema = z.strictObject({
  bucket: GatewaySettingsSchema.shape.ledgerBucket.unwrap().meta(doc("The bucket.", "ai-platform-usage")),
  s3Endpoint: GatewaySettingsSchema.shape.ledgerEndpoint.meta(
    doc("S3-compatible endpoint (MinIO, Ceph), e.g. the log store's `monitoring:s3Endpoint` to share its store; unset: AWS S3 in `region`.", "http://objectstore.app-shaide.svc.cluster.local:9000"),
  ),
  region: s3Region.default(DEFAULT_S3_REGION).meta(doc("Region requests are signed for: on AWS the bucket's.", "eu-west-1")),
  prefix: GatewaySettingsSchema.shape.ledgerPrefix.meta(doc("Where in the bucket the ledger goes (empty, or segments each ending in `/`); the gateway may write only there.", "usage/")),
  retentionDays: z.number().int().min(1).max(36_500).default(DEFAULT_RETENTION_DAYS).meta(doc("Days the store keeps the ledger's objects (its lifecycle rule).", 731)),
  flushSeconds: z.number().int().min(1).max(3600).optional().meta(doc("How often each replica writes its counts: what a killed replica may lose. Default: the gateway's (10).", 5)),
  egress: z
    .union([z.strictObject({ namespace: dnsLabel, podLabels: labelMap.optional(), port: egressPort }), z.strictObject({ cidr, port: egressPort })], {
      error: "must be { namespace, podLabels?, port? } or { cidr, port? }",
    })
    .meta(doc("Where the store runs, for the NetworkPolicy: `{namespace, podLabels?, port?}` or `{cidr, port?}`; `port` defaults to the endpoint's (443 for https and AWS, 80 for http).", { namespace: "app-shaide" }, { cidr: "52.216.0.0/15" })),
  serviceAccountAnnotations: irsaAnnotations
    .optional()
    .meta(doc(`EKS IRSA for the gateway (\`${IRSA_ROLE_ANNOTATION}\`), instead of \`gateway:usageLedgerAccessKeyId\`/\`usageLedgerSecretAccessKey\`.`, { [IRSA_ROLE_ANNOTATION]: "arn:aws:iam::123456789012:role/ai-gateway-ledger" })),
  bucketJobServiceAccountAnnotations: irsaAnnotations
    .optional()
    .meta(doc("EKS IRSA for the `usage-ledger-bucket` Job, instead of the `usageLedgerAdmin*` keys; with neither, no Job: create the bucket and its lifecycle rule yourself.", { [IRSA_ROLE_ANNOTATION]: "arn:aws:iam::123456789012:role/ai-platform-bucket-admin" })),
});
export type UsageLedgerInput = z.infer<typeof usageLedgerSchema>;

/** How a pod authenticates to the store: keys from a Secret, or its service account's IRSA role. */
export type LedgerCredentials = { readonly kind: "keys" } | { readonly kind: "irsa"; readonly annotations: Readonly<Record<string, string>> };

/** `gateway:usageLedger`, validated and resolved. */
export interface UsageLedgerSetting {
  readonly bucket: string;
  /** Always set: `s3Endpoint`, or AWS's regional endpoint of `region`. */
  readonly endpoint: string;
  /** `s3Endpoint` as configured (unset: the gateway uses AWS S3). */
  readonly s3Endpoint?: string;
  readonly region: string;
  readonly prefix: string;
  readonly retentionDays: number;
  readonly flushSeconds?: number;
  readonly egress: { readonly namespace: string; readonly podLabels?: Readonly<Record<string, string>>; readonly port: number } | { readonly cidr: string; readonly port: number };
  readonly gateway: LedgerCredentials;
  /** Undefined: no Job, the operator makes the bucket and its lifecycle rule. */
  readonly bucketJob?: LedgerCredentials;
}

const asRecord = (v: unknown) => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

function annotationIssue(path: (string | number)[], annotations: Record<string, unknown>, endpoint: unknown): KeyIssue | undefined {
  const role = annotations[IRSA_ROLE_ANNOTATION];
  if (typeof role !== "string") return { path, message: `must hold ${IRSA_ROLE_ANNOTATION} (the IAM role to assume, EKS IRSA)` };
  if (!IAM_ROLE_ARN.test(role)) return { path, message: `${IRSA_ROLE_ANNOTATION} must be an IAM role ARN such as arn:aws:iam::123456789012:role/ai-gateway-ledger` };
  if (typeof endpoint === "string" && URL.canParse(endpoint) && !isAwsS3Endpoint(endpoint)) {
    return { path, message: "gives AWS credentials, which only AWS S3 takes: unset usageLedger.s3Endpoint (or name an AWS one), or use keys for another store" };
  }
  return undefined;
}

/**
 * What cannot work across `usageLedger` and its four secrets, as the schema's refinement sees them (`present`: the
 * raw keys, secrets as a presence marker).
 */
export function usageLedgerIssues(present: Readonly<Record<string, unknown>>): KeyIssue[] {
  const ledger = asRecord(present.usageLedger);
  const issues: KeyIssue[] = [];
  const set = (k: string) => present[k] !== undefined;
  if (!ledger) {
    for (const k of USAGE_LEDGER_SECRET_KEYS.filter(set)) issues.push({ path: [k], message: "only used with gateway:usageLedger: remove it, or set gateway:usageLedger" });
    return issues;
  }
  const gatewayIrsa = asRecord(ledger.serviceAccountAnnotations);
  const jobIrsa = asRecord(ledger.bucketJobServiceAccountAnnotations);
  if (gatewayIrsa) {
    const issue = annotationIssue(["usageLedger", "serviceAccountAnnotations"], gatewayIrsa, ledger.s3Endpoint);
    if (issue) issues.push(issue);
    for (const k of GATEWAY_KEYS.filter(set)) issues.push({ path: [k], message: "not used with usageLedger.serviceAccountAnnotations (the gateway takes its role's credentials): remove one of the two" });
  } else {
    for (const k of GATEWAY_KEYS.filter((k) => !set(k))) issues.push({ path: [k], message: `required with gateway:usageLedger unless usageLedger.serviceAccountAnnotations is set (pulumi config set --secret gateway:${k} …)` });
  }
  if (jobIrsa) {
    const issue = annotationIssue(["usageLedger", "bucketJobServiceAccountAnnotations"], jobIrsa, ledger.s3Endpoint);
    if (issue) issues.push(issue);
    for (const k of ADMIN_KEYS.filter(set)) issues.push({ path: [k], message: "not used with usageLedger.bucketJobServiceAccountAnnotations (the Job takes its role's credentials): remove one of the two" });
  } else if (ADMIN_KEYS.some(set)) {
    for (const k of ADMIN_KEYS.filter((k) => !set(k))) issues.push({ path: [k], message: `required with the other admin key (pulumi config set --secret gateway:${k} …)` });
  }
  const regionIssue = endpointRegionIssue(ledger.s3Endpoint, ledger.region, "usageLedger.s3Endpoint");
  if (regionIssue) issues.push({ path: ["usageLedger", "region"], message: regionIssue });
  return issues;
}

/** AWS's regional S3 endpoint (China's regions under amazonaws.com.cn). */
export function awsS3Endpoint(region: string): string {
  return `https://s3.${region}.amazonaws.com${region.startsWith("cn-") ? ".cn" : ""}`;
}

function endpointPort(endpoint: string): number {
  const url = new URL(endpoint);
  return url.port ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
}

/** The resolved setting; `present` tells which secrets the stack holds (after `usageLedgerIssues` found none missing). */
export function usageLedgerSetting(c: UsageLedgerInput, present: Readonly<Record<string, unknown>>): UsageLedgerSetting {
  const endpoint = c.s3Endpoint ?? awsS3Endpoint(c.region);
  const port = c.egress.port ?? endpointPort(endpoint);
  const egress = "cidr" in c.egress ? { cidr: c.egress.cidr, port } : { namespace: c.egress.namespace, ...(c.egress.podLabels ? { podLabels: c.egress.podLabels } : {}), port };
  const bucketJob: LedgerCredentials | undefined = c.bucketJobServiceAccountAnnotations
    ? { kind: "irsa", annotations: c.bucketJobServiceAccountAnnotations }
    : ADMIN_KEYS.every((k) => present[k] !== undefined)
      ? { kind: "keys" }
      : undefined;
  return {
    bucket: c.bucket,
    endpoint,
    ...(c.s3Endpoint ? { s3Endpoint: c.s3Endpoint } : {}),
    region: c.region,
    prefix: c.prefix,
    retentionDays: c.retentionDays,
    ...(c.flushSeconds !== undefined ? { flushSeconds: c.flushSeconds } : {}),
    egress,
    gateway: c.serviceAccountAnnotations ? { kind: "irsa", annotations: c.serviceAccountAnnotations } : { kind: "keys" },
    ...(bucketJob ? { bucketJob } : {}),
  };
}
