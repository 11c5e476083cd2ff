// `gateway:exposure`: how clients outside the cluster reach the API, with TLS. One of three ways: an HTTPRoute on a
// Gateway another team owns, a Gateway of the platform's own, or an Ingress. docs/exposure.md is the operator's page.
import { z } from "zod";
import { doc } from "../platform/config";
import { cidr, dnsLabel, dnsSubdomain, gatewayDuration as duration, labelKey, labelMap } from "../platform/schema-rules";

/** A host name as Gateway API and Ingress take it: lowercase DNS name, optionally a leading `*.`. */
export const hostname = z.string().max(253).regex(/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, "must be a hostname such as api.example.com");

/** The Secret the Certificate writes, and the listeners or the Ingress read, when `tls.secretName` is not given. */
export const DEFAULT_TLS_SECRET = "gateway-tls";

const issuerSchema = z.strictObject({
  name: dnsSubdomain,
  kind: z.enum(["ClusterIssuer", "Issuer"]).default("ClusterIssuer"),
});

/** Where the proxy that forwards the traffic runs, for the gateway's NetworkPolicy. */
export const fromSchema = z.union(
  [z.strictObject({ namespace: dnsLabel, podLabels: labelMap.optional() }), z.strictObject({ cidrs: z.array(cidr).min(1) })],
  { error: "must be { namespace, podLabels? } or { cidrs }" },
);

export const exposureSchema = z
  .strictObject({
    hostnames: z
      .array(hostname)
      .min(1)
      .max(16)
      .optional()
      .meta(doc("Host names clients use (at most 16); required with `ownGateway` and `ingress`.", ["llm.example.com"])),
    existingGateway: z
      .strictObject({
        name: dnsSubdomain,
        namespace: dnsLabel.optional(),
        httpsListener: dnsSubdomain.optional(),
        httpListener: dnsSubdomain.optional(),
      })
      .optional()
      .meta(
        doc(
          "Another stack's Gateway ([exposure.md](exposure.md#a-gateway-another-team-owns)).",
          { name: "public", namespace: "gateways", httpsListener: "https", httpListener: "http" },
        ),
      ),
    ownGateway: z
      .strictObject({ className: dnsSubdomain })
      .optional()
      .meta(doc("A Gateway `gateway-public` of this GatewayClass ([exposure.md](exposure.md#a-gateway-of-the-platforms-own)).", { className: "eg" })),
    ingress: z
      .strictObject({
        className: dnsSubdomain,
        controller: z.enum(["ingress-nginx", "other"]),
      })
      .optional()
      .meta(
        doc(
          "An Ingress of this IngressClass ([exposure.md](exposure.md#an-ingress)).",
          { className: "nginx", controller: "ingress-nginx" },
        ),
      ),
    tls: z
      .strictObject({
        secretName: dnsSubdomain.optional(),
        issuer: issuerSchema.optional(),
      })
      .optional()
      .meta(
        doc(
          "The certificate, with `ownGateway` and `ingress`: a `secretName` you provide, or an `issuer` ([exposure.md](exposure.md#tls)).",
          { issuer: { name: "letsencrypt", kind: "ClusterIssuer" } },
          { secretName: "llm-example-com-tls" },
        ),
      ),
    httpsRedirect: z
      .boolean()
      .optional()
      .meta(doc("Redirect plain HTTP to HTTPS: 301 on a Gateway, 308 from ingress-nginx (default true; with `existingGateway`, when `httpListener` is set).")),
    requestTimeout: duration
      .optional()
      .meta(
        doc(
          "Longest the proxy may take over one request; `0s`: no limit ([exposure.md](exposure.md#implementations)).",
          "0s",
        ),
      ),
    from: fromSchema
      .optional()
      .meta(
        doc(
          "Where the proxy's pods run, for the NetworkPolicy: `{namespace, podLabels?}` or `{cidrs}`; required with `gateway:ingressNamespaces`.",
          { namespace: "envoy-gateway-system" },
          { cidrs: ["35.191.0.0/16", "130.211.0.0/22"] },
        ),
      ),
    annotations: z
      .record(labelKey, z.string())
      .optional()
      .meta(doc("Of the Gateway or Ingress the stack creates, over its own.", { "traefik.ingress.kubernetes.io/router.middlewares": "traefik-https-redirect@kubernetescrd" })),
  })
  .superRefine(
    (e, ctx) => {
      const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
      const modes = (["existingGateway", "ownGateway", "ingress"] as const).filter((m) => e[m] !== undefined);
      if (modes.length !== 1) {
        issue([], modes.length === 0 ? "set one of existingGateway, ownGateway, ingress" : `${modes.join(" and ")} exclude each other: set one`);
        return;
      }
      const existing = e.existingGateway;
      if (existing) {
        if (e.tls) issue(["tls"], "the Gateway's owner terminates TLS (certificateRefs on its HTTPS listener): remove tls, or use ownGateway");
        if (e.annotations) issue(["annotations"], "the stack creates no Gateway or Ingress with existingGateway: remove annotations");
        if (e.httpsRedirect === true && !existing.httpListener) issue(["httpsRedirect"], "with existingGateway, needs existingGateway.httpListener (the plain-HTTP listener the redirect attaches to)");
        if (e.httpsRedirect === false && existing.httpListener) issue(["existingGateway", "httpListener"], "names the listener of the redirect, which httpsRedirect false turns off: remove one");
        if (existing.httpListener !== undefined && existing.httpListener === existing.httpsListener) issue(["existingGateway", "httpListener"], "must differ from httpsListener");
        // On a shared listener, a redirect for every host would take other teams' plain-HTTP traffic too.
        if (existing.httpListener !== undefined && !e.hostnames) issue(["hostnames"], "required with existingGateway.httpListener: the redirect answers only these hosts on the shared listener");
        return;
      }
      if (!e.hostnames) issue(["hostnames"], `required with ${modes[0]} (the names the certificate and the ${modes[0] === "ingress" ? "Ingress rules" : "listeners"} are for)`);
      if (!e.tls || (e.tls.secretName === undefined && e.tls.issuer === undefined)) {
        issue(["tls"], "required: secretName (a kubernetes.io/tls Secret in the gateway namespace) or issuer (a cert-manager Certificate)");
      }
      if (e.ingress?.controller === "other" && e.requestTimeout !== undefined) {
        issue(["requestTimeout"], "has no portable form on an Ingress: set your controller's own timeout (docs/exposure.md), or controller ingress-nginx");
      }
    },
    { when: () => true },
  );

export type ExposureSettings = z.infer<typeof exposureSchema>;
export type ExposureFrom = z.infer<typeof fromSchema>;

/** Whether plain HTTP is answered with a redirect (an existing Gateway: when its HTTP listener is named). */
export function redirects(e: ExposureSettings): boolean {
  return e.existingGateway ? e.existingGateway.httpListener !== undefined : e.httpsRedirect !== false;
}

/** The Secret holding the certificate (own Gateway or Ingress). */
export function tlsSecretName(e: ExposureSettings): string {
  return e.tls?.secretName ?? DEFAULT_TLS_SECRET;
}

/**
 * The Secret the operator provides and renews (`tls.secretName` without an issuer), whose expiry the gateway exports;
 * undefined when cert-manager writes it (its own metrics watch it) or there is none.
 */
export function providedTlsSecret(e: ExposureSettings | undefined): string | undefined {
  return e?.tls?.issuer === undefined ? e?.tls?.secretName : undefined;
}

/**
 * `gateway:httpRoute` (the key before `gateway:exposure`), translated: the preview prints exactly what to write. The
 * translation renders the same HTTPRoute under the same name, so the object is updated in place, not replaced.
 */
export function httpRouteMigration(old: unknown): string {
  const o = (typeof old === "object" && old !== null ? old : {}) as { parentRef?: { name?: unknown; namespace?: unknown; sectionName?: unknown }; hostnames?: unknown; requestTimeout?: unknown };
  const p = o.parentRef ?? {};
  const existingGateway = { name: p.name ?? "<gateway name>", ...(p.namespace !== undefined ? { namespace: p.namespace } : {}), ...(p.sectionName !== undefined ? { httpsListener: p.sectionName } : {}) };
  const exposure = { existingGateway, ...(o.hostnames !== undefined ? { hostnames: o.hostnames } : {}), ...(o.requestTimeout !== undefined ? { requestTimeout: o.requestTimeout } : {}) };
  return `gateway:httpRoute: replaced by gateway:exposure (docs/exposure.md); write instead: pulumi config set gateway:exposure '${JSON.stringify(exposure)}' && pulumi config rm gateway:httpRoute`;
}
