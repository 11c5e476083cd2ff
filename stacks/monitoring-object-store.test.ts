// The log store's object store on a real cloud, as the real Loki chart renders it with the program's values: the
// region (`monitoring:s3Region`), workload identity instead of static keys (`monitoring:s3ServiceAccountAnnotations`,
// EKS IRSA, and the bucket Job's own `s3BucketJobServiceAccountAnnotations`), Google Cloud Storage as GKE Workload
// Identity (`monitoring:objectStore: gcs`) and the bucket Job's image (`monitoring:s3ClientImage`). The bucket Job is
// declared by the program itself, so it is checked as the program declares it.
import { parse } from "yaml";
import { BUCKET_JOB_NAME, NAMESPACE } from "../infra/monitoring/constants";
import { BUCKET_SCRIPT_CONFIGMAP, LOGSTORE_CREDENTIALS_SECRET } from "../infra/monitoring/logstore";
import { fullConfig, gcsOverrides, TEST_GOOGLE_SERVICE_ACCOUNT, TEST_ROLE_ARN, TEST_S3_PASSWORD, workloadIdentityOverrides } from "../infra/monitoring/testing";
import { describeWithCharts, type Manifest } from "../infra/platform/helm";
import { validateKubernetesObject } from "../infra/platform/k8s-validate";
import { allContainers, type Container, type PodOwner, podOwners } from "../infra/platform/manifests";
import { revealSecrets } from "../infra/platform/mocks";
import { ignoredValues, MONITORING_CHARTS, type RenderedMonitoring, renderMonitoring } from "./monitoring-charts";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const LOGSTORE_ONLY = { "monitoring:components": JSON.stringify(["logstore"]) };
const IRSA = { "eks.amazonaws.com/role-arn": TEST_ROLE_ARN };
const GKE = { "iam.gke.io/gcp-service-account": TEST_GOOGLE_SERVICE_ACCOUNT };
/** No rendered or declared object, and no declared input (secrets revealed), holds a key, a key reference or the credentials Secret. */
function keyMaterial(r: RenderedMonitoring): string[] {
  // The bucket script is left out: its comments name the variables it reads.
  const inputs = r.resources.filter((x) => x.name !== BUCKET_SCRIPT_CONFIGMAP).map((x) => [`${x.type}::${x.name}`, revealSecrets(x.inputs)] as const);
  const objects = [...logstore(r), ...r.direct.filter((o) => o.metadata.name !== BUCKET_SCRIPT_CONFIGMAP)].map((o) => [`${o.kind}/${o.metadata.name}`, o] as const);
  return [...inputs, ...objects]
    .filter(([, v]) => /AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY|access_key_id|secret_access_key|logstore-s3-credentials/.test(JSON.stringify(v)) || JSON.stringify(v).includes(TEST_S3_PASSWORD))
    .map(([name]) => name);
}

function find(objects: readonly Manifest[], kind: string, name: string): Obj {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name}; rendered: ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return o as Obj;
}
function workload(objects: readonly Manifest[], name: string): { pod: PodOwner; main: Container } {
  const pod = podOwners(objects).find((x) => x.name === name);
  if (!pod) throw new Error(`no workload ${name}`);
  return { pod, main: allContainers(pod)[0] as Container };
}
const logstore = (r: RenderedMonitoring) => r.charts.logstore?.objects ?? [];
const lokiConfig = (r: RenderedMonitoring) => parse(find(logstore(r), "ConfigMap", "logstore").data["config.yaml"]) as Obj;
const job = (r: RenderedMonitoring) => workload(r.direct, BUCKET_JOB_NAME);
const env = (c: Container) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

describeWithCharts("the log store's object store, rendered by the real chart", MONITORING_CHARTS.filter((c) => c.component === "logstore"), ({ helm, archive }) => {
  let keys: RenderedMonitoring;
  let irsa: RenderedMonitoring;
  beforeAll(async () => {
    const digest = `sha256:${"0123456789abcdef".repeat(4)}`;
    keys = await renderMonitoring(
      helm,
      fullConfig({ ...LOGSTORE_ONLY, "monitoring:s3Region": "eu-central-1", "monitoring:s3ClientImage": `registry.internal/mirror/aws-cli:2.22.0@${digest}` }),
      archive,
    );
    irsa = await renderMonitoring(helm, fullConfig({ ...LOGSTORE_ONLY, ...workloadIdentityOverrides() }), archive);
  }, 120_000);

  test("s3Region: Loki and the bucket Job sign for it; only on AWS is the bucket created there (LocationConstraint)", () => {
    expect(lokiConfig(keys).common.storage.s3).toMatchObject({ region: "eu-central-1", endpoint: "objectstore.app-shaide.svc.cluster.local:9000", insecure: true });
    expect(env(job(keys).main).AWS_DEFAULT_REGION).toBe("eu-central-1");
    expect(env(job(keys).main).S3_LOCATION_CONSTRAINT).toBeUndefined();
    expect(env(job(irsa).main)).toMatchObject({ AWS_DEFAULT_REGION: "eu-west-1", S3_LOCATION_CONSTRAINT: "eu-west-1" });
  });

  test("s3ClientImage: the bucket Job runs the image as given, tag and digest", () => {
    expect(job(keys).main.image).toBe(`registry.internal/mirror/aws-cli:2.22.0@sha256:${"0123456789abcdef".repeat(4)}`);
    expect(job(irsa).main.image).toBe("amazon/aws-cli:2.37.5");
  });

  test("static keys: Loki and the Job read them from the Secret; the config holds only references", () => {
    const loki = workload(logstore(keys), "logstore").main;
    expect(loki.envFrom).toEqual([{ secretRef: { name: LOGSTORE_CREDENTIALS_SECRET } }]);
    expect(lokiConfig(keys).common.storage.s3).toMatchObject({ access_key_id: "${AWS_ACCESS_KEY_ID}", secret_access_key: "${AWS_SECRET_ACCESS_KEY}" });
    expect(env(job(keys).main).AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: LOGSTORE_CREDENTIALS_SECRET, key: "AWS_ACCESS_KEY_ID" } });
    expect(job(keys).pod.spec.serviceAccountName).toBeUndefined();
  });

  test("workload identity: Loki's service account carries the role and the pod runs as it; no key, reference or Secret anywhere", () => {
    const sa = find(logstore(irsa), "ServiceAccount", "logstore");
    expect(sa.metadata.annotations).toEqual(IRSA);
    expect(sa.automountServiceAccountToken).toBe(false);
    const { pod, main } = workload(logstore(irsa), "logstore");
    expect(pod.spec.serviceAccountName).toBe("logstore");
    expect(main.envFrom).toBeUndefined();
    const s3 = lokiConfig(irsa).common.storage.s3;
    expect(s3).toEqual({ bucketnames: "logstore-chunks", endpoint: "s3.eu-west-1.amazonaws.com:443", insecure: false, region: "eu-west-1", s3forcepathstyle: true });
    expect(keyMaterial(irsa)).toEqual([]);
    expect(irsa.resources.length).toBeGreaterThan(5);
  });

  test("workload identity: the bucket Job runs as its own annotated service account, without an API token, signing for the region", () => {
    const sa = find(irsa.direct, "ServiceAccount", BUCKET_JOB_NAME);
    expect(sa.metadata.annotations).toEqual(IRSA);
    expect(sa.automountServiceAccountToken).toBe(false);
    const { pod, main } = job(irsa);
    expect(pod.spec.serviceAccountName).toBe(BUCKET_JOB_NAME);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(env(main)).toMatchObject({ AWS_DEFAULT_REGION: "eu-west-1", S3_ENDPOINT: "https://s3.eu-west-1.amazonaws.com" });
    expect(Object.keys(env(main))).not.toContain("AWS_ACCESS_KEY_ID");
    // Without workload identity the Job keeps the namespace's default account and no extra object is declared.
    expect(keys.direct.filter((o) => o.kind === "ServiceAccount")).toEqual([]);
  });

  test("a new role re-runs the bucket Job and rolls the log store (the webhook injects the role only into new pods)", async () => {
    const other = await renderMonitoring(
      helm,
      fullConfig({ ...LOGSTORE_ONLY, ...workloadIdentityOverrides(), "monitoring:s3ServiceAccountAnnotations": JSON.stringify({ "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/other" }) }),
      archive,
    );
    const checksum = (r: RenderedMonitoring, objects: readonly Manifest[], name: string) => workload(objects, name).pod.metadata.annotations?.["checksum/s3-credentials"];
    expect(checksum(irsa, logstore(irsa), "logstore")).toMatch(/^[0-9a-f]{16}$/);
    expect(checksum(other, logstore(other), "logstore")).not.toBe(checksum(irsa, logstore(irsa), "logstore"));
    expect(checksum(other, other.direct, BUCKET_JOB_NAME)).toBe(checksum(other, logstore(other), "logstore"));
    expect(checksum(irsa, irsa.direct, BUCKET_JOB_NAME)).toBe(checksum(irsa, logstore(irsa), "logstore"));
  }, 120_000);

  test("the bucket Job's own annotations: its service account carries them, Loki's keeps the log store's; each change rolls only its own pods", async () => {
    const jobRole = { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ai-platform-logstore-bucket" };
    const own = await renderMonitoring(helm, fullConfig({ ...LOGSTORE_ONLY, ...workloadIdentityOverrides(), "monitoring:s3BucketJobServiceAccountAnnotations": JSON.stringify(jobRole) }), archive);
    expect(find(own.direct, "ServiceAccount", BUCKET_JOB_NAME).metadata.annotations).toEqual(jobRole);
    expect(find(logstore(own), "ServiceAccount", "logstore").metadata.annotations).toEqual(IRSA);
    const checksum = (objects: readonly Manifest[], name: string) => workload(objects, name).pod.metadata.annotations?.["checksum/s3-credentials"];
    expect(checksum(logstore(own), "logstore")).toBe(checksum(logstore(irsa), "logstore"));
    expect(checksum(own.direct, BUCKET_JOB_NAME)).not.toBe(checksum(irsa.direct, BUCKET_JOB_NAME));
  }, 120_000);

  describe("objectStore gcs: Loki's own Cloud Storage backend and a curl bucket Job, as GKE Workload Identity", () => {
    let gcs: RenderedMonitoring;
    beforeAll(async () => {
      gcs = await renderMonitoring(helm, fullConfig({ ...LOGSTORE_ONLY, ...gcsOverrides() }), archive);
    }, 120_000);

    test("Loki keeps chunks, index, ruler data and delete requests in the bucket through its gcs client; nothing of S3 is left", () => {
      const config = lokiConfig(gcs);
      expect(config.common.storage).toEqual({ gcs: { bucket_name: "logstore-chunks", chunk_buffer_size: 0, request_timeout: "0s", enable_http2: true } });
      expect(config.schema_config.configs.map((c: Obj) => c.object_store)).toEqual(["gcs"]);
      expect(config.compactor.delete_request_store).toBe("gcs");
      expect(config.ruler.storage).toMatchObject({ type: "gcs", gcs: { bucket_name: "logstore-chunks" } });
      expect(JSON.stringify(config)).not.toMatch(/\bs3\b|amazonaws|objectstore\.app-shaide/);
    });

    test("Loki runs as its service account, annotated with the Google service account, with no key, no token and no Secret", () => {
      expect(find(logstore(gcs), "ServiceAccount", "logstore")).toMatchObject({ metadata: { annotations: GKE }, automountServiceAccountToken: false });
      const { pod, main } = workload(logstore(gcs), "logstore");
      expect(pod.spec.serviceAccountName).toBe("logstore");
      expect(main.envFrom).toBeUndefined();
      expect(keyMaterial(gcs)).toEqual([]);
      expect(gcs.direct.filter((o) => o.kind === "Secret")).toEqual([]);
    });

    test("the bucket Job: the curl image, the Cloud Storage script, the bucket and its location, as its own annotated service account", () => {
      expect(find(gcs.direct, "ServiceAccount", BUCKET_JOB_NAME)).toMatchObject({ metadata: { annotations: GKE }, automountServiceAccountToken: false });
      const { pod, main } = job(gcs);
      expect(main.image).toBe("curlimages/curl:8.16.0");
      expect(main.command).toEqual(["/bin/sh", "/scripts/create-bucket-gcs.sh"]);
      expect(Object.keys(find(gcs.direct, "ConfigMap", BUCKET_SCRIPT_CONFIGMAP).data)).toEqual(["create-bucket-gcs.sh"]);
      expect(env(main)).toEqual({ GCS_BUCKET: "logstore-chunks", GCS_LOCATION: "europe-west1", ATTEMPTS: "5", RETRY_DELAY_SECONDS: "10", HOME: "/tmp" });
      expect(pod.spec).toMatchObject({ serviceAccountName: BUCKET_JOB_NAME, automountServiceAccountToken: false });
    });

    test("every object declared or rendered validates against the Kubernetes OpenAPI schema", () => {
      const objects = [...gcs.direct, ...logstore(gcs)];
      expect(objects.length).toBeGreaterThan(8);
      for (const o of objects) expect(() => validateKubernetesObject(o)).not.toThrow();
    });

    test("without annotations (IAM grants the Kubernetes service accounts themselves) neither service account is annotated", async () => {
      const direct = await renderMonitoring(helm, fullConfig({ ...LOGSTORE_ONLY, ...gcsOverrides(), "monitoring:s3ServiceAccountAnnotations": undefined }), archive);
      expect(find(direct.direct, "ServiceAccount", BUCKET_JOB_NAME).metadata.annotations).toBeUndefined();
      expect(find(logstore(direct), "ServiceAccount", "logstore").metadata.annotations).toBeUndefined();
      expect(job(direct).pod.spec.serviceAccountName).toBe(BUCKET_JOB_NAME);
    }, 120_000);

    test("every storage value the program sets for gcs is read by the chart (removing it changes the render)", () => {
      const chart = gcs.charts.logstore;
      if (!chart) throw new Error("no logstore chart");
      const paths = [["loki", "storage"], ["loki", "schemaConfig"], ["loki", "compactor"], ["serviceAccount"]];
      expect(paths.flatMap((under) => ignoredValues(helm, archive("logstore"), chart, NAMESPACE, under))).toEqual([]);
    }, 300_000);
  });
});
