// What the classes `gateway:exposure` names (read from the cluster at preview) say about the exposure: the
// GatewayClass of the platform's own Gateway or of an existing one, and the IngressClass. A class is known by the
// controller it names, not by its name: an operator may name a class anything, and a name may mislead.
import { z } from "zod";

const KEY = "gateway:exposure";

/** The controller of GKE's GatewayClasses (gke-l7-*, single- and multi-cluster). */
export const GKE_GATEWAY_CONTROLLER = "networking.gke.io/gateway";
/** What ingress-nginx's IngressClass names (its `--controller-class` default). */
export const INGRESS_NGINX_CONTROLLER = "k8s.io/ingress-nginx";

export const GKE_TIMEOUT_MESSAGE =
  "GKE's Gateway controller refuses every HTTPRoute that sets timeouts (Accepted: False, UnsupportedValue): remove requestTimeout and raise the load balancer's backend timeout with a GCPBackendPolicy (docs/exposure.md)";

/** The fields of the classes the checks read (the API requires both). */
const gatewayClassSpecSchema = z.object({ controllerName: z.string() });
const ingressClassSpecSchema = z.object({ controller: z.string() });

function malformed(key: string, what: string, error: z.ZodError): string {
  return `${KEY} [${key}]: ${what}, as read from the cluster, is not one the preview can check: ${error.issues.map((i) => `${["spec", ...i.path].join(".")}: ${i.message}`).join("; ")}`;
}

export interface GatewayClassUse {
  readonly className: string;
  /** The key that names the class, or the Gateway of that class: what a message points at. */
  readonly key: string;
  readonly usedBy: string;
  readonly requestTimeout?: string;
}

/** `gateway:exposure …` lines for a GatewayClass as the cluster returned it. */
export function gatewayClassProblems(spec: unknown, u: GatewayClassUse): string[] {
  const parsed = gatewayClassSpecSchema.safeParse(spec);
  if (!parsed.success) return [malformed(u.key, `GatewayClass ${u.className}`, parsed.error)];
  if (u.requestTimeout !== undefined && parsed.data.controllerName === GKE_GATEWAY_CONTROLLER) {
    return [`${KEY} [requestTimeout]: ${u.usedBy} is of GatewayClass ${u.className}, served by GKE (${GKE_GATEWAY_CONTROLLER}): ${GKE_TIMEOUT_MESSAGE}`];
  }
  return [];
}

/** `gateway:exposure …` lines for the IngressClass as the cluster returned it, against the controller declared. */
export function ingressClassProblems(spec: unknown, ingress: { readonly className: string; readonly controller: "ingress-nginx" | "other" }): string[] {
  const parsed = ingressClassSpecSchema.safeParse(spec);
  if (!parsed.success) return [malformed("ingress.className", `IngressClass ${ingress.className}`, parsed.error)];
  const nginx = parsed.data.controller === INGRESS_NGINX_CONTROLLER;
  if (ingress.controller === "ingress-nginx" && !nginx) {
    return [
      `${KEY} [ingress.controller]: ingress-nginx, but IngressClass ${ingress.className} is for controller ${parsed.data.controller}, not ${INGRESS_NGINX_CONTROLLER}: name ingress-nginx's class in ingress.className, or set controller: other`,
    ];
  }
  // Without the annotations, ingress-nginx's 1m body limit and 60 s read timeout would cut the API's requests short.
  if (ingress.controller === "other" && nginx) {
    return [`${KEY} [ingress.controller]: other, but IngressClass ${ingress.className} is ingress-nginx's (${INGRESS_NGINX_CONTROLLER}): set controller: ingress-nginx, which sets the annotations the API needs`];
  }
  return [];
}
