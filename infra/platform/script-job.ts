// The spec of a Job that runs one shell script from a ConfigMap, once, hardened: the bucket Jobs of the log store and
// of the usage ledger. The script makes every attempt itself (ATTEMPTS, RETRY_DELAY_SECONDS apart), so one failed pod
// fails the Job ("backoff limit exceeded") and the number of attempts is exactly ATTEMPTS. The clients it runs (AWS CLI,
// curl) need no privilege, only a writable home: it runs with /tmp as home on a read-only root filesystem.
import type * as pulumi from "@pulumi/pulumi";
import { containerSecurityContext, podSecurityContext, type PodIdentity } from "./security";

export type EnvVar = { name: string; value: string } | { name: string; valueFrom: { secretKeyRef: { name: string; key: string } } };

export interface ScriptJobArgs {
  /** The container's name. */
  readonly containerName: string;
  readonly image: string;
  /** The script's key in the ConfigMap; the container runs `/bin/sh /scripts/<key>`. */
  readonly scriptKey: string;
  /** The ConfigMap mounted at /scripts. */
  readonly scriptConfigMapName: string;
  /** The script's own settings; ATTEMPTS, RETRY_DELAY_SECONDS and HOME follow them. */
  readonly env: readonly EnvVar[];
  /** How many times the script tries before it fails. */
  readonly attempts: number;
  /** The container's requests and limits. */
  readonly resources: {
    readonly requests: { readonly cpu: string; readonly memory: string };
    readonly limits: { readonly cpu: string; readonly memory: string };
  };
  /** The image's user, or undefined where the cluster assigns ids (`cluster:fixedUserIds: false`). */
  readonly identity?: PodIdentity;
  /** A service account for workload identity; none by default. */
  readonly serviceAccountName?: string;
  /** The pod's labels (the Job's own and any extra). */
  readonly labels: Readonly<Record<string, string>>;
  /** Pod template annotations: digests of what the Job reads, so a change replaces it and it runs again. */
  readonly annotations?: Readonly<Record<string, pulumi.Input<string>>>;
}

/** The Job's spec, without metadata (the Pulumi resource adds it). */
export function buildScriptJobSpec(args: ScriptJobArgs) {
  return {
    backoffLimit: 0,
    template: {
      metadata: {
        labels: { ...args.labels },
        ...(args.annotations ? { annotations: { ...args.annotations } } : {}),
      },
      spec: {
        restartPolicy: "Never",
        // No Kubernetes API token: EKS's webhook mounts a token of its own for AWS STS, and the GKE metadata server
        // knows the pod's service account without one.
        automountServiceAccountToken: false,
        ...(args.serviceAccountName ? { serviceAccountName: args.serviceAccountName } : {}),
        securityContext: podSecurityContext(args.identity),
        containers: [
          {
            name: args.containerName,
            image: args.image,
            command: ["/bin/sh", `/scripts/${args.scriptKey}`],
            env: [
              ...args.env,
              { name: "ATTEMPTS", value: String(args.attempts) },
              { name: "RETRY_DELAY_SECONDS", value: "10" },
              { name: "HOME", value: "/tmp" },
            ],
            resources: args.resources,
            securityContext: containerSecurityContext(args.identity),
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
