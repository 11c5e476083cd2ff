// Pure builders of what exposes the API outside the cluster (`gateway:exposure`): the HTTPRoute to the gateway's
// Service and the one that redirects plain HTTP, the platform's own Gateway, the cert-manager Certificate, the
// Ingress with its controller's annotations. No Pulumi here.
import { settingsFromEnv } from "../../gateway/src/config/settings";
import { durationSeconds } from "../platform/durations";
import { type ExposureSettings, redirects, tlsSecretName } from "./exposure-config";
import { APP_NAME, PORTS } from "./constants";

const GATEWAY_API = "gateway.networking.k8s.io";

/** Names of the objects exposure declares (in the gateway namespace). */
export const EXPOSURE_NAMES = {
  /** The API's HTTPRoute: the same name `gateway:httpRoute` used, so moving to `gateway:exposure` updates it in place. */
  route: APP_NAME,
  redirect: `${APP_NAME}-https-redirect`,
  /** Not `gateway`: kgateway and others name the proxy Deployment and Service they provision after the Gateway. */
  ownGateway: `${APP_NAME}-public`,
  certificate: `${APP_NAME}-tls`,
  ingress: APP_NAME,
} as const;

/** Listener names of the platform's own Gateway: `https` (then `https-1`, … per further host name) and `http`. */
export function httpsListenerName(index: number): string {
  return index === 0 ? "https" : `https-${index}`;
}
export const HTTP_LISTENER = "http";

interface ParentRef {
  readonly group: string;
  readonly kind: "Gateway";
  readonly name: string;
  readonly namespace?: string;
  readonly sectionName?: string;
}

const parentRef = (name: string, namespace?: string, sectionName?: string): ParentRef => ({
  group: GATEWAY_API,
  kind: "Gateway",
  name,
  ...(namespace ? { namespace } : {}),
  ...(sectionName ? { sectionName } : {}),
});

/** Where the API route and the redirect route attach. */
export function routeParents(e: ExposureSettings): { api: ParentRef[]; redirect: ParentRef[] } {
  if (e.existingGateway) {
    const { name, namespace, httpsListener, httpListener } = e.existingGateway;
    return { api: [parentRef(name, namespace, httpsListener)], redirect: httpListener ? [parentRef(name, namespace, httpListener)] : [] };
  }
  if (e.ownGateway) {
    const hosts = e.hostnames ?? [];
    return {
      api: hosts.map((_, i) => parentRef(EXPOSURE_NAMES.ownGateway, undefined, httpsListenerName(i))),
      redirect: redirects(e) ? [parentRef(EXPOSURE_NAMES.ownGateway, undefined, HTTP_LISTENER)] : [],
    };
  }
  return { api: [], redirect: [] };
}

const everything = [{ path: { type: "PathPrefix", value: "/" } }];

/** The API route: everything under `/` to the Service's API port. */
export function apiRouteSpec(e: ExposureSettings) {
  return {
    parentRefs: routeParents(e).api,
    ...(e.hostnames ? { hostnames: [...e.hostnames] } : {}),
    rules: [
      {
        matches: everything,
        backendRefs: [{ group: "", kind: "Service", name: APP_NAME, port: PORTS.service }],
        ...(e.requestTimeout !== undefined ? { timeouts: { request: e.requestTimeout } } : {}),
      },
    ],
  };
}

/** Plain HTTP answered with 301 to the same host and path over https (port 443, the scheme's own). */
export function redirectRouteSpec(e: ExposureSettings) {
  return {
    parentRefs: routeParents(e).redirect,
    ...(e.hostnames ? { hostnames: [...e.hostnames] } : {}),
    rules: [{ matches: everything, filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 301 } }] }],
  };
}

/** Routes from the gateway namespace only: the Gateway is the API's, not a shared entry point. */
const OWN_ROUTES = { namespaces: { from: "Same" }, kinds: [{ group: GATEWAY_API, kind: "HTTPRoute" }] };

/** The platform's own Gateway: one HTTPS listener per host name terminating TLS, and port 80 only to redirect. */
export function ownGatewaySpec(e: ExposureSettings) {
  if (!e.ownGateway) throw new Error("ownGatewaySpec needs gateway:exposure.ownGateway");
  const secret = tlsSecretName(e);
  const https = (e.hostnames ?? []).map((hostname, i) => ({
    name: httpsListenerName(i),
    hostname,
    port: 443,
    protocol: "HTTPS",
    tls: { mode: "Terminate", certificateRefs: [{ group: "", kind: "Secret", name: secret }] },
    allowedRoutes: OWN_ROUTES,
  }));
  const http = redirects(e) ? [{ name: HTTP_LISTENER, port: 80, protocol: "HTTP", allowedRoutes: OWN_ROUTES }] : [];
  return { gatewayClassName: e.ownGateway.className, listeners: [...https, ...http] };
}

/**
 * The cert-manager Certificate for the host names. `rotationPolicy: Always` is cert-manager's default only since
 * 1.18: set, so every renewal gets a new private key on older controllers too.
 */
export function certificateSpec(e: ExposureSettings, secretLabels: Readonly<Record<string, string>>) {
  const issuer = e.tls?.issuer;
  if (!issuer) throw new Error("certificateSpec needs gateway:exposure.tls.issuer");
  return {
    secretName: tlsSecretName(e),
    secretTemplate: { labels: { ...secretLabels } },
    dnsNames: [...(e.hostnames ?? [])],
    issuerRef: { group: "cert-manager.io", kind: issuer.kind, name: issuer.name },
    privateKey: { rotationPolicy: "Always" },
  };
}

/** The Ingress: every host name to the Service's API port, TLS from the Secret. */
export function ingressSpec(e: ExposureSettings) {
  if (!e.ingress) throw new Error("ingressSpec needs gateway:exposure.ingress");
  const hosts = [...(e.hostnames ?? [])];
  return {
    ingressClassName: e.ingress.className,
    tls: [{ hosts, secretName: tlsSecretName(e) }],
    rules: hosts.map((host) => ({
      host,
      http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: APP_NAME, port: { number: PORTS.service } } } }] },
    })),
  };
}

const MiB = 1024 * 1024;
/** What a proxy adds on top of the gateway's own bound, so the client gets the gateway's answer, not the proxy's. */
const PROXY_MARGIN_SECONDS = 60;

/**
 * ingress-nginx annotations from the gateway's own settings (its `gateway:env` included). Its defaults would break
 * the API: a 1m body limit (the gateway takes 4 MiB), a 60 s read timeout (a non-streaming generation sends nothing
 * for up to the gateway's upstream headers timeout, 10 min). Buffering is off by its default and for every event
 * stream (the gateway sends `X-Accel-Buffering: no`), and set off here in case the controller's ConfigMap turned it on.
 */
export function ingressNginxAnnotations(e: ExposureSettings, gatewayEnv: Readonly<Record<string, string>>): Record<string, string> {
  // gateway:env has passed the same schema in parseGatewayConfig: this cannot throw for a parsed configuration.
  const settings = settingsFromEnv({ ...gatewayEnv });
  const ownBound = Math.ceil(settings.upstreamHeadersTimeoutMs / 1000) + PROXY_MARGIN_SECONDS;
  const requested = e.requestTimeout !== undefined ? durationSeconds(e.requestTimeout) : 0;
  // nginx has no total-request timeout: 0s (or none) means the gateway's own bound plus the margin.
  const read = requested > 0 ? Math.ceil(requested) : ownBound;
  return {
    "nginx.ingress.kubernetes.io/ssl-redirect": String(redirects(e)),
    "nginx.ingress.kubernetes.io/proxy-body-size": `${Math.ceil(settings.bodyLimitBytes / MiB) + 1}m`,
    "nginx.ingress.kubernetes.io/proxy-read-timeout": String(read),
    "nginx.ingress.kubernetes.io/proxy-buffering": "off",
  };
}

/** The Ingress's annotations: the controller's, then the operator's (which win). */
export function ingressAnnotations(e: ExposureSettings, gatewayEnv: Readonly<Record<string, string>>): Record<string, string> {
  return { ...(e.ingress?.controller === "ingress-nginx" ? ingressNginxAnnotations(e, gatewayEnv) : {}), ...(e.annotations ?? {}) };
}

/** The base URL clients outside the cluster use (the first host name), when known. */
export function externalUrl(e: ExposureSettings): string | undefined {
  const host = e.hostnames?.[0];
  return host && !host.startsWith("*.") ? `https://${host}/v1` : undefined;
}
