// The log store component: S3 credentials Secret (or, with workload identity, the bucket Job's service account), bucket
// Job, NetworkPolicy and the Loki chart on S3 or Cloud Storage, which waits for the Job to complete (Pulumi's Kubernetes
// provider awaits Job completion before dependents are created).
// The Job is not retained: it is replaced (deleted, then created under the same name) when it failed on an earlier
// `up` (pulumi.com/replaceUnready) or when its inputs or the credentials change (a digest on its pod template), so
// fixing the credentials and running `pulumi up` again runs it again. The same digest rolls the log store's pod.
import { createHash } from "crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { RETAIN, retainRenderedOptions } from "../platform/retain";
import { standardLabels } from "../platform/labels";
import { digestAnnotation, secretDigest } from "../platform/secret-digest";
import { serviceUrl } from "../platform/cluster-config";
import { BUCKET_SCRIPTS, bucketScript, type BucketTarget, buildBucketJobSpec } from "./bucket-job";
import type { ServiceAccountAnnotations } from "./config";
import { BUCKET_JOB_NAME, SERVICES } from "./constants";
import { buildLogstoreValues, type LogstoreObjectStore, S3_ENV } from "./logstore-values";
import { REPLACE_UNREADY_ANNOTATION } from "../platform/await-annotations";

export interface LogstoreArgs {
  readonly namespace: pulumi.Input<string>;
  readonly chartPath: string;
  readonly version: string;
  readonly storageClass?: string;
  readonly bucket: string;
  /**
   * The object store and how the pods authenticate there: static keys (the password a secret Output from
   * `config.requireSecret`, only ever written into a Kubernetes Secret), or workload identity, the annotations of the
   * service accounts of the log store and the bucket Job.
   */
  readonly store:
    | {
        readonly type: "s3";
        readonly endpoint: string;
        /** `s3Region`. */
        readonly region: string;
        readonly auth:
          | { readonly kind: "keys"; readonly user: string; readonly password: pulumi.Input<string> }
          | { readonly kind: "workloadIdentity"; readonly serviceAccountAnnotations: ServiceAccountAnnotations };
      }
    | { readonly type: "gcs"; readonly location: string; readonly serviceAccountAnnotations: ServiceAccountAnnotations };
  readonly bucketJobImage: string;
  /** Labels of the log store and bucket Job pods (the platform label). */
  readonly podLabels?: Readonly<Record<string, string>>;
  /** `cluster:fixedUserIds`. */
  readonly fixedUserIds: boolean;
  /** The cluster's DNS domain (`cluster:domain`), for the `url` output. */
  readonly clusterDomain: string;
  /** The stack's key for secret digests on pod templates (platform/secret-digest.ts). */
  readonly digestKey: pulumi.Input<string>;
}

/** pulumi-kubernetes: replace a Job that failed to become ready on an earlier update instead of waiting on it again. */
export const CREDENTIALS_DIGEST = digestAnnotation("s3-credentials");

export const LOGSTORE_CREDENTIALS_SECRET = "logstore-s3-credentials";
/** The bucket Job's service account with workload identity (with static keys it runs as the namespace's default one). */
export const BUCKET_JOB_SERVICE_ACCOUNT = BUCKET_JOB_NAME;
export const BUCKET_SCRIPT_CONFIGMAP = "logstore-create-bucket-script";

/** Pod labels the Loki chart puts on the monolithic pod (release name `logstore`). */
export const LOGSTORE_POD_SELECTOR = { "app.kubernetes.io/instance": SERVICES.logstore.name } as const;

export class Logstore extends pulumi.ComponentResource {
  /** The S3 keys (static keys), or the bucket Job's service account (workload identity). */
  readonly credentials: k8s.core.v1.Secret | k8s.core.v1.ServiceAccount;
  readonly bucketJob: k8s.batch.v1.Job;
  readonly networkPolicy: k8s.networking.v1.NetworkPolicy;
  readonly chart: k8s.helm.v4.Chart;
  /** `{logstore_url}`: in-cluster address of the `logstore` Service. */
  readonly url: pulumi.Output<string>;
  /** Digest of the S3 credentials on the Job's and the log store's pod templates. */
  readonly credentialsDigest: pulumi.Output<string>;

  constructor(name: string, args: LogstoreArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:monitoring:Logstore", name, {}, opts);
    const labels = standardLabels(SERVICES.logstore.name, "logstore");

    const store = args.store;
    const keys = store.type === "s3" && store.auth.kind === "keys" ? store.auth : undefined;
    const annotations = store.type === "gcs" ? store.serviceAccountAnnotations : store.auth.kind === "workloadIdentity" ? store.auth.serviceAccountAnnotations : undefined;
    this.credentials = keys
      ? new k8s.core.v1.Secret(
          LOGSTORE_CREDENTIALS_SECRET,
          {
            metadata: { name: LOGSTORE_CREDENTIALS_SECRET, namespace: args.namespace, labels },
            type: "Opaque",
            stringData: { [S3_ENV.accessKeyId]: keys.user, [S3_ENV.secretAccessKey]: pulumi.secret(keys.password) },
          },
          { parent: this, ...RETAIN },
        )
      : new k8s.core.v1.ServiceAccount(
          BUCKET_JOB_SERVICE_ACCOUNT,
          {
            metadata: {
              name: BUCKET_JOB_SERVICE_ACCOUNT,
              namespace: args.namespace,
              labels: standardLabels(BUCKET_JOB_NAME, "logstore"),
              ...(Object.keys(annotations?.bucketJob ?? {}).length > 0 ? { annotations: { ...annotations?.bucketJob } } : {}),
            },
            automountServiceAccountToken: false,
          },
          { parent: this, ...RETAIN },
        );

    const scriptKey = BUCKET_SCRIPTS[store.type].key;
    const scriptText = bucketScript(store.type);
    const script = new k8s.core.v1.ConfigMap(
      BUCKET_SCRIPT_CONFIGMAP,
      {
        metadata: { name: BUCKET_SCRIPT_CONFIGMAP, namespace: args.namespace, labels },
        data: { [scriptKey]: scriptText },
      },
      { parent: this, ...RETAIN },
    );

    const scriptDigest = createHash("sha256").update(scriptText).digest("hex").slice(0, 16);
    // A new role or account reaches pods only when they are created: a change replaces the Job or rolls the log store,
    // each on its own annotations.
    const identityDigest = (a: Readonly<Record<string, string>>) => secretDigest(args.digestKey, "s3-credentials", JSON.stringify(Object.entries(a).sort()));
    this.credentialsDigest = keys ? secretDigest(args.digestKey, "s3-credentials", keys.user, keys.password) : identityDigest(annotations?.logstore ?? {});
    const jobDigest = keys ? this.credentialsDigest : identityDigest(annotations?.bucketJob ?? {});
    const target: BucketTarget =
      store.type === "gcs"
        ? { store: "gcs", location: store.location, serviceAccountName: BUCKET_JOB_SERVICE_ACCOUNT }
        : { store: "s3", s3Endpoint: store.endpoint, region: store.region, credentials: keys ? { secretName: LOGSTORE_CREDENTIALS_SECRET } : { serviceAccountName: BUCKET_JOB_SERVICE_ACCOUNT } };
    this.bucketJob = new k8s.batch.v1.Job(
      BUCKET_JOB_NAME,
      {
        metadata: { name: BUCKET_JOB_NAME, namespace: args.namespace, labels: standardLabels(BUCKET_JOB_NAME, "logstore"), annotations: { ...REPLACE_UNREADY_ANNOTATION } },
        spec: buildBucketJobSpec({
          image: args.bucketJobImage,
          bucket: args.bucket,
          target,
          scriptConfigMapName: BUCKET_SCRIPT_CONFIGMAP,
          podLabels: args.podLabels,
          fixedUserIds: args.fixedUserIds,
          // The script is part of the Job's inputs: a changed script runs the Job again too.
          podAnnotations: { [CREDENTIALS_DIGEST]: jobDigest, [digestAnnotation("script")]: scriptDigest },
        }),
      },
      // Same name on replacement, so the old Job goes first.
      { parent: this, deleteBeforeReplace: true, dependsOn: [this.credentials, script] },
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

    const lokiStore: LogstoreObjectStore =
      store.type === "gcs" ? { type: "gcs" } : { type: "s3", endpoint: store.endpoint, region: store.region, ...(keys ? { secretName: LOGSTORE_CREDENTIALS_SECRET } : {}) };
    this.chart = new k8s.helm.v4.Chart(
      SERVICES.logstore.name,
      {
        name: SERVICES.logstore.name,
        chart: args.chartPath,
        namespace: args.namespace,
        values: buildLogstoreValues({
          store: lokiStore,
          bucket: args.bucket,
          ...(annotations && Object.keys(annotations.logstore).length > 0 ? { serviceAccountAnnotations: annotations.logstore } : {}),
          storageClass: args.storageClass,
          podAnnotations: { [CREDENTIALS_DIGEST]: this.credentialsDigest },
          podLabels: args.podLabels,
          fixedUserIds: args.fixedUserIds,
        }),
      },
      // Spec "States and transitions": the log store release is deployed only after the bucket Job completed.
      retainRenderedOptions({ parent: this, dependsOn: [this.bucketJob, this.credentials] }),
    );

    this.url = pulumi.output(args.namespace).apply((ns) => serviceUrl(SERVICES.logstore.name, ns, SERVICES.logstore.port, args.clusterDomain));
    this.registerOutputs({ url: this.url, bucketJob: this.bucketJob.metadata.name, credentialsDigest: this.credentialsDigest });
  }
}
