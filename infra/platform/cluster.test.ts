// The `cluster:` schema, the provider it configures and the DNS egress rules, as pure functions.
import { dnsEgressRules, providerArgs } from "./cluster";
import { dnsPreset, parseClusterConfig } from "./cluster-config";
import { configProblems } from "./config-testing";
import { REPO_ROOT } from "./charts";
import { assumedCrdName, defaultCrdSource } from "./crds";

describe("cluster configuration", () => {
  test("defaults: cluster.local, kube-dns, InferencePool CRDs installed, Gateway API CRDs assumed, conflicts forced", () => {
    const c = parseClusterConfig({ context: "kind-dev" });
    expect(c).toEqual({
      context: "kind-dev",
      hasKubeconfig: false,
      identifier: "kind-dev",
      domain: "cluster.local",
      dns: { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" }, ports: [53] },
      crds: { inferencePool: "install", gatewayApi: "assume" },
      crdSources: { inferencePool: undefined, gatewayApi: undefined },
      gatewayApiVersion: "v1.3.0",
      forceConflicts: true,
    });
  });

  test("a kubeconfig (a secret) instead of a context; a stable name keeps the provider when the context is renamed", () => {
    expect(parseClusterConfig({ kubeconfig: "apiVersion: v1 ..." })).toMatchObject({ hasKubeconfig: true, context: undefined, identifier: undefined });
    expect(parseClusterConfig({ context: "arn:aws:eks:eu-west-1:1:cluster/prod", name: "prod-eu" }).identifier).toBe("prod-eu");
  });

  test("every problem is named, the kubeconfig's value never", () => {
    const lines = configProblems(() => parseClusterConfig({ domain: "Cluster.Local", dns: '{"namespace":"x"}', crdSources: '{"gatewayApi":"http://mirror/crds.yaml"}', forceConflicts: "yes", extra: "1" }));
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^cluster:context: required/),
        expect.stringMatching(/^cluster:domain: must be a DNS subdomain/),
        expect.stringMatching(/^cluster:dns: /),
        expect.stringMatching(/^cluster:crdSources \[gatewayApi\]: must be an https URL or a file path/),
        expect.stringMatching(/^cluster:forceConflicts: /),
        "cluster:extra: unknown key",
      ]),
    );
  });

  test("a mirrored CRD file is read relative to the repository", () => {
    const c = parseClusterConfig({ context: "x", crdSources: JSON.stringify({ inferencePool: "mirror/gaie.yaml", gatewayApi: "https://mirror.internal/gw.yaml" }) });
    expect(c.crdSources).toEqual({ inferencePool: `${REPO_ROOT}/mirror/gaie.yaml`, gatewayApi: "https://mirror.internal/gw.yaml" });
  });

  test("custom DNS: pods, addresses, or both; one of them is required", () => {
    expect(parseClusterConfig({ context: "x", dns: JSON.stringify({ cidrs: ["10.96.0.10/32"] }) }).dns).toEqual({ cidrs: ["10.96.0.10/32"], ports: [53] });
    expect(configProblems(() => parseClusterConfig({ context: "x", dns: JSON.stringify({ ports: [53] }) }))).toEqual([expect.stringMatching(/^cluster:dns: /)]);
  });
});

describe("the provider", () => {
  test("server-side apply with adoption, forced conflicts, in-place ConfigMaps, a stable identity", () => {
    const args = providerArgs(parseClusterConfig({ context: "kind-dev" }));
    expect(args).toEqual({
      context: "kind-dev",
      clusterIdentifier: "kind-dev",
      enableServerSideApply: true,
      upsertExistingObjects: true,
      enablePatchForce: true,
      enableConfigMapMutable: true,
      suppressHelmHookWarnings: true,
    });
    expect(providerArgs(parseClusterConfig({ context: "kind-dev", forceConflicts: "false" })).enablePatchForce).toBe(false);
    expect(providerArgs(parseClusterConfig({ kubeconfig: "k" }), "contents")).toMatchObject({ kubeconfig: "contents" });
  });
});

describe("DNS egress", () => {
  test("pods by namespace and labels, node-local addresses by CIDR, on UDP and TCP", () => {
    expect(dnsEgressRules(dnsPreset("node-local-dns"))).toEqual([
      {
        to: [
          { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } },
          { ipBlock: { cidr: "169.254.20.10/32" } },
        ],
        ports: [
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ],
      },
    ]);
    expect(dnsEgressRules(dnsPreset("openshift"))[0]?.ports).toEqual([
      { protocol: "UDP", port: 5353 },
      { protocol: "TCP", port: 5353 },
    ]);
  });
});

describe("CRD sources", () => {
  test("the release assets of the pinned versions, and read names that carry the key", () => {
    expect(defaultCrdSource("inferencePool", "v1.3.0")).toBe("https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/v1.3.0/manifests.yaml");
    expect(defaultCrdSource("gatewayApi", "v1.3.0")).toBe("https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.3.0/standard-install.yaml");
    expect(assumedCrdName("gatewayApi", "httproutes.gateway.networking.k8s.io")).toBe("cluster:crds.gatewayApi:httproutes.gateway.networking.k8s.io");
  });
});
