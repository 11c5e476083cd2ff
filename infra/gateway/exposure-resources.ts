// The objects `gateway:exposure` declares, children of the gateway component: the routes (and the platform's own
// Gateway), or the Ingress; the Certificate when an issuer is named. What they need from the cluster is read first,
// so a preview fails naming the key: the existing Gateway (its listeners are checked), the GatewayClass or the
// IngressClass (by their controller), the issuer.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { checkClusterValue, whenClusterChecksPass } from "../platform/cluster-checks";
import type { ExposureSettings } from "./exposure-config";
import { apiRouteSpec, certificateSpec, EXPOSURE_NAMES, ingressAnnotations, ingressSpec, ownGatewaySpec, redirectRouteSpec } from "./exposure";
import { type GatewayClassUse, gatewayClassProblems, ingressClassProblems } from "./class-check";
import { attachmentProblems, parseExistingGateway } from "./listener-check";

export interface ExposureArgs {
  readonly exposure: ExposureSettings;
  readonly namespace: pulumi.Input<string>;
  /** The gateway namespace's name and labels as the cluster holds them, for an existing Gateway's `allowedRoutes`. */
  readonly namespaceName: string;
  readonly namespaceLabels: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  /** The gateway's `gateway:env`, whose limits the ingress-nginx annotations follow. */
  readonly gatewayEnv: Readonly<Record<string, string>>;
  /** The gateway's Service: what the routes and the Ingress send to. */
  readonly service: pulumi.Resource;
  /** The Gateway API CRDs (installed or proved present), and cert-manager's. */
  readonly gatewayApiReady: readonly pulumi.Resource[];
  readonly certManagerReady: readonly pulumi.Resource[];
}

const GATEWAY_API_VERSION = "gateway.networking.k8s.io/v1";

/** Logical names of the reads: what a failing preview prints, so they name the key. */
export function existingGatewayReadName(namespace: string, name: string): string {
  return `gateway:exposure.existingGateway:${namespace}/${name}`;
}
export function issuerReadName(kind: string, name: string): string {
  return `gateway:exposure.tls.issuer:${kind}/${name}`;
}
/** The class read for `key` (`ownGateway.className`, `ingress.className`, or `existingGateway` for its Gateway's). */
export function classReadName(key: string, kind: "GatewayClass" | "IngressClass", name: string): string {
  return `gateway:exposure.${key}:${kind}/${name}`;
}

/** Declares the exposure: the reads and their checks now, what routes traffic once the checks have passed. */
export function declareExposure(parent: pulumi.Resource, a: ExposureArgs): void {
  const e = a.exposure;
  const child = { parent };
  const meta = (name: string, annotations?: Record<string, string>) => ({
    name,
    namespace: a.namespace,
    labels: { ...a.labels },
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
  });
  const routeDeps = [a.service, ...a.gatewayApiReady];

  const certificate = e.tls?.issuer ? declareCertificate(parent, a, meta) : undefined;
  const tlsDeps = certificate ? [certificate] : [];

  // What routes traffic to the API is declared only once what was read has passed its checks: with
  // `pulumi up --skip-preview` (or the Automation API) a route that waited for the read alone would be created while
  // its check was pending (on a plain-HTTP listener, serving API keys without TLS) and stay after it failed.
  if (e.ingress) {
    const ingressClass = checkedIngressClass(parent, e.ingress);
    whenClusterChecksPass(() => {
      new k8s.networking.v1.Ingress(
        EXPOSURE_NAMES.ingress,
        { metadata: meta(EXPOSURE_NAMES.ingress, ingressAnnotations(e, a.gatewayEnv)), spec: ingressSpec(e) },
        { ...child, dependsOn: [a.service, ingressClass, ...tlsDeps] },
      );
    });
    return;
  }

  const ownGateway = e.ownGateway;
  const reads = ownGateway
    ? [checkedGatewayClass(parent, a, { className: ownGateway.className, key: "ownGateway.className", usedBy: `Gateway ${EXPOSURE_NAMES.ownGateway}`, requestTimeout: e.requestTimeout })]
    : e.existingGateway
      ? [checkedExistingGateway(parent, a)]
      : [];
  whenClusterChecksPass(() => {
    const parents = ownGateway
      ? [
          new k8s.apiextensions.CustomResource(
            EXPOSURE_NAMES.ownGateway,
            { apiVersion: GATEWAY_API_VERSION, kind: "Gateway", metadata: meta(EXPOSURE_NAMES.ownGateway, e.annotations), spec: ownGatewaySpec(e) },
            { ...child, dependsOn: [...a.gatewayApiReady, ...reads, ...tlsDeps] },
          ),
        ]
      : reads;
    new k8s.apiextensions.CustomResource(
      EXPOSURE_NAMES.route,
      { apiVersion: GATEWAY_API_VERSION, kind: "HTTPRoute", metadata: meta(EXPOSURE_NAMES.route), spec: apiRouteSpec(e) },
      { ...child, dependsOn: [...routeDeps, ...parents] },
    );
    if (apiRouteSpec(e).parentRefs.length > 0 && redirectRouteSpec(e).parentRefs.length > 0) {
      new k8s.apiextensions.CustomResource(
        EXPOSURE_NAMES.redirect,
        { apiVersion: GATEWAY_API_VERSION, kind: "HTTPRoute", metadata: meta(EXPOSURE_NAMES.redirect), spec: redirectRouteSpec(e) },
        { ...child, dependsOn: [...a.gatewayApiReady, ...parents] },
      );
    }
  });
}

/** The issuer is read first (a typo would leave the Certificate pending forever), then the Certificate declared. */
function declareCertificate(parent: pulumi.Resource, a: ExposureArgs, meta: (name: string) => Record<string, unknown>): pulumi.Resource {
  const issuer = a.exposure.tls?.issuer;
  if (!issuer) throw new Error("declareCertificate needs an issuer");
  const read = readObject<unknown>(issuerReadName(issuer.kind, issuer.name), "cert-manager.io/v1", issuer.kind, issuer.kind === "Issuer" ? `${a.namespaceName}/${issuer.name}` : issuer.name, {
    parent,
    dependsOn: [...a.certManagerReady],
  });
  return new k8s.apiextensions.CustomResource(
    EXPOSURE_NAMES.certificate,
    { apiVersion: "cert-manager.io/v1", kind: "Certificate", metadata: meta(EXPOSURE_NAMES.certificate), spec: certificateSpec(a.exposure, a.labels) },
    { parent, dependsOn: [...a.certManagerReady, read] },
  );
}

/**
 * Reads the Gateway the routes attach to; its listeners are checked once it has answered (platform/cluster-checks),
 * and, with a request timeout, its GatewayClass is read and checked too (the class name is known only then).
 */
function checkedExistingGateway(parent: pulumi.Resource, a: ExposureArgs): pulumi.Resource {
  const g = a.exposure.existingGateway;
  if (!g) throw new Error("checkedExistingGateway needs existingGateway");
  const namespace = g.namespace ?? a.namespaceName;
  const name = `${namespace}/${g.name}`;
  const read = readObject<unknown>(existingGatewayReadName(namespace, g.name), GATEWAY_API_VERSION, "Gateway", name, { parent, dependsOn: [...a.gatewayApiReady] });
  checkClusterValue(read.spec, (spec) => {
    // No spec: nothing was read (an offline render); a Gateway the cluster holds always has one.
    if (spec === undefined) return [];
    const parsed = parseExistingGateway(spec, name);
    if ("problem" in parsed) return [parsed.problem];
    const { gatewayClassName } = parsed.gateway;
    if (a.exposure.requestTimeout !== undefined) {
      checkedGatewayClass(parent, a, { className: gatewayClassName, key: "existingGateway", usedBy: `Gateway ${name}`, requestTimeout: a.exposure.requestTimeout }, [read]);
    }
    return attachmentProblems(parsed.gateway, {
      gateway: name,
      gatewayNamespace: namespace,
      routeNamespace: a.namespaceName,
      routeNamespaceLabels: a.namespaceLabels,
      httpsListener: g.httpsListener,
      httpListener: g.httpListener,
      hostnames: a.exposure.hostnames,
    });
  });
  return read;
}

/** Reads a GatewayClass (a missing one fails the preview, naming the key) and checks it once it has answered. */
function checkedGatewayClass(parent: pulumi.Resource, a: ExposureArgs, use: GatewayClassUse, after: pulumi.Resource[] = []): pulumi.Resource {
  const read = readObject<unknown>(classReadName(use.key, "GatewayClass", use.className), GATEWAY_API_VERSION, "GatewayClass", use.className, {
    parent,
    dependsOn: [...a.gatewayApiReady, ...after],
  });
  checkClusterValue(read.spec, (spec) => (spec === undefined ? [] : gatewayClassProblems(spec, use)));
  return read;
}

/** Reads the IngressClass (a missing one fails the preview, naming the key) and checks its controller against the declared one. */
function checkedIngressClass(parent: pulumi.Resource, ingress: NonNullable<ExposureSettings["ingress"]>): pulumi.Resource {
  const read = k8s.networking.v1.IngressClass.get(classReadName("ingress.className", "IngressClass", ingress.className), ingress.className, { parent });
  checkClusterValue(read.spec as pulumi.Output<unknown>, (spec) => (spec === undefined ? [] : ingressClassProblems(spec, ingress)));
  return read;
}

/**
 * A read of an existing object with its `spec`. `CustomResource.get` registers only `apiVersion` and `kind` as
 * outputs; the constructor with an `id` reads too, and exposes every key it is given.
 */
function readObject<Spec>(name: string, apiVersion: string, kind: string, id: string, opts: pulumi.CustomResourceOptions) {
  const read = new k8s.apiextensions.CustomResource(name, { apiVersion, kind, metadata: undefined, spec: undefined }, { ...opts, id });
  return Object.assign(read, { spec: (read as unknown as { spec: pulumi.Output<Spec | undefined> }).spec });
}
