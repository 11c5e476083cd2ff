// The `monitoring:` key table, validated by one zod schema with one error message naming every offending key.
import { configProblems } from "../platform/config-testing";
import { parseMonitoringConfig, REQUIRED_BY_COMPONENT } from "./config";
import {
  alertingOverrides,
  fullConfig,
  gcsOverrides,
  rawNamespace,
  TEST_ALERTMANAGER_CREDENTIALS,
  TEST_ALERTMANAGER_SECRET_VALUES,
  TEST_GOOGLE_SERVICE_ACCOUNT,
  TEST_ROLE_ARN,
  workloadIdentityOverrides,
} from "./testing";

const LABEL_DOMAIN = "ai-platform.io";
/** `null` = no platform:labelDomain in the stack. */
const parse = (overrides: Record<string, string | undefined> = {}, labelDomain: string | null = LABEL_DOMAIN) =>
  parseMonitoringConfig(rawNamespace(fullConfig(overrides)), labelDomain ?? undefined);
const problems = configProblems;
/** The object store settings of a parsed configuration. */
const store = (overrides: Record<string, string | undefined> = {}) => parse(overrides).logstore?.store;

describe("monitoring config", () => {
  test("the full dev-like configuration parses into per-component settings", () => {
    const c = parse();
    expect([...c.components]).toEqual(["logstore", "viewer", "collector", "dashboards", "metrics"]);
    expect(c.logstore).toMatchObject({
      version: "14.1.0",
      storageClass: "hostpath",
      store: { type: "s3", endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", bucket: "logstore-chunks", region: "us-east-1", auth: { kind: "keys", user: "logstore" } },
      bucketJobImage: "amazon/aws-cli:2.37.5",
    });
    expect(c.logstore?.chartPath).toMatch(/\/charts\/logstore-14\.1\.0\.tgz$/);
    expect(c.viewer?.chartPath).toMatch(/\/charts\/viewer-12\.3\.2\.tgz$/);
    expect(c.collector).toMatchObject({ version: "1.8.1", labelDomain: LABEL_DOMAIN });
    expect(c.metrics?.chartPath).toMatch(/\/charts\/metrics-29\.21\.0\.tgz$/);
    expect(c.metrics?.storageClass).toBe("premium-rwo");
    expect(c.dashboards).toEqual({ logs: true, metrics: true });
    expect(c.nodeSelector).toEqual({});
    expect(c.cloudProvider).toBe("on-prem");
  });

  test("the secret values never enter the parsed configuration", () => {
    const text = JSON.stringify(parse(), (_k, v: unknown) => (v instanceof Set ? [...v] : v));
    expect(text).not.toContain("s3-pass");
    expect(text).not.toContain("viewer-pass");
  });

  const alwaysRequired = ["components", "cloudProvider", "s3Password"];
  test.each(alwaysRequired)("missing %s fails naming it", (key) => {
    const lines = problems(() => parse({ [`monitoring:${key}`]: undefined }));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monitoring:${key}: required\\b`)));
  });

  const perComponent = Object.entries(REQUIRED_BY_COMPONENT).flatMap(([component, keys]) => keys.map((k) => [component, k] as const));
  test.each(perComponent)("%s enabled and %s missing fails naming it", (component, key) => {
    const lines = problems(() => parse({ [`monitoring:${key}`]: undefined }));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^monitoring:${key}: required because ${component} is enabled`)));
  });

  test("keys of components that are not enabled may be absent", () => {
    const c = parse({
      "monitoring:components": JSON.stringify(["viewer"]),
      "monitoring:logstoreVersion": undefined,
      "monitoring:collectorVersion": undefined,
      "monitoring:s3Endpoint": undefined,
      "monitoring:s3BucketLogstore": undefined,
      "monitoring:s3User": undefined,
    }, null);
    expect(c.logstore).toBeUndefined();
    expect(c.collector).toBeUndefined();
    expect(c.viewer).toBeDefined();
  });

  test("optional keys (storage classes, ChartPath overrides, s3ClientImage, nodeSelector) may be absent", () => {
    const c = parse({ "monitoring:logstoreStorageClass": undefined, "monitoring:metricsStorageClass": undefined });
    expect(c.logstore?.storageClass).toBeUndefined();
    expect(c.metrics?.storageClass).toBeUndefined();
  });

  test("one message names every offending key: missing, wrong type, unknown component, unknown key", () => {
    let message = "";
    try {
      parse({
        "monitoring:components": JSON.stringify(["logstore", "grafana"]),
        "monitoring:s3User": undefined,
        "monitoring:logstoreVersion": "latest",
        "monitoring:nodeSelector": "gpu",
        "monitoring:cloudProvider": undefined,
        "monitoring:s3Endpoint": "objectstore:9000",
        "monitoring:retention": "14d",
      });
    } catch (e) {
      message = (e as Error).message;
    }
    for (const key of ["components [1]", "s3User", "logstoreVersion", "nodeSelector", "cloudProvider", "s3Endpoint", "retention"]) {
      expect(message).toContain(`monitoring:${key}`);
    }
    expect(message).toContain("unknown key");
    expect(message.split("\n")[0]).toMatch(/^Invalid stack configuration \(\d+ problems\):$/);
  });

  test("components must be a list", () => {
    expect(problems(() => parse({ "monitoring:components": "logstore" }))[0]).toMatch(/^monitoring:components: .*expected array/);
  });

  test("a component listed twice is rejected", () => {
    expect(problems(() => parse({ "monitoring:components": JSON.stringify(["viewer", "viewer"]) }))).toContain(
      "monitoring:components: must not list a component twice",
    );
  });

  test("dashboards needs viewer listed too", () => {
    const lines = problems(() => parse({ "monitoring:components": JSON.stringify(["logstore", "dashboards"]) }));
    expect(lines).toContain("monitoring:components: dashboards needs viewer listed too (the viewer loads them)");
  });

  test("metrics dashboards only with metrics", () => {
    expect(parse({ "monitoring:components": JSON.stringify(["viewer", "dashboards"]) }).dashboards).toEqual({ logs: true, metrics: false });
  });

  test("the collector needs the shared platform:labelDomain, validated as a DNS subdomain", () => {
    expect(problems(() => parse({}, null))).toContain("platform:labelDomain: required (shared label domain of platform pods)");
    expect(problems(() => parse({}, "Not_A_Domain")).some((l) => l.startsWith("platform:labelDomain:"))).toBe(true);
    // Reported together with the monitoring: problems, in one message.
    const lines = problems(() => parse({ "monitoring:collectorVersion": undefined }, null));
    expect(lines).toEqual(expect.arrayContaining(["monitoring:collectorVersion: required because collector is enabled", "platform:labelDomain: required (shared label domain of platform pods)"]));
  });

  test("wrong types and formats are rejected", () => {
    const bad: Record<string, string> = {
      "monitoring:s3BucketLogstore": "Logstore_Chunks",
      "monitoring:logstoreStorageClass": "Fast SSD",
      "monitoring:viewerEmbedding": JSON.stringify({ subPath: "grafana/" }),
      "monitoring:nodeSelector": JSON.stringify({ gpu: 1 }),
    };
    const lines = problems(() => parse(bad));
    for (const k of Object.keys(bad)) expect(lines.some((l) => l.startsWith(k))).toBe(true);
  });

  test("nodeSelector and the viewer embedding block are read", () => {
    const c = parse({
      "monitoring:nodeSelector": JSON.stringify({ "kubernetes.io/os": "linux" }),
      "monitoring:viewerEmbedding": JSON.stringify({ subPath: "/monitoring/viewer" }),
    });
    expect(c.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
    expect(c.viewer?.embedding).toEqual({ subPath: "/monitoring/viewer" });
  });

  test("collector tolerations: every NoSchedule taint by default; a list replaces it; bad ones fail naming the key", () => {
    expect(parse().collector?.tolerations).toEqual([{ operator: "Exists", effect: "NoSchedule" }]);
    const custom = [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }, { key: "dedicated", operator: "Equal", value: "inference", effect: "NoExecute", tolerationSeconds: 60 }];
    expect(parse({ "monitoring:collectorTolerations": JSON.stringify(custom) }).collector?.tolerations).toEqual(custom);
    for (const bad of [[{ key: "gpu", operator: "Exists", value: "x" }], [{ effect: "NoSchedule" }], [{ operator: "Exists", effect: "Sometimes" }], [{ key: "a", operator: "Exists", tolerationSeconds: 5 }]]) {
      const lines = problems(() => parse({ "monitoring:collectorTolerations": JSON.stringify(bad) }));
      expect({ bad, named: lines.some((l) => l.startsWith("monitoring:collectorTolerations")) }).toEqual({ bad, named: true });
    }
  });

  test("the label domain labels every monitoring pod when set, even without the collector", () => {
    expect(parse({ "monitoring:components": JSON.stringify(["logstore"]) }).labelDomain).toBe(LABEL_DOMAIN);
    expect(parse({ "monitoring:components": JSON.stringify(["logstore"]) }, null).labelDomain).toBeUndefined();
  });

  test("an empty secret counts as missing", () => {
    expect(problems(() => parse({ "monitoring:viewerAdminPassword": "" }))).toContain(
      "monitoring:viewerAdminPassword: required because viewer is enabled (pulumi config set --secret monitoring:viewerAdminPassword …)",
    );
  });
});

describe("monitoring config: the object store on a real cloud", () => {
  test("s3Region: us-east-1 by default; a region name otherwise; anything else fails naming the key", () => {
    expect(store()).toMatchObject({ region: "us-east-1" });
    expect(store({ "monitoring:s3Region": "eu-central-1" })).toMatchObject({ region: "eu-central-1" });
    expect(problems(() => parse({ "monitoring:s3Region": "EU Central" }))).toEqual([
      "monitoring:s3Region: must be a region name such as us-east-1 (lowercase letters, digits and '-')",
    ]);
  });

  test("s3Region must be the region of an AWS s3Endpoint: AWS refuses requests signed for another", () => {
    const aws = { "monitoring:s3Endpoint": "https://s3.eu-west-1.amazonaws.com" };
    expect(problems(() => parse(aws))).toEqual(["monitoring:s3Region: must be eu-west-1, the region of s3Endpoint: AWS refuses requests signed for another region"]);
    expect(store({ ...aws, "monitoring:s3Region": "eu-west-1" })).toMatchObject({ region: "eu-west-1" });
    // The global endpoint is us-east-1's; other stores' names say nothing about a region.
    expect(store({ "monitoring:s3Endpoint": "https://s3.amazonaws.com" })).toMatchObject({ region: "us-east-1" });
    expect(store({ "monitoring:s3Endpoint": "https://minio.eu-west-1.example.com", "monitoring:s3Region": "us-east-1" })).toMatchObject({ region: "us-east-1" });
  });

  test("s3ClientImage: the default is a pinned release; an override needs a tag other than latest, or a digest", () => {
    expect(parse().logstore?.bucketJobImage).toBe("amazon/aws-cli:2.37.5");
    const digest = `sha256:${"a1".repeat(32)}`;
    for (const image of ["registry.internal:5000/mirror/aws-cli:2.22.0", `amazon/aws-cli@${digest}`, `registry.internal/mirror/aws-cli:2.22.0@${digest}`, `amazon/aws-cli:latest@${digest}`]) {
      expect(parse({ "monitoring:s3ClientImage": image }).logstore?.bucketJobImage).toBe(image);
    }
    for (const image of ["amazon/aws-cli", "amazon/aws-cli@sha256:123", "Amazon/AWS-CLI:2", "amazon/aws-cli:2 22", "https://registry.internal/aws-cli:2"]) {
      const lines = problems(() => parse({ "monitoring:s3ClientImage": image }));
      expect({ image, lines }).toEqual({ image, lines: [expect.stringMatching(/^monitoring:s3ClientImage: must be an image reference with a tag or a digest/)] });
    }
    expect(problems(() => parse({ "monitoring:s3ClientImage": "amazon/aws-cli:latest" }))).toEqual(["monitoring:s3ClientImage: must be pinned: a tag other than latest, or a digest"]);
  });

  test("workload identity (IRSA): the annotations instead of s3User/s3Password, which are then neither required nor rendered", () => {
    const irsa = { "eks.amazonaws.com/role-arn": TEST_ROLE_ARN };
    expect(store(workloadIdentityOverrides())).toEqual({
      type: "s3",
      endpoint: "https://s3.eu-west-1.amazonaws.com",
      bucket: "logstore-chunks",
      region: "eu-west-1",
      auth: { kind: "workloadIdentity", serviceAccountAnnotations: { logstore: irsa, bucketJob: irsa } },
    });
  });

  test("workload identity refuses what cannot work, naming the key", () => {
    const wi = workloadIdentityOverrides();
    const annotations = (a: Record<string, string>) => ({ ...wi, "monitoring:s3ServiceAccountAnnotations": JSON.stringify(a) });
    expect(problems(() => parse({ ...wi, "monitoring:s3User": "logstore", "monitoring:s3Password": "x" }))).toEqual([
      "monitoring:s3User: not used with s3ServiceAccountAnnotations (the pods take credentials from their service account): remove one of the two",
      "monitoring:s3Password: not used with s3ServiceAccountAnnotations (the pods take credentials from their service account): remove one of the two",
    ]);
    const gke = problems(() => parse(annotations({ "iam.gke.io/gcp-service-account": "logstore@project.iam.gserviceaccount.com" })));
    expect(gke).toEqual([
      "monitoring:s3ServiceAccountAnnotations: iam.gke.io/gcp-service-account: GKE Workload Identity gives Google tokens, which cannot sign S3 requests; set objectStore gcs (Cloud Storage's own API), or HMAC keys as s3User/s3Password",
    ]);
    expect(problems(() => parse(annotations({ "eks.amazonaws.com/sts-regional-endpoints": "true" })))).toEqual([
      "monitoring:s3ServiceAccountAnnotations: must hold eks.amazonaws.com/role-arn (the IAM role to assume, EKS IRSA)",
    ]);
    expect(problems(() => parse(annotations({ "eks.amazonaws.com/role-arn": "logstore-role" })))).toEqual([
      "monitoring:s3ServiceAccountAnnotations: eks.amazonaws.com/role-arn must be an IAM role ARN such as arn:aws:iam::123456789012:role/ai-platform-logstore",
    ]);
    expect(problems(() => parse({ ...wi, "monitoring:s3Endpoint": "http://objectstore.app-shaide.svc.cluster.local:9000", "monitoring:s3Region": undefined }))).toEqual([
      expect.stringMatching(/^monitoring:s3Endpoint: must be an AWS S3 endpoint such as https:\/\/s3\.eu-west-1\.amazonaws\.com with s3ServiceAccountAnnotations/),
    ]);
    // Other annotations of the same webhook may go along.
    const extra = parse(annotations({ "eks.amazonaws.com/role-arn": TEST_ROLE_ARN, "eks.amazonaws.com/sts-regional-endpoints": "true" }));
    const both = { "eks.amazonaws.com/role-arn": TEST_ROLE_ARN, "eks.amazonaws.com/sts-regional-endpoints": "true" };
    expect(extra.logstore?.store).toMatchObject({ auth: { kind: "workloadIdentity", serviceAccountAnnotations: { logstore: both, bucketJob: both } } });
  });

  test("the bucket Job's own annotations (least privilege): its role alone may create the bucket", () => {
    const jobRole = { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ai-platform-logstore-bucket" };
    const own = { ...workloadIdentityOverrides(), "monitoring:s3BucketJobServiceAccountAnnotations": JSON.stringify(jobRole) };
    expect(store(own)).toMatchObject({ auth: { serviceAccountAnnotations: { logstore: { "eks.amazonaws.com/role-arn": TEST_ROLE_ARN }, bucketJob: jobRole } } });
    // Validated like the log store's; with static keys the Job uses the keys, so it is refused.
    expect(problems(() => parse({ ...own, "monitoring:s3BucketJobServiceAccountAnnotations": JSON.stringify({ "eks.amazonaws.com/role-arn": "bucket-role" }) }))).toEqual([
      "monitoring:s3BucketJobServiceAccountAnnotations: eks.amazonaws.com/role-arn must be an IAM role ARN such as arn:aws:iam::123456789012:role/ai-platform-logstore",
    ]);
    expect(problems(() => parse({ "monitoring:s3BucketJobServiceAccountAnnotations": JSON.stringify(jobRole) }))).toEqual([
      "monitoring:s3BucketJobServiceAccountAnnotations: needs s3ServiceAccountAnnotations: with s3User/s3Password the bucket Job uses those keys",
    ]);
  });

  test("without workload identity the spec's rule holds: s3User and s3Password are required", () => {
    expect(problems(() => parse({ "monitoring:s3User": undefined, "monitoring:s3Password": undefined }))).toEqual([
      "monitoring:s3Password: required (pulumi config set --secret monitoring:s3Password …)",
      "monitoring:s3User: required because logstore is enabled",
    ]);
  });
});

describe("monitoring config: Google Cloud Storage (objectStore gcs)", () => {
  const gke = (account: string) => ({ "iam.gke.io/gcp-service-account": account });

  test("the bucket, its location and the Google service account; no endpoint, no key; the curl image by default", () => {
    const c = parse(gcsOverrides());
    expect(c.logstore?.store).toEqual({
      type: "gcs",
      bucket: "logstore-chunks",
      location: "europe-west1",
      serviceAccountAnnotations: { logstore: gke(TEST_GOOGLE_SERVICE_ACCOUNT), bucketJob: gke(TEST_GOOGLE_SERVICE_ACCOUNT) },
    });
    expect(c.logstore?.bucketJobImage).toBe("curlimages/curl:8.16.0");
    expect(parse({ ...gcsOverrides(), "monitoring:s3ClientImage": "registry.internal/mirror/curl:8.16.0" }).logstore?.bucketJobImage).toBe("registry.internal/mirror/curl:8.16.0");
  });

  test("without annotations (IAM grants the Kubernetes service accounts themselves), and with the bucket Job's own account", () => {
    expect(store({ ...gcsOverrides(), "monitoring:s3ServiceAccountAnnotations": undefined })).toMatchObject({ serviceAccountAnnotations: { logstore: {}, bucketJob: {} } });
    const job = gke("logstore-bucket@ai-platform-prod.iam.gserviceaccount.com");
    expect(store({ ...gcsOverrides(), "monitoring:s3BucketJobServiceAccountAnnotations": JSON.stringify(job) })).toMatchObject({
      serviceAccountAnnotations: { logstore: gke(TEST_GOOGLE_SERVICE_ACCOUNT), bucketJob: job },
    });
  });

  test("what cannot work on Cloud Storage fails, naming the key", () => {
    const notUsed = "not used with objectStore gcs (Loki and the bucket Job call Cloud Storage's own API as their GKE Workload Identity): remove it; Cloud Storage with HMAC keys is objectStore s3";
    expect(problems(() => parse({ ...gcsOverrides(), "monitoring:s3Endpoint": "https://storage.googleapis.com", "monitoring:s3User": "GOOG1E", "monitoring:s3Password": "x" }))).toEqual([
      `monitoring:s3Endpoint: ${notUsed}`,
      `monitoring:s3User: ${notUsed}`,
      `monitoring:s3Password: ${notUsed}`,
    ]);
    const location = "monitoring:s3Region: with objectStore gcs: the bucket's Cloud Storage location, such as europe-west1, eu or us (Google writes us-east1, not us-east-1)";
    for (const region of [undefined, "us-east-1", "auto"]) expect({ region, lines: problems(() => parse({ ...gcsOverrides(), "monitoring:s3Region": region })) }).toEqual({ region, lines: [location] });
    for (const region of ["eu", "us", "nam4", "us-east1", "northamerica-northeast1"]) expect(store({ ...gcsOverrides(), "monitoring:s3Region": region })).toMatchObject({ location: region });
    const annotations = (a: Record<string, string>) => ({ ...gcsOverrides(), "monitoring:s3ServiceAccountAnnotations": JSON.stringify(a) });
    expect(problems(() => parse(annotations({ "eks.amazonaws.com/role-arn": TEST_ROLE_ARN })))).toEqual([
      "monitoring:s3ServiceAccountAnnotations: eks.amazonaws.com/role-arn: an AWS role, which Cloud Storage does not take; objectStore gcs uses iam.gke.io/gcp-service-account",
    ]);
    expect(problems(() => parse(annotations({ "example.com/team": "obs" })))).toEqual([
      "monitoring:s3ServiceAccountAnnotations: must hold iam.gke.io/gcp-service-account (the Google service account to act as), or be left out when IAM grants the Kubernetes service account itself",
    ]);
    for (const account of ["logstore", "123456789-compute@developer.gserviceaccount.com", "Logstore@p.iam.gserviceaccount.com"]) {
      expect(problems(() => parse(annotations(gke(account))))).toEqual([
        "monitoring:s3ServiceAccountAnnotations: iam.gke.io/gcp-service-account must be a Google service account such as logstore@my-project.iam.gserviceaccount.com",
      ]);
    }
    expect(problems(() => parse({ "monitoring:objectStore": "azure" }))).toEqual([expect.stringMatching(/^monitoring:objectStore: .*"s3"\|"gcs"/)]);
  });
});

describe("monitoring config: Alertmanagers", () => {
  const alerting = alertingOverrides();
  const targets = JSON.parse(alerting["monitoring:alertmanagers"] as string) as Record<string, unknown>[];
  const withTargets = (t: unknown[], creds?: unknown) => ({
    "monitoring:alertmanagers": JSON.stringify(t),
    "monitoring:alertmanagerCredentials": creds === undefined ? undefined : JSON.stringify(creds),
  });
  const am = (extra: Record<string, unknown> = {}) => ({ name: "a", urls: ["https://am.example.com"], ...extra });

  test("the targets are read with the parts each declares; no credential enters the parsed configuration", () => {
    const c = parse(alerting);
    expect(c.metrics?.alertmanagers.map((t) => ({ ...t, credentials: [...t.credentials] }))).toEqual([
      { name: "oncall", urls: targets[0]?.urls, basicAuthUser: "prometheus", tls: { serverName: "alertmanager.example.com" }, credentials: ["password", "ca"] },
      { name: "sre", urls: ["https://alerts.example.net"], credentials: ["bearerToken", "cert", "key"] },
      { name: "in-cluster", urls: ["http://alertmanager-operated.observability.svc:9093"], credentials: [] },
    ]);
    const text = JSON.stringify(c, (_k, v: unknown) => (v instanceof Set ? [...v] : v));
    for (const secret of TEST_ALERTMANAGER_SECRET_VALUES) expect(text).not.toContain(secret);
    expect(parse().metrics?.alertmanagers).toEqual([]);
  });

  test("combinations that cannot work fail naming the key, and no message quotes a credential", () => {
    const pem = TEST_ALERTMANAGER_CREDENTIALS.sre;
    const cases: [unknown[], unknown, string][] = [
      [[am({ basicAuthUser: "prometheus" })], undefined, "monitoring:alertmanagerCredentials: required: a use credentials (pulumi config set --secret monitoring:alertmanagerCredentials …)"],
      [[am({ basicAuthUser: "prometheus" })], { a: {} }, "monitoring:alertmanagerCredentials [a.password]: required: target a sets basicAuthUser"],
      [[am({ basicAuthUser: "prometheus", bearerToken: true })], undefined, "monitoring:alertmanagers [0]: sets basicAuthUser and bearerToken"],
      [[am()], { a: { password: "pw-Secret1" } }, "monitoring:alertmanagerCredentials [a.password]: not used: target a would need basicAuthUser in monitoring:alertmanagers"],
      [[am({ tls: { clientCertificate: true } })], { a: { cert: pem.cert } }, "monitoring:alertmanagerCredentials [a.key]: required: target a sets tls.clientCertificate: true"],
      [[am({ tls: { ca: true } })], { a: { ca: "/etc/ssl/ca-Secret3.pem" } }, "monitoring:alertmanagerCredentials [a.ca]: must be the PEM text of a CA certificate"],
      [[am({ bearerToken: true })], { a: { bearerToken: "tok-Secret2" }, b: { bearerToken: "tok-Secret2" } }, "monitoring:alertmanagerCredentials [b]: no target of monitoring:alertmanagers is named b"],
      [[am({ bearerToken: true }), am({ name: "c", urls: ["https://c.example.com"], bearerToken: true })], { a: { bearerToken: "tok-Secret2" } }, "monitoring:alertmanagerCredentials [c]: required: target c uses bearerToken"],
      [[am({ urls: ["http://am.example.com:9093"], bearerToken: true })], { a: { bearerToken: "tok-Secret2" } }, "monitoring:alertmanagers [0.urls]: must be https"],
      [[am({ tls: { ca: true, insecureSkipVerify: true } })], { a: { ca: TEST_ALERTMANAGER_CREDENTIALS.oncall.ca } }, "monitoring:alertmanagers [0.tls]: sets ca and insecureSkipVerify"],
      [[am({ urls: ["https://am-0.example.com/am", "https://am-1.example.com/other"] })], undefined, "monitoring:alertmanagers [0.urls]: must share one scheme and one path"],
      [[am({ urls: ["https://prometheus:pw-Secret1@am.example.com"] })], undefined, "monitoring:alertmanagers [0.urls.0]: must carry no user, password, query or fragment"],
      [[am(), am()], undefined, "monitoring:alertmanagers: must not name two targets alike"],
      [[am({ tls: { insecureSkipVerify: "yes" } })], undefined, "monitoring:alertmanagers [0.tls.insecureSkipVerify]: "],
      [[am({ bearerToken: true })], "oncall: hunter2-Secret9", 'monitoring:alertmanagerCredentials: must be a JSON object of targets: {"<target name>": {password?, bearerToken?, ca?, cert?, key?}}'],
    ];
    for (const [t, creds, expected] of cases) {
      const lines = problems(() => parse({ ...withTargets(t), "monitoring:alertmanagerCredentials": creds === undefined ? undefined : typeof creds === "string" ? creds : JSON.stringify(creds) }));
      expect({ expected, lines }).toEqual({ expected, lines: expect.arrayContaining([expect.stringContaining(expected)]) });
      expect(lines.join("\n")).not.toMatch(/Secret\d|TESTCERT|hunter2/);
    }
  });

  test("a secret that could not be read (the offline render) is taken as present, its content unchecked", () => {
    const c = parse({ ...alerting, "monitoring:alertmanagerCredentials": "[secret]" });
    expect(c.metrics?.alertmanagers.map((t) => t.name)).toEqual(["oncall", "sre", "in-cluster"]);
    expect(parse({ "monitoring:alertmanagerCredentials": "[secret]" }).metrics?.alertmanagers).toEqual([]);
    // And, with workload identity, the stand-in for an s3Password the stack does not use is no conflict.
    expect(store({ ...workloadIdentityOverrides(), "monitoring:s3Password": "[secret]" })).toMatchObject({ auth: { kind: "workloadIdentity" } });
    expect(store({ ...gcsOverrides(), "monitoring:s3Password": "[secret]" })).toMatchObject({ type: "gcs" });
  });

  test("Alertmanagers need the metrics server; credentials need targets", () => {
    expect(problems(() => parse({ ...alerting, "monitoring:components": JSON.stringify(["logstore", "viewer"]) }))).toContain(
      "monitoring:alertmanagers: the metrics server sends the alerts: list metrics in monitoring:components",
    );
    expect(problems(() => parse({ "monitoring:alertmanagerCredentials": alerting["monitoring:alertmanagerCredentials"] }))).toEqual([
      "monitoring:alertmanagerCredentials: set, but monitoring:alertmanagers lists no target",
    ]);
  });
});
