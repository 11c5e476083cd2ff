// `gateway:exposure` rendered by the whole program on Pulumi's mocks: each way of exposing the API (an existing
// Gateway, a Gateway of the platform's own, an Ingress) with TLS from a Secret and from a cert-manager issuer, the
// HTTPS redirect, allowedRoutes, the NetworkPolicy, the reads that make a preview fail, and the bad-config messages.
import { gatewayConfig, SECRET_KEYS } from "../infra/gateway/testing";
import { validateAnyObject } from "../infra/platform/crd-validate";
import { isKubernetesObject, toManifest } from "../infra/platform/k8s-validate";
import { MockEngineError, type MockRunOptions, type ResourceRecord, runWithMocks } from "../infra/platform/mocks";
import { podSecurityLabels } from "../infra/platform/pod-security";

const T = {
  route: "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute",
  gateway: "kubernetes:gateway.networking.k8s.io/v1:Gateway",
  gatewayClass: "kubernetes:gateway.networking.k8s.io/v1:GatewayClass",
  ingressClass: "kubernetes:networking.k8s.io/v1:IngressClass",
  certificate: "kubernetes:cert-manager.io/v1:Certificate",
  clusterIssuer: "kubernetes:cert-manager.io/v1:ClusterIssuer",
  issuer: "kubernetes:cert-manager.io/v1:Issuer",
  ingress: "kubernetes:networking.k8s.io/v1:Ingress",
  np: "kubernetes:networking.k8s.io/v1:NetworkPolicy",
  crd: "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
  deploy: "kubernetes:apps/v1:Deployment",
} as const;

const ISSUER = { name: "letsencrypt", kind: "ClusterIssuer" };
const ENVOY_GATEWAY = "gateway.envoyproxy.io/gatewayclass-controller";
const GKE = "networking.gke.io/gateway";
/** A class as the cluster holds it, by its id (the name: classes are cluster-scoped). */
const gatewayClass = (name: string, controllerName: string) => ({ [name]: { spec: { controllerName } } });
const ingressClass = (name: string, controller: string) => ({ [name]: { spec: { controller } } });

async function runWithOutputs(overrides: Record<string, string | undefined>, extra: Partial<MockRunOptions> = {}) {
  return runWithMocks(async () => (await import("./program")).program(), { config: gatewayConfig(overrides), secretKeys: SECRET_KEYS, ...extra });
}
const run = async (overrides: Record<string, string | undefined>, extra: Partial<MockRunOptions> = {}): Promise<ResourceRecord[]> => (await runWithOutputs(overrides, extra)).resources;
const exposure = (e: unknown) => ({ "gateway:exposure": JSON.stringify(e) });
const failureOf = (p: Promise<unknown>) => p.then(() => undefined, (e: Error) => e);

const named = (rs: ResourceRecord[], type: string, name: string) => {
  const r = rs.find((x) => x.type === type && x.name === name);
  if (!r) throw new Error(`no ${type} ${name}; have ${rs.map((x) => `${x.type} ${x.name}`).join(", ")}`);
  return r;
};
/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are read field by field */
const manifest = (rs: ResourceRecord[], type: string, name: string) => toManifest(named(rs, type, name)) as any;
const declared = (rs: ResourceRecord[], type: string) => rs.filter((r) => r.type === type && !r.read).map((r) => r.name);

/** Every object declared directly passes its schema: the Kubernetes OpenAPI one, or the CRD's. */
function expectAllValid(rs: ResourceRecord[]) {
  for (const r of rs.filter((x) => isKubernetesObject(x) && !x.read)) expect(() => validateAnyObject(toManifest(r))).not.toThrow();
}

const API_RULE = { matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ group: "", kind: "Service", name: "gateway", port: 80 }] };
const REDIRECT_RULE = { matches: [{ path: { type: "PathPrefix", value: "/" } }], filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 301 } }] };
/** What of the TLS Secret the gateway's pod holds: the volume, its mount, GATEWAY_TLS_CERT_FILE. */
function certificateInPod(rs: ResourceRecord[]) {
  const pod = manifest(rs, T.deploy, "gateway").spec.template.spec;
  const c = pod.containers[0];
  return {
    volume: pod.volumes.find((v: any) => v.name === "tls-cert"),
    mount: c.volumeMounts.find((m: any) => m.name === "tls-cert"),
    env: c.env.find((e: any) => e.name === "GATEWAY_TLS_CERT_FILE"),
  };
}

const ONLY_OWN_ROUTES = { namespaces: { from: "Same" }, kinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }] };

describe("a Gateway of the platform's own, TLS from a cert-manager issuer", () => {
  let rs: ResourceRecord[];
  beforeAll(async () => {
    rs = await run({
      ...exposure({ ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { issuer: ISSUER }, requestTimeout: "0s", from: { namespace: "envoy-gateway-system" } }),
      "gateway:ingressNamespaces": JSON.stringify(["apps"]),
    });
  });

  test("the Gateway: an HTTPS listener terminating TLS with the issued Secret, port 80 only to redirect, routes from its own namespace only", () => {
    const gw = manifest(rs, T.gateway, "gateway-public");
    expect(gw.metadata.namespace).toBe("ai-gateway");
    expect(gw.spec).toEqual({
      gatewayClassName: "eg",
      listeners: [
        { name: "https", hostname: "llm.example.com", port: 443, protocol: "HTTPS", tls: { mode: "Terminate", certificateRefs: [{ group: "", kind: "Secret", name: "gateway-tls" }] }, allowedRoutes: ONLY_OWN_ROUTES },
        { name: "http", port: 80, protocol: "HTTP", allowedRoutes: ONLY_OWN_ROUTES },
      ],
    });
  });

  test("the Certificate for the host names, from the named issuer, after the issuer is read and cert-manager's CRD is proved present", () => {
    const cert = manifest(rs, T.certificate, "gateway-tls");
    expect(cert.spec).toMatchObject({
      secretName: "gateway-tls",
      dnsNames: ["llm.example.com"],
      issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "letsencrypt" },
      privateKey: { rotationPolicy: "Always" },
    });
    const issuerRead = named(rs, T.clusterIssuer, "gateway:exposure.tls.issuer:ClusterIssuer/letsencrypt");
    expect(issuerRead.read).toBe(true);
    const crdRead = named(rs, T.crd, "cluster:crds.certManager:certificates.cert-manager.io");
    expect(crdRead.read).toBe(true);
    expect(issuerRead.dependsOn).toContain(crdRead.name);
    expect(named(rs, T.certificate, "gateway-tls").dependsOn).toEqual(expect.arrayContaining([crdRead.name, issuerRead.name]));
    // The Gateway waits for the Certificate (its Secret), and for the Gateway API CRDs it is made of.
    expect(named(rs, T.gateway, "gateway-public").dependsOn).toEqual(
      expect.arrayContaining(["gateway-tls", "cluster:crds.gatewayApi:gateways.gateway.networking.k8s.io", "cluster:crds.gatewayApi:httproutes.gateway.networking.k8s.io"]),
    );
  });

  test("the API route on the HTTPS listener with the request timeout; the redirect route on the HTTP listener, 301 to https", () => {
    expect(manifest(rs, T.route, "gateway").spec).toEqual({
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gateway-public", sectionName: "https" }],
      hostnames: ["llm.example.com"],
      rules: [{ ...API_RULE, timeouts: { request: "0s" } }],
    });
    expect(manifest(rs, T.route, "gateway-https-redirect").spec).toEqual({
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gateway-public", sectionName: "http" }],
      hostnames: ["llm.example.com"],
      rules: [REDIRECT_RULE],
    });
    expect(named(rs, T.route, "gateway").dependsOn).toEqual(expect.arrayContaining(["gateway", "gateway-public"]));
  });

  test("the NetworkPolicy admits the proxy's namespace beside gateway:ingressNamespaces, on the API port only", () => {
    const np = manifest(rs, T.np, "gateway");
    expect(np.spec.ingress[0]).toEqual({
      from: [
        { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "apps" } } },
        { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "envoy-gateway-system" } } },
      ],
      ports: [{ protocol: "TCP", port: 8080 }],
    });
  });

  test("cert-manager's metrics watch the issued certificate: nothing of its Secret in the gateway's pod", () => {
    expect(certificateInPod(rs)).toEqual({ volume: undefined, mount: undefined, env: undefined });
  });

  test("every object is valid against its schema; nothing of it is retained (removing exposure unexposes the API)", () => {
    expectAllValid(rs);
    for (const name of ["gateway", "gateway-https-redirect"]) expect(named(rs, T.route, name).retainOnDelete).toBe(false);
    expect(named(rs, T.gateway, "gateway-public").retainOnDelete).toBe(false);
  });
});

describe("a Gateway of the platform's own, TLS from a provided Secret", () => {
  test("one HTTPS listener per host name, all with the Secret; no Certificate and no cert-manager check", async () => {
    const rs = await run(exposure({ ownGateway: { className: "istio" }, hostnames: ["llm.example.com", "api.example.org"], tls: { secretName: "llm-tls" } }));
    const listeners = manifest(rs, T.gateway, "gateway-public").spec.listeners;
    expect(listeners.map((l: any) => [l.name, l.hostname, l.protocol, l.tls?.certificateRefs?.[0]?.name])).toEqual([
      ["https", "llm.example.com", "HTTPS", "llm-tls"],
      ["https-1", "api.example.org", "HTTPS", "llm-tls"],
      ["http", undefined, "HTTP", undefined],
    ]);
    expect(manifest(rs, T.route, "gateway").spec.parentRefs.map((p: any) => p.sectionName)).toEqual(["https", "https-1"]);
    // No requestTimeout: the route leaves the implementation's default.
    expect(manifest(rs, T.route, "gateway").spec.rules).toEqual([API_RULE]);
    expect(declared(rs, T.certificate)).toEqual([]);
    expect(rs.some((r) => r.name.includes("certManager") || r.name.includes("tls.issuer"))).toBe(false);
    expectAllValid(rs);
  });

  test("the gateway's pod mounts the Secret's certificate alone (never its key) and exports its expiry", async () => {
    for (const mode of [{ ownGateway: { className: "istio" } }, { ingress: { className: "traefik", controller: "other" } }]) {
      const rs = await run(exposure({ ...mode, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls" } }));
      expect(certificateInPod(rs)).toEqual({
        volume: { name: "tls-cert", secret: { secretName: "llm-tls", items: [{ key: "tls.crt", path: "tls.crt" }], defaultMode: 0o440, optional: true } },
        mount: { name: "tls-cert", mountPath: "/etc/gateway/tls", readOnly: true },
        env: { name: "GATEWAY_TLS_CERT_FILE", value: "/etc/gateway/tls/tls.crt" },
      });
    }
  });

  test("the stack output gateway.externalUrl is the first host name's", async () => {
    const { outputs } = await runWithOutputs(exposure({ ownGateway: { className: "istio" }, hostnames: ["llm.example.com", "api.example.org"], tls: { secretName: "llm-tls" } }));
    expect(outputs.gateway?.externalUrl).toBe("https://llm.example.com/v1");
    expect((await runWithOutputs({})).outputs.gateway).not.toHaveProperty("externalUrl");
  });

  test("httpsRedirect false: no port 80 listener and no redirect route", async () => {
    const rs = await run(exposure({ ownGateway: { className: "istio" }, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls" }, httpsRedirect: false }));
    expect(manifest(rs, T.gateway, "gateway-public").spec.listeners.map((l: any) => l.name)).toEqual(["https"]);
    expect(declared(rs, T.route)).toEqual(["gateway"]);
  });

  test("an Issuer (namespaced) is read in the gateway namespace; the Certificate writes the named Secret", async () => {
    const rs = await run(exposure({ ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls", issuer: { name: "internal-ca", kind: "Issuer" } } }));
    expect(named(rs, T.issuer, "gateway:exposure.tls.issuer:Issuer/internal-ca").read).toBe(true);
    expect(manifest(rs, T.certificate, "gateway-tls").spec).toMatchObject({ secretName: "llm-tls", issuerRef: { kind: "Issuer", name: "internal-ca" } });
    expect(manifest(rs, T.gateway, "gateway-public").spec.listeners[0].tls.certificateRefs).toEqual([{ group: "", kind: "Secret", name: "llm-tls" }]);
    // cert-manager's metrics watch what it issues: nothing of the Secret in the gateway's pod.
    expect(certificateInPod(rs)).toEqual({ volume: undefined, mount: undefined, env: undefined });
  });

  test("a cluster without cert-manager fails the preview naming the CRD and the key", async () => {
    const err = await failureOf(
      run(exposure({ ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { issuer: ISSUER } }), { absentObjects: ["certificates.cert-manager.io"] }),
    );
    expect(err).toBeInstanceOf(MockEngineError);
    expect((err as Error).message).toContain(
      "(cluster:crds.certManager:certificates.cert-manager.io): Preview failed: resource 'certificates.cert-manager.io' does not exist",
    );
  });

  test("an issuer that does not exist fails the preview naming it", async () => {
    const err = await failureOf(run(exposure({ ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { issuer: ISSUER } }), { absentObjects: ["letsencrypt"] }));
    expect((err as Error).message).toContain("(gateway:exposure.tls.issuer:ClusterIssuer/letsencrypt): Preview failed: resource 'letsencrypt' does not exist");
  });
});

/** A Gateway another team owns, as the cluster holds it. */
function sharedGateway(listeners: unknown[], gatewayClassName = "eg", controllerName = ENVOY_GATEWAY) {
  return { "gateways/public": { spec: { gatewayClassName, listeners } }, ...gatewayClass(gatewayClassName, controllerName) };
}
const HTTPS_ALL = { name: "https", port: 443, protocol: "HTTPS", hostname: "*.example.com", tls: { certificateRefs: [{ name: "wildcard" }] }, allowedRoutes: { namespaces: { from: "All" } } };
const HTTP_ALL = { name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } };
const ATTACH = { name: "public", namespace: "gateways", httpsListener: "https", httpListener: "http" };

describe("an existing Gateway: read at preview, its listeners checked", () => {
  test("routes attach to the named listeners; the Gateway read is a dependency of both", async () => {
    const rs = await run(exposure({ existingGateway: ATTACH, hostnames: ["llm.example.com"], requestTimeout: "0s" }), { existingObjects: sharedGateway([HTTPS_ALL, HTTP_ALL]) });
    const read = named(rs, T.gateway, "gateway:exposure.existingGateway:gateways/public");
    expect(read.read).toBe(true);
    expect(read.dependsOn).toContain("cluster:crds.gatewayApi:gateways.gateway.networking.k8s.io");
    expect(manifest(rs, T.route, "gateway").spec).toEqual({
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "public", namespace: "gateways", sectionName: "https" }],
      hostnames: ["llm.example.com"],
      rules: [{ ...API_RULE, timeouts: { request: "0s" } }],
    });
    expect(manifest(rs, T.route, "gateway-https-redirect").spec.parentRefs).toEqual([
      { group: "gateway.networking.k8s.io", kind: "Gateway", name: "public", namespace: "gateways", sectionName: "http" },
    ]);
    for (const name of ["gateway", "gateway-https-redirect"]) expect(named(rs, T.route, name).dependsOn).toContain(read.name);
    expect(declared(rs, T.gateway)).toEqual([]);
    expectAllValid(rs);
  });

  test("a selector that matches the gateway namespace's labels admits the routes", async () => {
    const selected = { ...HTTPS_ALL, allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { "app.kubernetes.io/part-of": "app-serving" } } } } };
    const rs = await run(exposure({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }), { existingObjects: sharedGateway([selected]) });
    expect(declared(rs, T.route)).toEqual(["gateway"]);
  });

  test("a listener that admits namespaces by a label: the preview names the labels and the key; set on the namespace, they admit the routes", async () => {
    const shared = { ...HTTPS_ALL, allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { "shared-gateway-access": "true" } } } } };
    const e = exposure({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } });
    const err = await failureOf(run(e, { existingObjects: sharedGateway([shared]) }));
    expect((err as Error).message).toContain('is not one of them: give it the labels {"shared-gateway-access":"true"} with gateway:namespaceLabels');
    const rs = await run({ ...e, "gateway:namespaceLabels": JSON.stringify({ "shared-gateway-access": "true" }) }, { existingObjects: sharedGateway([shared]) });
    expect(declared(rs, T.route)).toEqual(["gateway"]);
    expect(manifest(rs, "kubernetes:core/v1:Namespace", "ai-gateway").metadata.labels).toEqual({
      "shared-gateway-access": "true",
      "app.kubernetes.io/part-of": "app-serving",
      "app.kubernetes.io/managed-by": "pulumi",
      ...podSecurityLabels("restricted"),
    });
  });

  test("a selector that no label of gateway:namespaceLabels can satisfy says its owner must change it", async () => {
    const other = { ...HTTPS_ALL, allowedRoutes: { namespaces: { from: "Selector", selector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["apps"] }] } } } };
    expect(await failing({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }, [other])).toContain(
      "is not one of them, and no labels gateway:namespaceLabels may set would make it one: its owner must change the selector",
    );
  });

  const failing = async (e: unknown, listeners: unknown[], gatewayClassName?: string, controllerName?: string) => {
    const err = await failureOf(run(exposure(e), { existingObjects: sharedGateway(listeners, gatewayClassName, controllerName) }));
    expect(err).toBeDefined();
    return (err as Error).message;
  };

  test("a listener that admits routes of its own namespace only fails the preview, naming the listener and what its owner must set", async () => {
    const same = { ...HTTPS_ALL, allowedRoutes: undefined };
    expect(await failing({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }, [same])).toContain(
      'gateway:exposure [existingGateway.httpsListener]: listener "https" (HTTPS 443) of Gateway gateways/public would not attach the API route: it admits routes from its own namespace only (allowedRoutes.namespaces.from: Same): its owner must set from: All, or from: Selector matching namespace ai-gateway',
    );
  });

  test("a selector that does not match, a listener that is not there, and the redirect on an HTTPS listener each fail", async () => {
    const other = { ...HTTPS_ALL, allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { team: "web" } } } } };
    expect(await failing({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }, [other])).toMatch(
      /admits routes from the namespaces its selector matches .* and namespace ai-gateway .* is not one of them: give it the labels \{"team":"web"\} with gateway:namespaceLabels/,
    );
    const message = await failing({ existingGateway: { ...ATTACH, httpsListener: "tls", httpListener: "https" }, hostnames: ["llm.example.com"] }, [HTTPS_ALL]);
    expect(message).toContain('gateway:exposure [existingGateway.httpsListener]: Gateway gateways/public has no listener "tls" (its listeners: https)');
    expect(message).toContain('gateway:exposure [existingGateway.httpListener]: listener "https" (HTTPS 443) of Gateway gateways/public is not a plain-HTTP listener');
  });

  test("without httpsListener, a plain-HTTP listener that admits the route fails: the API would be served without TLS", async () => {
    expect(await failing({ existingGateway: { name: "public", namespace: "gateways" } }, [HTTPS_ALL, HTTP_ALL])).toContain(
      'gateway:exposure [existingGateway.httpsListener]: required: without it the API route also attaches to listener "http" (HTTP 80) of Gateway gateways/public, serving API keys over plain HTTP',
    );
  });

  test("host names the listener is not for fail", async () => {
    expect(await failing({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" }, hostnames: ["llm.example.org"] }, [HTTPS_ALL])).toContain(
      "is for host *.example.com, which none of gateway:exposure hostnames (llm.example.org) matches",
    );
  });

  test("with a request timeout the Gateway's class is read too; GKE's, known by its controller, refuses route timeouts", async () => {
    const e = { existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" }, requestTimeout: "0s" };
    expect(await failing(e, [HTTPS_ALL], "external", GKE)).toContain(
      `gateway:exposure [requestTimeout]: Gateway gateways/public is of GatewayClass external, served by GKE (${GKE}): GKE's Gateway controller refuses every HTTPRoute that sets timeouts`,
    );
    const rs = await run(exposure(e), { existingObjects: sharedGateway([HTTPS_ALL], "gke-l7-lookalike") });
    expect(named(rs, T.gatewayClass, "gateway:exposure.existingGateway:GatewayClass/gke-l7-lookalike").read).toBe(true);
    expect(declared(rs, T.route)).toEqual(["gateway"]);
    // Without a request timeout the class does not matter, and is not read.
    const untimed = await run(exposure({ ...e, requestTimeout: undefined }), { existingObjects: sharedGateway([HTTPS_ALL]) });
    expect(untimed.filter((r) => r.type === T.gatewayClass)).toEqual([]);
  });

  test("a failing check registers no route, also in an update without a preview (pulumi up --skip-preview)", async () => {
    const registered: ResourceRecord[] = [];
    const http = { ...HTTP_ALL, name: "https" };
    const err = await failureOf(run(exposure({ existingGateway: ATTACH, hostnames: ["llm.example.com"] }), { existingObjects: sharedGateway([http, HTTP_ALL]), registered }));
    expect((err as Error).message).toContain('gateway:exposure [existingGateway.httpsListener]: listener "https" (HTTP 80) of Gateway gateways/public does not terminate TLS');
    // The run got as far as the read and the gateway's own objects; no route reached the engine.
    expect(registered.map((r) => r.name)).toEqual(expect.arrayContaining(["gateway:exposure.existingGateway:gateways/public", "gateway"]));
    expect(registered.filter((r) => r.type === T.route)).toEqual([]);
  });

  test("a Gateway the cluster returns malformed fails the preview naming it and the fields", async () => {
    const message = await failing({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }, [{ port: 443, allowedRoutes: { namespaces: { from: "Everyone" } } }]);
    expect(message).toContain("gateway:exposure [existingGateway]: Gateway gateways/public, as read from the cluster, is not a Gateway the preview can check: spec.listeners.0.name: ");
    expect(message).toContain("; spec.listeners.0.allowedRoutes.namespaces.from: ");
  });

  test("a Gateway that does not exist fails the preview naming the key", async () => {
    const err = await failureOf(run(exposure({ existingGateway: { name: "public", namespace: "gateways", httpsListener: "https" } }), { absentObjects: ["gateways/public"] }));
    expect((err as Error).message).toContain("(gateway:exposure.existingGateway:gateways/public): Preview failed: resource 'gateways/public' does not exist");
  });
});

describe("the classes named are read at preview, and known by their controller", () => {
  const own = (className: string, extra: object = {}) => exposure({ ownGateway: { className }, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls" }, ...extra });
  const nginx = (controller: string) => exposure({ ingress: { className: "nginx", controller }, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls" } });

  test("the own Gateway's GatewayClass: read after its CRD, before the Gateway; a missing one fails naming the key", async () => {
    const rs = await run(own("eg"), { existingObjects: gatewayClass("eg", ENVOY_GATEWAY) });
    const read = named(rs, T.gatewayClass, "gateway:exposure.ownGateway.className:GatewayClass/eg");
    expect(read.read).toBe(true);
    expect(read.dependsOn).toContain("cluster:crds.gatewayApi:gatewayclasses.gateway.networking.k8s.io");
    expect(named(rs, T.gateway, "gateway-public").dependsOn).toContain(read.name);
    const err = await failureOf(run(own("eg"), { absentObjects: ["eg"] }));
    expect((err as Error).message).toContain("(gateway:exposure.ownGateway.className:GatewayClass/eg): Preview failed: resource 'eg' does not exist");
  });

  test("a GKE class, whatever its name, refuses a request timeout; a class named like GKE's but of another controller does not", async () => {
    const err = await failureOf(run(own("external", { requestTimeout: "0s" }), { existingObjects: gatewayClass("external", GKE) }));
    expect((err as Error).message).toContain(`gateway:exposure [requestTimeout]: Gateway gateway-public is of GatewayClass external, served by GKE (${GKE}): GKE's Gateway controller refuses`);
    const rs = await run(own("gke-l7-lookalike", { requestTimeout: "0s" }), { existingObjects: gatewayClass("gke-l7-lookalike", ENVOY_GATEWAY) });
    expect(manifest(rs, T.route, "gateway").spec.rules[0].timeouts).toEqual({ request: "0s" });
  });

  test("the IngressClass: read before the Ingress; a missing one fails naming the key", async () => {
    const rs = await run(nginx("ingress-nginx"), { existingObjects: ingressClass("nginx", "k8s.io/ingress-nginx") });
    const read = named(rs, T.ingressClass, "gateway:exposure.ingress.className:IngressClass/nginx");
    expect(read.read).toBe(true);
    expect(named(rs, T.ingress, "gateway").dependsOn).toContain(read.name);
    const err = await failureOf(run(nginx("ingress-nginx"), { absentObjects: ["nginx"] }));
    expect((err as Error).message).toContain("(gateway:exposure.ingress.className:IngressClass/nginx): Preview failed: resource 'nginx' does not exist");
  });

  test("controller ingress-nginx on another controller's class fails, and so does other on ingress-nginx's (its 1m body limit would stay)", async () => {
    const traefik = await failureOf(run(nginx("ingress-nginx"), { existingObjects: ingressClass("nginx", "traefik.io/ingress-controller") }));
    expect((traefik as Error).message).toContain(
      "gateway:exposure [ingress.controller]: ingress-nginx, but IngressClass nginx is for controller traefik.io/ingress-controller, not k8s.io/ingress-nginx",
    );
    const other = await failureOf(run(nginx("other"), { existingObjects: ingressClass("nginx", "k8s.io/ingress-nginx") }));
    expect((other as Error).message).toContain("gateway:exposure [ingress.controller]: other, but IngressClass nginx is ingress-nginx's (k8s.io/ingress-nginx)");
  });

  test("a class the cluster returns malformed fails naming it", async () => {
    const err = await failureOf(run(own("eg"), { existingObjects: { eg: { spec: { parametersRef: { name: "x" } } } } }));
    expect((err as Error).message).toContain("gateway:exposure [ownGateway.className]: GatewayClass eg, as read from the cluster, is not one the preview can check: spec.controllerName: ");
  });
});

describe("an Ingress", () => {
  test("ingress-nginx: TLS from the issuer's Certificate, the redirect, and the annotations the API needs, from the gateway's own limits", async () => {
    const rs = await run({
      ...exposure({ ingress: { className: "nginx", controller: "ingress-nginx" }, hostnames: ["llm.example.com"], tls: { issuer: ISSUER } }),
      "gateway:env": JSON.stringify({ GATEWAY_BODY_LIMIT_BYTES: String(16 * 1024 * 1024) }),
    });
    const ing = manifest(rs, T.ingress, "gateway");
    expect(ing.spec).toEqual({
      ingressClassName: "nginx",
      tls: [{ hosts: ["llm.example.com"], secretName: "gateway-tls" }],
      rules: [{ host: "llm.example.com", http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "gateway", port: { number: 80 } } } }] } }],
    });
    expect(ing.metadata.annotations).toEqual({
      "nginx.ingress.kubernetes.io/ssl-redirect": "true",
      // 16 MiB body limit + 1: the gateway, not nginx, answers an oversized body with its own 413.
      "nginx.ingress.kubernetes.io/proxy-body-size": "17m",
      // The gateway's 600 s upstream headers timeout + 60 s.
      "nginx.ingress.kubernetes.io/proxy-read-timeout": "660",
      "nginx.ingress.kubernetes.io/proxy-buffering": "off",
    });
    expect(manifest(rs, T.certificate, "gateway-tls").spec.dnsNames).toEqual(["llm.example.com"]);
    expect(named(rs, T.ingress, "gateway").dependsOn).toEqual(expect.arrayContaining(["gateway", "gateway-tls"]));
    // No Gateway API objects, so no Gateway API CRDs are asked for.
    expect(rs.some((r) => r.name.includes("gatewayApi"))).toBe(false);
    expectAllValid(rs);
  });

  test("ingress-nginx: a request timeout sets the read timeout; httpsRedirect false turns the redirect off; the operator's annotations win", async () => {
    const rs = await run(
      exposure({
        ingress: { className: "nginx", controller: "ingress-nginx" },
        hostnames: ["llm.example.com"],
        tls: { secretName: "llm-tls" },
        requestTimeout: "1h",
        httpsRedirect: false,
        annotations: { "nginx.ingress.kubernetes.io/proxy-body-size": "64m" },
      }),
    );
    expect(manifest(rs, T.ingress, "gateway").metadata.annotations).toMatchObject({
      "nginx.ingress.kubernetes.io/ssl-redirect": "false",
      "nginx.ingress.kubernetes.io/proxy-read-timeout": "3600",
      "nginx.ingress.kubernetes.io/proxy-body-size": "64m",
    });
  });

  test("another controller: no annotations but the operator's, TLS from the Secret, no Certificate", async () => {
    const rs = await run(exposure({ ingress: { className: "traefik", controller: "other" }, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls" } }));
    expect(manifest(rs, T.ingress, "gateway").metadata.annotations).toBeUndefined();
    expect(manifest(rs, T.ingress, "gateway").spec.tls).toEqual([{ hosts: ["llm.example.com"], secretName: "llm-tls" }]);
    expect(declared(rs, T.certificate)).toEqual([]);
  });

  test("a cloud load balancer's addresses are admitted by the NetworkPolicy even when every namespace is", async () => {
    const rs = await run(exposure({ ingress: { className: "gce", controller: "other" }, hostnames: ["llm.example.com"], tls: { secretName: "llm-tls" }, from: { cidrs: ["35.191.0.0/16", "130.211.0.0/22"] } }));
    expect(manifest(rs, T.np, "gateway").spec.ingress[0].from).toEqual([{ namespaceSelector: {} }, { ipBlock: { cidr: "35.191.0.0/16" } }, { ipBlock: { cidr: "130.211.0.0/22" } }]);
  });
});

describe("bad configuration fails the preview with a message naming the key", () => {
  const problems = async (overrides: Record<string, string | undefined>) => {
    const err = await failureOf(run(overrides));
    expect(err).toBeDefined();
    return (err as Error).message;
  };

  test("gateway:httpRoute is refused with the exact gateway:exposure to write, which renders the same HTTPRoute", async () => {
    const old = { parentRef: { name: "public", namespace: "gateways", sectionName: "https" }, hostnames: ["llm.example.com"], requestTimeout: "600s" };
    const message = await problems({ "gateway:httpRoute": JSON.stringify(old) });
    const replacement = '{"existingGateway":{"name":"public","namespace":"gateways","httpsListener":"https"},"hostnames":["llm.example.com"],"requestTimeout":"600s"}';
    expect(message).toContain(`gateway:httpRoute: replaced by gateway:exposure (docs/exposure.md); write instead: pulumi config set gateway:exposure '${replacement}' && pulumi config rm gateway:httpRoute`);
    const rs = await run({ "gateway:exposure": replacement }, { existingObjects: sharedGateway([HTTPS_ALL]) });
    // What gateway:httpRoute rendered, under the same name: the object is updated in place, not replaced.
    expect(manifest(rs, T.route, "gateway").spec).toEqual({
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "public", namespace: "gateways", sectionName: "https" }],
      hostnames: ["llm.example.com"],
      rules: [{ ...API_RULE, timeouts: { request: "600s" } }],
    });
  });

  test.each([
    [{ hostnames: ["llm.example.com"] }, "gateway:exposure: set one of existingGateway, ownGateway, ingress"],
    [{ ownGateway: { className: "eg" }, ingress: { className: "nginx", controller: "other" } }, "gateway:exposure: ownGateway and ingress exclude each other: set one"],
    [{ ownGateway: { className: "eg" }, tls: { secretName: "x" } }, "gateway:exposure [hostnames]: required with ownGateway"],
    [{ ingress: { className: "nginx", controller: "ingress-nginx" }, hostnames: ["llm.example.com"] }, "gateway:exposure [tls]: required: secretName (a kubernetes.io/tls Secret in the gateway namespace) or issuer"],
    [{ existingGateway: { name: "public" }, tls: { secretName: "x" } }, "gateway:exposure [tls]: the Gateway's owner terminates TLS (certificateRefs on its HTTPS listener)"],
    [{ existingGateway: { name: "public" }, httpsRedirect: true }, "gateway:exposure [httpsRedirect]: with existingGateway, needs existingGateway.httpListener"],
    [{ existingGateway: { name: "public", httpsListener: "web", httpListener: "web" } }, "gateway:exposure [existingGateway.httpListener]: must differ from httpsListener"],
    [{ existingGateway: { name: "public", httpsListener: "https", httpListener: "http" } }, "gateway:exposure [hostnames]: required with existingGateway.httpListener"],
    [{ ingress: { className: "traefik", controller: "other" }, hostnames: ["a.example.com"], tls: { secretName: "x" }, requestTimeout: "0s" }, "gateway:exposure [requestTimeout]: has no portable form on an Ingress"],
    [{ ownGateway: { className: "eg" }, hostnames: ["LLM.example.com"], tls: { secretName: "x" } }, "gateway:exposure [hostnames.0]: must be a hostname such as api.example.com"],
  ])("%j", async (e, expected) => {
    expect(await problems(exposure(e))).toContain(expected);
  });

  test("a gateway:env value the gateway would refuse fails the preview naming the variable, also where the Ingress annotations read it", async () => {
    const ingress = exposure({ ingress: { className: "nginx", controller: "ingress-nginx" }, hostnames: ["llm.example.com"], tls: { secretName: "x" } });
    expect(await problems({ ...ingress, "gateway:env": JSON.stringify({ GATEWAY_BODY_LIMIT_BYTES: "lots" }) })).toMatch(/gateway:env \[GATEWAY_BODY_LIMIT_BYTES\]: .*number/);
  });

  test("gateway:namespaceLabels may not set the labels the stack or the API server sets", async () => {
    expect(await problems({ "gateway:namespaceLabels": JSON.stringify({ "kubernetes.io/metadata.name": "x", team: "llm" }) })).toContain(
      "gateway:namespaceLabels [kubernetes.io/metadata.name]: is set by the stack or the API server: remove it",
    );
    expect(await problems({ "gateway:namespaceLabels": JSON.stringify({ "pod-security.kubernetes.io/enforce": "privileged" }) })).toContain(
      "gateway:namespaceLabels [pod-security.kubernetes.io/enforce]: is set by the stack or the API server: remove it",
    );
  });

  test("with gateway:ingressNamespaces, the proxy's namespace is required", async () => {
    const message = await problems({ ...exposure({ ownGateway: { className: "eg" }, hostnames: ["llm.example.com"], tls: { secretName: "x" } }), "gateway:ingressNamespaces": JSON.stringify(["apps"]) });
    expect(message).toContain("gateway:exposure [from]: required with gateway:ingressNamespaces: where the pods of the Gateway or Ingress controller that forward the traffic run");
  });

  test("cluster:crds.certManager cannot be install: the stack never installs cert-manager", async () => {
    expect(await problems({ "cluster:crds": JSON.stringify({ certManager: "install" }) })).toContain(
      "cluster:crds [certManager]: must be assume: cert-manager is a cluster prerequisite the stack does not install",
    );
  });
});
