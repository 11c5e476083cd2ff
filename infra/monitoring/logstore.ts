// The log store component: S3 credentials Secret, bucket Job, NetworkPolicy and the Loki chart, which waits for
// the Job to complete (Pulumi's Kubernetes provider awaits Job completion before dependents are created).
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { RETAIN, retainChartOptions } from "../platform/retain";
import { standardLabels } from "../platform/labels";
import { bucketScript, BUCKET_SCRIPT_KEY, buildBucketJobSpec } from "./bucket-job";
import { BUCKET_JOB_NAME, SERVICES } from "./constants";
import { buildLogstoreValues, S3_ENV } from "./logstore-values";

export interface LogstoreArgs {
  readonly namespace: pulumi.Input<string>;
  readonly chartPath: string;
  readonly version: string;
  readonly storageClass?: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  readonly s3User: string;
  /** Secret Output from `config.requireSecret`; only ever written into a Kubernetes Secret. */
  readonly s3Password: pulumi.Input<string>;
  readonly s3ClientImage: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
}

export const LOGSTORE_CREDENTIALS_SECRET = "logstore-s3-credentials";
export const BUCKET_SCRIPT_CONFIGMAP = "logstore-create-bucket-script";

/** Pod labels the Loki chart puts on the monolithic pod (release name `logstore`). */
export const LOGSTORE_POD_SELECTOR = { "app.kubernetes.io/instance": SERVICES.logstore.name } as const;

export class Logstore extends pulumi.ComponentResource {
  readonly credentials: k8s.core.v1.Secret;
  readonly bucketJob: k8s.batch.v1.Job;
  readonly networkPolicy: k8s.networking.v1.NetworkPolicy;
  readonly chart: k8s.helm.v4.Chart;
  /** `{logstore_url}`: in-cluster address of the `logstore` Service. */
  readonly url: pulumi.Output<string>;

  constructor(name: string, args: LogstoreArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Logstore", name, {}, opts);
    const labels = standardLabels(SERVICES.logstore.name, "logstore");

    this.credentials = new k8s.core.v1.Secret(
      LOGSTORE_CREDENTIALS_SECRET,
      {
        metadata: { name: LOGSTORE_CREDENTIALS_SECRET, namespace: args.namespace, labels },
        type: "Opaque",
        stringData: {
          [S3_ENV.accessKeyId]: args.s3User,
          [S3_ENV.secretAccessKey]: pulumi.secret(args.s3Password),
        },
      },
      { parent: this, ...RETAIN },
    );

    const script = new k8s.core.v1.ConfigMap(
      BUCKET_SCRIPT_CONFIGMAP,
      {
        metadata: { name: BUCKET_SCRIPT_CONFIGMAP, namespace: args.namespace, labels },
        data: { [BUCKET_SCRIPT_KEY]: bucketScript() },
      },
      { parent: this, ...RETAIN },
    );

    this.bucketJob = new k8s.batch.v1.Job(
      BUCKET_JOB_NAME,
      {
        metadata: { name: BUCKET_JOB_NAME, namespace: args.namespace, labels: standardLabels(BUCKET_JOB_NAME, "logstore") },
        spec: buildBucketJobSpec({
          image: args.s3ClientImage,
          s3Endpoint: args.s3Endpoint,
          bucket: args.bucket,
          credentialsSecretName: LOGSTORE_CREDENTIALS_SECRET,
          scriptConfigMapName: BUCKET_SCRIPT_CONFIGMAP,
          nodeSelector: args.nodeSelector,
        }),
      },
      { parent: this, ...RETAIN, dependsOn: [this.credentials, script] },
    );

    // The log store has no authentication: only pods of this namespace may reach its HTTP port.
    this.networkPolicy = new k8s.networking.v1.NetworkPolicy(
      SERVICES.logstore.name,
      {
        metadata: { name: SERVICES.logstore.name, namespace: args.namespace, labels },
        spec: {
          podSelector: { matchLabels: { ...LOGSTORE_POD_SELECTOR } },
          policyTypes: ["Ingress"],
          ingress: [{ from: [{ podSelector: {} }], ports: [{ protocol: "TCP", port: SERVICES.logstore.port }] }],
        },
      },
      { parent: this, ...RETAIN },
    );

    this.chart = new k8s.helm.v4.Chart(
      SERVICES.logstore.name,
      {
        name: SERVICES.logstore.name,
        chart: args.chartPath,
        namespace: args.namespace,
        values: buildLogstoreValues({
          s3Endpoint: args.s3Endpoint,
          bucket: args.bucket,
          credentialsSecretName: LOGSTORE_CREDENTIALS_SECRET,
          storageClass: args.storageClass,
          nodeSelector: args.nodeSelector,
        }),
      },
      // Spec "States and transitions": the log store release is deployed only after the bucket Job completed.
      retainChartOptions({ parent: this, dependsOn: [this.bucketJob, this.credentials] }),
    );

    this.url = pulumi.interpolate`http://${SERVICES.logstore.name}.${args.namespace}.svc.cluster.local:${SERVICES.logstore.port}`;
    this.registerOutputs({ url: this.url, bucketJob: this.bucketJob.metadata.name });
  }
}
