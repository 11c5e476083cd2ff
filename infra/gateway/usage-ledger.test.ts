// `gateway:usageLedger` and its secrets: what the key table accepts, each combination that cannot work refused on the
// key to change, and the pure builders (the gateway's env, the policy, the bucket Job's spec, the egress rule).
import { configProblems } from "../platform/config-testing";
import { parseGatewayConfig } from "./config";
import { buildNetworkPolicySpec } from "./network";
import { gatewayConfig, rawGatewayNamespace, TEST_LEDGER } from "./testing";
import { buildLedgerBucketJobSpec, ledgerEnv, ledgerPolicy } from "./usage-ledger";
import type { UsageLedgerSetting } from "./usage-ledger-config";

const ROLE = { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ai-gateway-ledger" };
const MINIO = { bucket: "ai-platform-usage", s3Endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", egress: { namespace: "app-shaide" } };
const KEYS = { "gateway:usageLedgerAccessKeyId": "[secret]", "gateway:usageLedgerSecretAccessKey": "[secret]" };
const ADMIN = { "gateway:usageLedgerAdminAccessKeyId": "[secret]", "gateway:usageLedgerAdminSecretAccessKey": "[secret]" };

const parse = (overrides: Record<string, string | undefined>) => parseGatewayConfig(rawGatewayNamespace(gatewayConfig(overrides)), "ai-platform.io");
const withLedger = (ledger: unknown, secrets: Record<string, string> = KEYS) => parse({ "gateway:usageLedger": JSON.stringify(ledger), ...secrets });

describe("gateway:usageLedger", () => {
  test("absent: off", () => {
    expect(parse({}).usageLedger).toBeUndefined();
  });

  test("defaults: us-east-1, prefix ledger/, 13 months; the egress port is the endpoint's; no admin keys, no Job", () => {
    expect(withLedger(MINIO).usageLedger).toEqual({
      bucket: "ai-platform-usage",
      endpoint: MINIO.s3Endpoint,
      s3Endpoint: MINIO.s3Endpoint,
      region: "us-east-1",
      prefix: "ledger/",
      retentionDays: 396,
      egress: { namespace: "app-shaide", port: 9000 },
      gateway: { kind: "keys" },
    });
  });

  test("AWS: no endpoint means the region's; IRSA for the gateway and the Job; egress port 443", () => {
    const c = withLedger({ bucket: "usage", region: "eu-west-1", egress: { cidr: "52.218.0.0/17" }, serviceAccountAnnotations: ROLE, bucketJobServiceAccountAnnotations: ROLE }, {});
    expect(c.usageLedger).toMatchObject({ endpoint: "https://s3.eu-west-1.amazonaws.com", egress: { cidr: "52.218.0.0/17", port: 443 }, gateway: { kind: "irsa", annotations: ROLE }, bucketJob: { kind: "irsa" } });
    expect(c.usageLedger).not.toHaveProperty("s3Endpoint");
  });

  test("admin keys make the Job; an explicit port and flush interval are kept", () => {
    const c = withLedger({ ...MINIO, prefix: "", retentionDays: 30, flushSeconds: 5, egress: { namespace: "app-shaide", port: 9443 } }, { ...KEYS, ...ADMIN });
    expect(c.usageLedger).toMatchObject({ prefix: "", retentionDays: 30, flushSeconds: 5, egress: { port: 9443 }, bucketJob: { kind: "keys" } });
  });

  test.each([
    ["the gateway's keys missing", MINIO, {}, ["gateway:usageLedgerAccessKeyId: required with gateway:usageLedger unless", "gateway:usageLedgerSecretAccessKey: required"]],
    ["one of the gateway's keys", MINIO, { "gateway:usageLedgerAccessKeyId": "[secret]" }, ["gateway:usageLedgerSecretAccessKey: required"]],
    ["keys and IRSA both", { ...MINIO, s3Endpoint: undefined, serviceAccountAnnotations: ROLE, egress: { cidr: "52.218.0.0/17" } }, KEYS, ["gateway:usageLedgerAccessKeyId: not used with usageLedger.serviceAccountAnnotations", "gateway:usageLedgerSecretAccessKey: not used"]],
    ["IRSA on another store than AWS", { ...MINIO, serviceAccountAnnotations: ROLE }, {}, ["gateway:usageLedger [serviceAccountAnnotations]: gives AWS credentials, which only AWS S3 takes"]],
    ["IRSA without a role", { ...MINIO, s3Endpoint: undefined, serviceAccountAnnotations: { a: "b" } }, {}, ["gateway:usageLedger [serviceAccountAnnotations]: must hold eks.amazonaws.com/role-arn"]],
    ["a role that is no ARN", { ...MINIO, bucketJobServiceAccountAnnotations: { "eks.amazonaws.com/role-arn": "admin" } }, KEYS, ["gateway:usageLedger [bucketJobServiceAccountAnnotations]: eks.amazonaws.com/role-arn must be an IAM role ARN"]],
    ["one admin key", MINIO, { ...KEYS, "gateway:usageLedgerAdminSecretAccessKey": "[secret]" }, ["gateway:usageLedgerAdminAccessKeyId: required with the other admin key"]],
    ["admin keys and a Job role both", { ...MINIO, s3Endpoint: undefined, bucketJobServiceAccountAnnotations: ROLE }, { ...KEYS, ...ADMIN }, ["gateway:usageLedgerAdminAccessKeyId: not used with usageLedger.bucketJobServiceAccountAnnotations", "gateway:usageLedgerAdminSecretAccessKey: not used"]],
    ["an AWS endpoint of another region", { ...MINIO, s3Endpoint: "https://s3.eu-central-1.amazonaws.com", region: "us-east-1" }, KEYS, ["gateway:usageLedger [region]: must be eu-central-1"]],
    ["a prefix not ending in /", { ...MINIO, prefix: "ledger" }, KEYS, ["gateway:usageLedger [prefix]: empty, or path segments each ending in /"]],
    ["a bucket name S3 refuses", { ...MINIO, bucket: "Usage_Ledger" }, KEYS, ["gateway:usageLedger [bucket]: an S3 bucket name"]],
    ["no egress", { bucket: "usage", s3Endpoint: MINIO.s3Endpoint }, KEYS, ["gateway:usageLedger [egress]: must be"]],
    ["an egress of neither shape", { ...MINIO, egress: { host: "minio" } }, KEYS, ["gateway:usageLedger [egress]: must be { namespace, podLabels?, port? } or { cidr, port? }"]],
    ["retention of 0 days", { ...MINIO, retentionDays: 0 }, KEYS, ["gateway:usageLedger [retentionDays]: "]],
  ])("%s fails naming the key", (_name, ledger, secrets, expected) => {
    const lines = configProblems(() => withLedger(ledger, secrets));
    for (const e of expected) expect(lines).toContainEqual(expect.stringContaining(e));
    expect(lines.join("\n")).not.toContain("[secret]");
  });

  test("its secrets without usageLedger are refused, each by name", () => {
    expect(configProblems(() => parse({ ...KEYS, ...ADMIN }))).toEqual(
      ["usageLedgerAccessKeyId", "usageLedgerSecretAccessKey", "usageLedgerAdminAccessKeyId", "usageLedgerAdminSecretAccessKey"].map((k) => `gateway:${k}: only used with gateway:usageLedger: remove it, or set gateway:usageLedger`),
    );
  });

  test("the stack sets the ledger's variables: gateway:env refuses them", () => {
    const lines = configProblems(() => parse({ "gateway:env": JSON.stringify({ GATEWAY_LEDGER_BUCKET: "b", GATEWAY_LEDGER_DIR: "/tmp/l", GATEWAY_REPLICA_NAME: "one" }) }));
    expect(lines).toEqual(["GATEWAY_LEDGER_BUCKET", "GATEWAY_LEDGER_DIR", "GATEWAY_REPLICA_NAME"].map((v) => `gateway:env [${v}]: unknown key`));
  });
});

describe("usage ledger builders", () => {
  test("the gateway's env: bucket, endpoint, region, prefix, flush in ms, static keys from their Secret only", () => {
    expect(ledgerEnv(TEST_LEDGER)).toEqual([
      { name: "GATEWAY_LEDGER_BUCKET", value: "ai-platform-usage" },
      { name: "GATEWAY_LEDGER_S3_ENDPOINT", value: TEST_LEDGER.s3Endpoint },
      { name: "GATEWAY_LEDGER_S3_REGION", value: "us-east-1" },
      { name: "GATEWAY_LEDGER_PREFIX", value: "ledger/" },
      { name: "GATEWAY_LEDGER_FLUSH_MS", value: "5000" },
      { name: "AWS_ACCESS_KEY_ID", valueFrom: { secretKeyRef: { name: "gateway-usage-ledger", key: "AWS_ACCESS_KEY_ID" } } },
      { name: "AWS_SECRET_ACCESS_KEY", valueFrom: { secretKeyRef: { name: "gateway-usage-ledger", key: "AWS_SECRET_ACCESS_KEY" } } },
    ]);
    // AWS with IRSA: no endpoint (the SDK's own), no keys (the role's), the gateway's default flush.
    const irsa = ledgerEnv({ ...TEST_LEDGER, s3Endpoint: undefined, flushSeconds: undefined, gateway: { kind: "irsa", annotations: {} } });
    expect(irsa.map((e) => e.name)).toEqual(["GATEWAY_LEDGER_BUCKET", "GATEWAY_LEDGER_S3_REGION", "GATEWAY_LEDGER_PREFIX"]);
  });

  test("the policy: put and get under the prefix, list the bucket under it, nothing else", () => {
    expect(ledgerPolicy(TEST_LEDGER)).toEqual({
      Version: "2012-10-17",
      Statement: [
        { Sid: "UsageLedgerObjects", Effect: "Allow", Action: ["s3:PutObject", "s3:GetObject"], Resource: ["arn:aws:s3:::ai-platform-usage/ledger/*"] },
        { Sid: "UsageLedgerList", Effect: "Allow", Action: ["s3:ListBucket"], Resource: ["arn:aws:s3:::ai-platform-usage"], Condition: { StringLike: { "s3:prefix": ["ledger/*"] } } },
      ],
    });
    const whole = ledgerPolicy({ ...TEST_LEDGER, prefix: "", endpoint: "https://s3.cn-north-1.amazonaws.com.cn" });
    expect(whole.Statement).toEqual([
      expect.objectContaining({ Resource: ["arn:aws-cn:s3:::ai-platform-usage/*"] }),
      { Sid: "UsageLedgerList", Effect: "Allow", Action: ["s3:ListBucket"], Resource: ["arn:aws-cn:s3:::ai-platform-usage"] },
    ]);
  });

  test("the bucket Job: pinned AWS CLI, hardened, no API token, admin keys from their Secret, the script's settings", () => {
    const spec = buildLedgerBucketJobSpec({ ledger: TEST_LEDGER, fixedUserIds: true });
    const pod = spec.template.spec;
    expect(spec.backoffLimit).toBe(0);
    expect(pod).toMatchObject({ restartPolicy: "Never", automountServiceAccountToken: false, securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } } });
    expect(pod).not.toHaveProperty("serviceAccountName");
    const c = pod.containers[0];
    expect(c?.image).toBe("amazon/aws-cli:2.37.5");
    expect(c?.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(c?.env).toEqual(
      expect.arrayContaining([
        { name: "S3_ENDPOINT", value: TEST_LEDGER.endpoint },
        { name: "S3_BUCKET", value: "ai-platform-usage" },
        { name: "LEDGER_PREFIX", value: "ledger/" },
        { name: "RETENTION_DAYS", value: "396" },
        { name: "RULE_ID", value: "ai-platform-usage-ledger" },
        { name: "AWS_ACCESS_KEY_ID", valueFrom: { secretKeyRef: { name: "usage-ledger-bucket-admin", key: "AWS_ACCESS_KEY_ID" } } },
      ]),
    );
    // Its pods are not the gateway's: the gateway's NetworkPolicy, PDB and Service do not select them.
    expect(spec.template.metadata.labels["app.kubernetes.io/name"]).toBe("usage-ledger-bucket");
    // With IRSA on AWS outside us-east-1: its own service account, and the bucket made in the region.
    const irsa = buildLedgerBucketJobSpec({ ledger: { ...TEST_LEDGER, endpoint: "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1", bucketJob: { kind: "irsa", annotations: {} } }, fixedUserIds: false });
    expect(irsa.template.spec).toMatchObject({ serviceAccountName: "usage-ledger-bucket" });
    expect(irsa.template.spec.containers[0]?.env).toContainEqual({ name: "S3_LOCATION_CONSTRAINT", value: "eu-west-1" });
    expect(irsa.template.spec.containers[0]?.env.map((e) => e.name)).not.toContain("AWS_ACCESS_KEY_ID");
  });

  test("the NetworkPolicy opens egress to the store, by namespace and pods or by CIDR, on its port", () => {
    const base = { servingNamespace: "app-serving", upstreams: { namespaces: [], addresses: [], external: [] }, extraEgress: [], monitoringNamespace: "monitoring", dns: { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" }, ports: [53] }, redis: undefined };
    const egress = (ledger?: UsageLedgerSetting) => buildNetworkPolicySpec({ ...base, ...(ledger ? { usageLedger: ledger } : {}) }).egress;
    expect(egress(TEST_LEDGER)).toContainEqual({
      to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "app-shaide" } }, podSelector: { matchLabels: { app: "minio" } } }],
      ports: [{ protocol: "TCP", port: 9000 }],
    });
    expect(egress({ ...TEST_LEDGER, egress: { cidr: "52.218.0.0/17", port: 443 } })).toContainEqual({ to: [{ ipBlock: { cidr: "52.218.0.0/17" } }], ports: [{ protocol: "TCP", port: 443 }] });
    expect(egress().length).toBe(egress(TEST_LEDGER).length - 1);
  });
});
