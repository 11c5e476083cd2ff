// The CustomResourceDefinitions the platform's objects need, as part of the program: the InferencePool CRDs (from
// the Gateway API Inference Extension release that matches the pinned inferencepool chart), when routes or Gateways
// are declared the Gateway API CRDs, and when a Certificate is, cert-manager's. Per set, `cluster:crds` says who owns
// them (cert-manager's are always assumed: the stack never installs cert-manager itself, docs/development.md):
//   install  the stack applies the release manifest and keeps the CRDs on destroy (deleting a CRD deletes every
//            object of its kind, in every namespace);
//   assume   the cluster already has them (e.g. its gateway controller installed them): each CRD is read at
//            preview, and a missing one fails it, naming the CRD and the key.
// Either way, what uses a CRD depends on the resources returned here, so nothing is created before its kind exists.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CrdMode } from "./cluster-config";
import { retainRenderedOptions } from "./retain";

export const CRD_SETS = ["inferencePool", "gatewayApi", "certManager", "keda"] as const;
export type CrdSet = (typeof CRD_SETS)[number];

/** The CRD each set must provide for what the platform declares. */
export const REQUIRED_CRDS: Readonly<Record<CrdSet, readonly string[]>> = {
  inferencePool: ["inferencepools.inference.networking.k8s.io"],
  gatewayApi: ["httproutes.gateway.networking.k8s.io"],
  certManager: ["certificates.cert-manager.io"],
  keda: ["scaledobjects.keda.sh"],
};

/** The Gateway and GatewayClass CRDs, needed beside HTTPRoutes when the platform declares or reads a Gateway (and reads its class). */
export const GATEWAY_CRDS = ["gateways.gateway.networking.k8s.io", "gatewayclasses.gateway.networking.k8s.io"] as const;

/** The release manifest of a set the stack may install (CRDs only: GAIE builds it with `kustomize build config/crd`). */
export function defaultCrdSource(set: "inferencePool" | "gatewayApi", version: string): string {
  return set === "inferencePool"
    ? `https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/${version}/manifests.yaml`
    : `https://github.com/kubernetes-sigs/gateway-api/releases/download/${version}/standard-install.yaml`;
}

export interface CrdSetRequest {
  readonly mode: CrdMode;
  /** Manifest URL or file (install mode only). */
  readonly source?: string;
  /** CRD names that must exist (assume mode reads each). */
  readonly names: readonly string[];
}

export type ClusterCrdsArgs = Partial<Record<CrdSet, CrdSetRequest>>;

/** The logical name of an assumed CRD's read: it is what a failing preview prints, so it names the key too. */
export function assumedCrdName(set: CrdSet, crd: string): string {
  // KEDA's CRDs follow `cluster:keda` (there is no cluster:crds.keda).
  return set === "keda" ? `cluster:keda:${crd}` : `cluster:crds.${set}:${crd}`;
}

export class ClusterCrds extends pulumi.ComponentResource {
  /** What a user of each set waits for. */
  readonly ready: Partial<Record<CrdSet, pulumi.Resource[]>> = {};

  constructor(name: string, args: ClusterCrdsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ai-platform:platform:ClusterCrds", name, {}, opts);
    for (const set of CRD_SETS) {
      const req = args[set];
      if (!req) continue;
      if (req.mode === "install" && req.source === undefined) throw new Error(`${set === "keda" ? "cluster:keda" : `cluster:crds.${set}`}: install needs a manifest source`);
      this.ready[set] =
        req.mode === "install"
          ? [new k8s.yaml.v2.ConfigFile(`${set}-crds`, { file: req.source as string }, retainRenderedOptions({ parent: this }))]
          : req.names.map((crd) => k8s.apiextensions.v1.CustomResourceDefinition.get(assumedCrdName(set, crd), crd, { parent: this }));
    }
    this.registerOutputs({});
  }
}
