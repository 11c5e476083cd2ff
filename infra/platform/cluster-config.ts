// The `cluster:` configuration namespace: which cluster a stack changes and what that cluster is like. Every stack
// of the platform reads it (monitoring, serving and gateway may each live in a stack of their own), so it is one
// schema here, validated in one pass like the parts' namespaces.
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { REPO_ROOT } from "./charts";
import { ConfigError, doc, issuesToLines, readNamespace, schemaInput, SECRET_PRESENT } from "./config";
import { cidr, dnsLabel, dnsSubdomain, labelMap, port } from "./schema-rules";

export const CLUSTER_NAMESPACE = "cluster";

/** Keys that may hold credentials: only ever read with `getSecret`. */
export const CLUSTER_SECRET_KEYS = ["kubeconfig"] as const;
export const QUALIFIED_CLUSTER_SECRET_KEYS: readonly string[] = CLUSTER_SECRET_KEYS.map((k) => `${CLUSTER_NAMESPACE}:${k}`);

const STRUCTURED_KEYS = new Set(["dns", "crds", "crdSources", "forceConflicts", "fixedUserIds"]);

/** `install`: the stack installs KEDA (chart and CRDs); `assume`: the cluster runs it, checked at preview. */
export const KEDA_MODES = ["install", "assume"] as const;
export type KedaMode = (typeof KEDA_MODES)[number];


/**
 * Where cluster DNS answers, for the NetworkPolicies that allow DNS egress. Presets cover the common clusters:
 * `kube-dns` (CoreDNS or kube-dns pods labelled k8s-app=kube-dns in kube-system: kind, k3s, minikube, EKS, GKE,
 * AKS) and `openshift` (the openshift-dns daemonset, which listens on 5353). NodeLocal DNSCache needs the kube-dns
 * Service IP: in its iptables mode pods keep querying that address and the node-local cache (host network) answers
 * it, so neither a pod selector nor the link-local address matches; its README prescribes an ipBlock for both.
 */
export const DNS_PRESETS = ["kube-dns", "openshift"] as const;
const dnsObjectSchema = z
  .strictObject({
    /** `node-local-dns`: NodeLocal DNSCache in front of kube-dns (needs `serviceIP`). */
    preset: z.literal("node-local-dns").optional(),
    /** The kube-dns Service IP the pods query (`kubectl -n kube-system get svc kube-dns`). */
    serviceIP: z.union([z.ipv4(), z.ipv6()], { error: "must be an IP address" }).optional(),
    /** The node-local cache's link-local address. */
    localIP: z.ipv4().default("169.254.20.10"),
    /** Namespace and pod labels of the DNS pods (both or neither). */
    namespace: dnsLabel.optional(),
    podLabels: labelMap.optional(),
    /** Addresses of DNS servers outside the cluster. */
    cidrs: z.array(cidr).optional(),
    /** Ports the DNS servers listen on (after Service translation), UDP and TCP. */
    ports: z.array(port).min(1).default([53]),
  })
  .superRefine((d, ctx) => {
    if (d.preset === "node-local-dns") {
      if (d.serviceIP === undefined) ctx.addIssue({ code: "custom", path: ["serviceIP"], message: "required with node-local-dns: the kube-dns Service IP the pods query (kubectl -n kube-system get svc kube-dns)" });
      return;
    }
    if ((d.namespace === undefined) !== (d.podLabels === undefined)) ctx.addIssue({ code: "custom", message: "namespace and podLabels go together" });
    if (d.namespace === undefined && (d.cidrs?.length ?? 0) === 0) ctx.addIssue({ code: "custom", message: "name the DNS pods (namespace and podLabels) or their cidrs" });
  });

export interface DnsSettings {
  readonly namespace?: string;
  readonly podLabels?: Readonly<Record<string, string>>;
  readonly cidrs?: readonly string[];
  readonly ports: readonly number[];
}

/** `install`: this stack applies the CRDs (and keeps them on destroy); `assume`: the cluster has them, checked at preview. */
export const CRD_MODES = ["install", "assume"] as const;
export type CrdMode = (typeof CRD_MODES)[number];

/** A manifest file: an https URL, or a path (relative paths from the repository root) for a mirrored copy. */
const manifestSource = z.string().min(1).refine((s) => !/^http:\/\//.test(s), "must be an https URL or a file path (plain http is refused)");

export const clusterSchema = z
  .strictObject({
    context: z
      .string()
      .min(1)
      .optional()
      .meta(doc("The kubeconfig context this stack changes; required unless `kubeconfig` is set.", "kind-ai-platform")),
    kubeconfig: z
      .literal(SECRET_PRESENT)
      .optional()
      .meta(doc("A kubeconfig's contents or path (CI); default $KUBECONFIG or ~/.kube/config.")),
    name: dnsLabel
      .optional()
      .meta(
        doc(
          "The provider's clusterIdentifier: objects are replaced when it changes, not when the kubeconfig does ([lifecycle.md](lifecycle.md#which-cluster-a-stack-changes)). Set it in production; never change it.",
          "prod-eu-west",
        ),
      ),
    domain: dnsSubdomain.default("cluster.local").meta(doc("The cluster's DNS domain.")),
    dns: z
      .union([z.enum(DNS_PRESETS), dnsObjectSchema], {
        error: `must be one of ${DNS_PRESETS.join(", ")}, { preset: node-local-dns, serviceIP }, or { namespace, podLabels, cidrs, ports }`,
      })
      .default("kube-dns")
      .meta(
        doc(
          "Where cluster DNS answers, for the egress NetworkPolicies: `kube-dns` (kube-system: kind, k3s, EKS, GKE, AKS), `openshift`, `{preset: node-local-dns, serviceIP}` or `{namespace, podLabels, cidrs, ports}` ([troubleshooting.md](troubleshooting.md#networkpolicy-blocks-dns-or-the-model-servers)).",
          { preset: "node-local-dns", serviceIP: "10.96.0.10" },
          { cidrs: ["10.96.0.10/32"], ports: [53] },
        ),
      ),
    crds: z
      .strictObject({
        inferencePool: z.enum(CRD_MODES).default("install").meta(doc("`install` (kept on destroy) or `assume` (checked at preview).")),
        gatewayApi: z.enum(CRD_MODES).default("assume").meta(doc("For `serving:parentGateway` and `gateway:exposure`'s Gateways; usually the gateway controller's.")),
        certManager: z
          .literal("assume", { error: "must be assume: cert-manager is a cluster prerequisite the stack does not install (docs/exposure.md#cert-manager)" })
          .default("assume")
          .meta(doc("For `gateway:exposure.tls.issuer`; never installed ([exposure.md](exposure.md#cert-manager)).")),
      })
      .prefault({})
      .meta(doc("Who installs the CRDs ([lifecycle.md](lifecycle.md#prerequisites-the-program-installs-crds)).")),
    crdSources: z
      .strictObject({
        inferencePool: manifestSource.optional().meta(doc("GAIE's `manifests.yaml`.", "https://mirror.internal/gaie/v1.3.0/manifests.yaml")),
        gatewayApi: manifestSource.optional().meta(doc("Gateway API's `standard-install.yaml`.")),
        keda: manifestSource.optional().meta(doc("KEDA's `keda-<version>-crds.yaml`.")),
      })
      .prefault({})
      .meta(doc("Mirrors of the CRD manifests (air-gapped clusters): an https URL or a file path.")),
    gatewayApiVersion: z
      .string()
      .regex(/^v\d+\.\d+\.\d+$/, "must be a release tag such as v1.3.0")
      .default("v1.3.0")
      .meta(doc("Gateway API release `crds.gatewayApi: install` applies.")),
    keda: z
      .enum(KEDA_MODES)
      .default("assume")
      .meta(
        doc(
          "KEDA, which scales models ([operations.md](operations.md#enable-model-autoscaling-keda)): `install` (chart and CRDs, kept on destroy) or `assume`.",
        ),
      ),
    kedaNamespace: dnsLabel.default("keda").meta(doc("KEDA's namespace.")),
    kedaChartPath: z.string().min(1).optional().meta(doc("KEDA chart archive; default `charts/keda-<version>.tgz`.")),
    kedaImageRegistry: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9._-]+)*$/, "must be a registry host (and path) such as mirror.internal:5000/ghcr")
      .optional()
      .meta(doc("Mirror of `ghcr.io/kedacore/*`.", "mirror.internal:5000/ghcr")),
    fixedUserIds: z
      .boolean()
      .default(true)
      .meta(
        doc(
          "Pods run as their images' non-root user ids; false on OpenShift (restricted-v2 assigns ids).",
        ),
      ),
    forceConflicts: z
      .boolean()
      .default(true)
      .meta(doc("Server-side apply takes over fields other managers hold; false reports the conflict.")),
  })
  .superRefine(
    (v, ctx) => {
      if (v.context === undefined && v.kubeconfig === undefined) {
        ctx.addIssue({ code: "custom", path: ["context"], message: "required: the kube context of the cluster this stack changes (pulumi config set cluster:context <name>), or cluster:kubeconfig" });
      }
    },
    { when: () => true },
  );


export interface ClusterConfig {
  readonly context?: string;
  readonly hasKubeconfig: boolean;
  /** clusterIdentifier of the provider: `cluster:name` only (a value that changes replaces the provider). */
  readonly identifier?: string;
  /** false on clusters that assign pod user ids themselves (OpenShift's restricted-v2): pods then set none. */
  readonly fixedUserIds: boolean;
  readonly domain: string;
  readonly dns: DnsSettings;
  readonly crds: Readonly<Record<"inferencePool" | "gatewayApi", CrdMode>> & { readonly certManager: "assume" };
  readonly crdSources: { readonly inferencePool?: string; readonly gatewayApi?: string; readonly keda?: string };
  readonly keda: { readonly mode: KedaMode; readonly namespace: string; readonly chartPath?: string; readonly imageRegistry?: string };
  readonly gatewayApiVersion: string;
  readonly forceConflicts: boolean;
}

const KUBE_DNS: DnsSettings = { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" }, ports: [53] };

/** The DNS peers of a `cluster:dns` value, in the custom form. */
export function resolveDns(dns: z.infer<typeof clusterSchema>["dns"]): DnsSettings {
  if (dns === "kube-dns") return KUBE_DNS;
  if (dns === "openshift") return { namespace: "openshift-dns", podLabels: { "dns.operator.openshift.io/daemonset-dns": "default" }, ports: [5353] };
  if (dns.preset === "node-local-dns") {
    // The cache answers on the kube-dns Service IP and a link-local address on every node; kube-dns pods answer misses.
    const host = (ip: string) => `${ip}/${ip.includes(":") ? 128 : 32}`;
    return { ...KUBE_DNS, cidrs: [host(dns.serviceIP as string), host(dns.localIP)] };
  }
  return { namespace: dns.namespace, podLabels: dns.podLabels, cidrs: dns.cidrs, ports: dns.ports };
}

function resolveSource(s: string | undefined): string | undefined {
  if (s === undefined || /^https:\/\//.test(s)) return s;
  return path.resolve(REPO_ROOT, s);
}

/** Validates the raw `cluster:` namespace (strings as in PULUMI_CONFIG, without the prefix). */
export function parseClusterConfig(raw: Readonly<Record<string, string>>): ClusterConfig {
  const input = schemaInput(raw, CLUSTER_SECRET_KEYS, STRUCTURED_KEYS);
  const parsed = clusterSchema.safeParse(input);
  if (!parsed.success) throw new ConfigError(CLUSTER_NAMESPACE, issuesToLines(CLUSTER_NAMESPACE, parsed.error.issues));
  const c = parsed.data;
  return {
    context: c.context,
    hasKubeconfig: c.kubeconfig !== undefined,
    identifier: c.name,
    fixedUserIds: c.fixedUserIds,
    domain: c.domain,
    dns: resolveDns(c.dns),
    crds: c.crds,
    crdSources: { inferencePool: resolveSource(c.crdSources.inferencePool), gatewayApi: resolveSource(c.crdSources.gatewayApi), keda: resolveSource(c.crdSources.keda) },
    keda: { mode: c.keda, namespace: c.kedaNamespace, chartPath: c.kedaChartPath, imageRegistry: c.kedaImageRegistry },
    gatewayApiVersion: c.gatewayApiVersion,
    forceConflicts: c.forceConflicts,
  };
}

/** Reads and validates the stack's `cluster:` namespace. */
export function loadClusterConfig(): ClusterConfig {
  return parseClusterConfig(readNamespace(CLUSTER_NAMESPACE));
}

/** The kubeconfig as a secret Output, when the stack sets one. */
export function loadClusterSecrets(): { readonly kubeconfig?: pulumi.Output<string> } {
  return { kubeconfig: new pulumi.Config(CLUSTER_NAMESPACE).getSecret("kubeconfig") };
}

/** `http://<service>.<namespace>.svc.<domain>:<port>`: an in-cluster address under the cluster's own domain. */
export function serviceUrl(service: string, namespace: string, port: number, domain: string): string {
  return `http://${serviceHost(service, namespace, domain)}:${port}`;
}

export function serviceHost(service: string, namespace: string, domain: string): string {
  return `${service}.${namespace}.svc.${domain}`;
}
