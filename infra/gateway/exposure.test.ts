// The pure parts of exposure: Gateway API attachment rules, the ingress-nginx values, and the CRD schemas refusing
// what the CRDs' own rules refuse (the messages are the CRDs', as a real API server prints them).
import { validateAnyObject } from "../platform/crd-validate";
import { durationSeconds } from "../platform/durations";
import { ingressNginxAnnotations, ownGatewaySpec, redirectRouteSpec } from "./exposure";
import { exposureSchema } from "./exposure-config";
import { admissionProblem, hostnamesIntersect, labelsToMatch, selectorMatches } from "./listener-check";

const LABELS = { "kubernetes.io/metadata.name": "ai-gateway", "app.kubernetes.io/part-of": "app-serving" };

describe("Gateway API attachment rules", () => {
  test("label selectors: matchLabels and every matchExpressions operator, ANDed", () => {
    expect(selectorMatches({}, LABELS)).toBe(true);
    expect(selectorMatches({ matchLabels: { "app.kubernetes.io/part-of": "app-serving" } }, LABELS)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["ai-gateway", "apps"] }] }, LABELS)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: "team", operator: "NotIn", values: ["web"] }] }, LABELS)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: "team", operator: "Exists" }] }, LABELS)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: "team", operator: "DoesNotExist" }] }, LABELS)).toBe(true);
    expect(selectorMatches({ matchLabels: { "app.kubernetes.io/part-of": "app-serving" }, matchExpressions: [{ key: "team", operator: "Exists" }] }, LABELS)).toBe(false);
  });

  test("the labels a selector needs added, unless only removing or a fixed label would do", () => {
    const fixed = ["kubernetes.io/metadata.name"];
    expect(labelsToMatch({ matchLabels: { "shared-gateway-access": "true" } }, LABELS, fixed)).toEqual({ "shared-gateway-access": "true" });
    expect(labelsToMatch({ matchExpressions: [{ key: "team", operator: "In", values: ["llm", "web"] }, { key: "gateways", operator: "Exists" }] }, LABELS, fixed)).toEqual({ team: "llm", gateways: "true" });
    expect(labelsToMatch({ matchLabels: { "app.kubernetes.io/part-of": "app-serving" } }, LABELS, fixed)).toEqual({});
    expect(labelsToMatch({ matchExpressions: [{ key: "app.kubernetes.io/part-of", operator: "DoesNotExist" }] }, LABELS, fixed)).toBeUndefined();
    expect(labelsToMatch({ matchLabels: { "kubernetes.io/metadata.name": "apps" } }, LABELS, fixed)).toBeUndefined();
  });

  test("host names: exact, and a wildcard on either side matching one or more labels, never the bare domain", () => {
    expect(hostnamesIntersect(undefined, ["llm.example.com"])).toBe(true);
    expect(hostnamesIntersect("llm.example.com", undefined)).toBe(true);
    expect(hostnamesIntersect("*.example.com", ["a.b.example.com"])).toBe(true);
    expect(hostnamesIntersect("llm.example.com", ["*.example.com"])).toBe(true);
    expect(hostnamesIntersect("*.example.com", ["example.com"])).toBe(false);
    expect(hostnamesIntersect("llm.example.com", ["llm.example.org"])).toBe(false);
  });

  test("a listener admits routes by namespace (Same, All, Selector), by kind and by host", () => {
    const args = { gateway: "gateways/public", gatewayNamespace: "gateways", routeNamespace: "ai-gateway", routeNamespaceLabels: LABELS, hostnames: ["llm.example.com"] };
    const listener = (allowedRoutes?: object, hostname?: string) => ({ name: "https", protocol: "HTTPS", allowedRoutes, hostname });
    expect(admissionProblem(listener(), args)).toMatch(/own namespace only/);
    expect(admissionProblem(listener(), { ...args, gatewayNamespace: "ai-gateway" })).toBeUndefined();
    expect(admissionProblem(listener({ namespaces: { from: "All" } }), args)).toBeUndefined();
    expect(admissionProblem(listener({ namespaces: { from: "All" }, kinds: [{ kind: "GRPCRoute" }] }), args)).toBe("admits only GRPCRoute (allowedRoutes.kinds), not HTTPRoute");
    expect(admissionProblem(listener({ namespaces: { from: "All" } }, "*.example.org"), args)).toMatch(/is for host \*\.example\.org/);
  });
});

const e = (v: unknown) => exposureSchema.parse(v);

describe("ingress-nginx annotations follow the gateway's own settings", () => {
  const ingress = { ingress: { className: "nginx", controller: "ingress-nginx" }, hostnames: ["llm.example.com"], tls: { secretName: "t" } };
  test("defaults: 4 MiB body + 1, the 10-minute upstream headers timeout + 60 s", () => {
    expect(ingressNginxAnnotations(e(ingress), {})).toEqual({
      "nginx.ingress.kubernetes.io/ssl-redirect": "true",
      "nginx.ingress.kubernetes.io/proxy-body-size": "5m",
      "nginx.ingress.kubernetes.io/proxy-read-timeout": "660",
      "nginx.ingress.kubernetes.io/proxy-buffering": "off",
    });
  });
  test("gateway:env moves them; 0s leaves the gateway's bound; a duration is read in seconds", () => {
    const env = { GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: "1800000", GATEWAY_BODY_LIMIT_BYTES: String(10 * 1024 * 1024 + 1) };
    expect(ingressNginxAnnotations(e({ ...ingress, requestTimeout: "0s" }), env)).toMatchObject({
      "nginx.ingress.kubernetes.io/proxy-body-size": "12m",
      "nginx.ingress.kubernetes.io/proxy-read-timeout": "1860",
    });
    expect(durationSeconds("1h30m")).toBe(5400);
    expect(durationSeconds("1500ms")).toBe(1.5);
  });
});

describe("the CRD schemas refuse what the CRDs refuse", () => {
  const own = e({ ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { secretName: "t" } });
  const meta = { name: "x", namespace: "ai-gateway" };

  test("Gateway: tls on an HTTP listener, duplicate names, HTTPS without a certificate", () => {
    const gateway = (listeners: unknown[]) => ({ apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", metadata: meta, spec: { ...ownGatewaySpec(own), listeners } });
    expect(() => validateAnyObject(gateway(ownGatewaySpec(own).listeners))).not.toThrow();
    expect(() => validateAnyObject(gateway([{ name: "http", port: 80, protocol: "HTTP", tls: { certificateRefs: [{ name: "t" }] } }]))).toThrow(/tls must not be specified for protocols \['HTTP', 'TCP', 'UDP'\]/);
    expect(() => validateAnyObject(gateway([{ name: "a", port: 80, protocol: "HTTP" }, { name: "a", port: 81, protocol: "HTTP" }]))).toThrow(/Listener name must be unique within the Gateway/);
    expect(() => validateAnyObject(gateway([{ name: "a", port: 443, protocol: "HTTPS", tls: { mode: "Terminate" } }]))).toThrow(/certificateRefs or options must be specified when mode is Terminate/);
  });

  test("HTTPRoute: a redirect beside backendRefs, an unknown status code, two refs to one parent without sections", () => {
    const route = (spec: object) => ({ apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata: meta, spec });
    const redirect = redirectRouteSpec(own);
    expect(() => validateAnyObject(route(redirect))).not.toThrow();
    const rule = redirect.rules[0] as Record<string, unknown>;
    expect(() => validateAnyObject(route({ ...redirect, rules: [{ ...rule, backendRefs: [{ name: "gateway", port: 80 }] }] }))).toThrow(/RequestRedirect filter must not be used together with backendRefs/);
    expect(() => validateAnyObject(route({ ...redirect, rules: [{ ...rule, filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 308 } }] }] }))).toThrow(/statusCode/);
    expect(() => validateAnyObject(route({ ...redirect, parentRefs: [{ name: "g" }, { name: "g" }] }))).toThrow(/sectionName must be specified, and unique/);
  });

  test("Certificate: without any name to certify, or with cert-manager's own annotations on the Secret", () => {
    const cert = (spec: object) => ({ apiVersion: "cert-manager.io/v1", kind: "Certificate", metadata: meta, spec: { secretName: "t", issuerRef: { name: "le" }, ...spec } });
    expect(() => validateAnyObject(cert({ dnsNames: ["llm.example.com"] }))).not.toThrow();
    expect(() => validateAnyObject(cert({}))).toThrow(/at least one of commonName/);
    expect(() => validateAnyObject(cert({ dnsNames: ["a.example.com"], secretTemplate: { annotations: { "cert-manager.io/issuer": "x" } } }))).toThrow(/cert-manager.io\/\* annotations are not allowed/);
  });
});
