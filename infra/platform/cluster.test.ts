// The `cluster:` schema, the provider it configures and the DNS egress rules, as pure functions.
import { dnsEgressRules, providerArgs } from "./cluster";
import { parseClusterConfig, resolveDns } from "./cluster-config";
import { configProblems } from "./config-testing";
import { REPO_ROOT } from "./charts";
import { assumedCrdName, defaultCrdSource } from "./crds";

describe("cluster configuration", () => {
  test("defaults: cluster.local, kube-dns, InferencePool CRDs installed, Gateway API and cert-manager CRDs and KEDA assumed, conflicts forced", () => {
    const c = parseClusterConfig({ context: "kind-dev" });
    expect(c).toEqual({
      context: "kind-dev",
      hasKubeconfig: false,
      // Only an explicit name: a value that changes (a renamed context) would replace the provider.
      identifier: undefined,
      fixedUserIds: true,
      domain: "cluster.local",
      dns: { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" }, ports: [53] },
      crds: { inferencePool: "install", gatewayApi: "assume", certManager: "assume" },
      crdSources: { inferencePool: undefined, gatewayApi: undefined, keda: undefined },
      keda: { mode: "assume", namespace: "keda", chartPath: undefined, imageRegistry: undefined },
      gatewayApiVersion: "v1.3.0",
      forceConflicts: true,
    });
  });

  test("cluster:keda: install or assume, a mirror's registry as a host and path", () => {
    expect(parseClusterConfig({ context: "x", keda: "install", kedaImageRegistry: "mirror.internal:5000/ghcr" }).keda).toMatchObject({ mode: "install", imageRegistry: "mirror.internal:5000/ghcr" });
    expect(configProblems(() => parseClusterConfig({ context: "x", keda: "helm", kedaImageRegistry: "https://mirror" }))).toEqual([
      expect.stringMatching(/^cluster:keda: /),
      expect.stringMatching(/^cluster:kedaImageRegistry: must be a registry host/),
    ]);
  });

  test("a kubeconfig (a secret) instead of a context; a stable name keeps the provider when the context is renamed", () => {
    expect(parseClusterConfig({ kubeconfig: "apiVersion: v1 ..." })).toMatchObject({ hasKubeconfig: true, context: undefined, identifier: undefined });
    expect(parseClusterConfig({ context: "arn:aws:eks:eu-west-1:1:cluster/prod", name: "prod-eu" }).identifier).toBe("prod-eu");
    expect(parseClusterConfig({ context: "x", fixedUserIds: "false" }).fixedUserIds).toBe(false);
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
    expect(parseClusterConfig({ context: "x", dns: JSON.stringify({ cidrs: ["10.96.0.10/32"] }) }).dns).toMatchObject({ cidrs: ["10.96.0.10/32"], ports: [53] });
    expect(configProblems(() => parseClusterConfig({ context: "x", dns: JSON.stringify({ ports: [53] }) }))).toEqual([expect.stringMatching(/^cluster:dns: /)]);
    // NodeLocal DNSCache cannot be allowed without the Service IP pods query.
    expect(configProblems(() => parseClusterConfig({ context: "x", dns: JSON.stringify({ preset: "node-local-dns" }) }))).toEqual([expect.stringMatching(/^cluster:dns \[serviceIP\]: required with node-local-dns/)]);
    expect(parseClusterConfig({ context: "x", dns: JSON.stringify({ preset: "node-local-dns", serviceIP: "fd00::a" }) }).dns.cidrs).toEqual(["fd00::a/128", "169.254.20.10/32"]);
  });
});

describe("the provider", () => {
  test("server-side apply with adoption, forced conflicts, in-place ConfigMaps and Secrets, an identity only when named", () => {
    const args = providerArgs(parseClusterConfig({ context: "kind-dev" }));
    expect(args).toEqual({
      context: "kind-dev",
      enableServerSideApply: true,
      upsertExistingObjects: true,
      enablePatchForce: true,
      enableConfigMapMutable: true,
      enableSecretMutable: true,
    });
    expect(providerArgs(parseClusterConfig({ context: "kind-dev", name: "dev" })).clusterIdentifier).toBe("dev");
    expect(providerArgs(parseClusterConfig({ context: "kind-dev", forceConflicts: "false" })).enablePatchForce).toBe(false);
    expect(providerArgs(parseClusterConfig({ kubeconfig: "k" }), "contents")).toMatchObject({ kubeconfig: "contents" });
  });
});

describe("DNS egress", () => {
  test("pods by namespace and labels, NodeLocal DNSCache by the kube-dns Service IP and the link-local address, on UDP and TCP", () => {
    expect(dnsEgressRules(resolveDns({ preset: "node-local-dns", serviceIP: "10.96.0.10", localIP: "169.254.20.10", ports: [53] }))).toEqual([
      {
        to: [
          { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } },
          { ipBlock: { cidr: "10.96.0.10/32" } },
          { ipBlock: { cidr: "169.254.20.10/32" } },
        ],
        ports: [
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ],
      },
    ]);
    expect(dnsEgressRules(resolveDns("openshift"))[0]?.ports).toEqual([
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
