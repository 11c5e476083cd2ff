// The deployed rate-limit store and what the gateway's NetworkPolicy may reach, as pure builders.
import { dnsPreset } from "../platform/cluster-config";
import { buildNetworkPolicySpec, egressProblem, upstreamPeers } from "./network";
import { buildRedisDeploymentSpec, buildRedisNetworkPolicySpec, redisConf, redisUrl } from "./redis-builders";

describe("the deployed rate-limit store", () => {
  test("password in the config file (not on the command line), no persistence, bounded memory", () => {
    const conf = redisConf("s3cr3t");
    expect(conf).toContain("requirepass s3cr3t\n");
    expect(conf).toContain('save ""\n');
    expect(conf).toContain("appendonly no\n");
    expect(conf).toMatch(/maxmemory 64mb\nmaxmemory-policy volatile-ttl/);
    const spec = buildRedisDeploymentSpec({ image: "valkey/valkey:8.1-alpine", configDigest: "abc", secretName: "gateway-redis" });
    const c = spec.template.spec.containers[0];
    expect(c?.command).toEqual(["valkey-server", "/etc/valkey/valkey.conf"]);
    expect(JSON.stringify(spec)).not.toContain("s3cr3t");
    expect(c?.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(spec.template.metadata.annotations).toEqual({ "checksum/redis-config": "abc" });
    expect(spec.strategy).toEqual({ type: "Recreate" });
  });

  test("URL under the cluster domain, password escaped", () => {
    expect(redisUrl("a/b@c", "ai-gateway", "corp.internal")).toBe("redis://:a%2Fb%40c@gateway-redis.ai-gateway.svc.corp.internal:6379/0");
  });

  test("only the gateway's pods reach it, and it reaches nothing", () => {
    expect(buildRedisNetworkPolicySpec()).toEqual({
      podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway-redis", "app.kubernetes.io/instance": "gateway-redis" } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "gateway" } } }], ports: [{ protocol: "TCP", port: 6379 }] }],
      egress: [],
    });
  });
});

describe("upstream peers", () => {
  const catalog = {
    models: [
      { id: "a", category: "generative" as const, upstream: { mode: "dns" as const, host: "model-a.serving.svc.corp.internal", port: 8000 } },
      { id: "b", category: "generative" as const, upstream: { mode: "pool" as const, url: "http://igw.gateway-system.svc:80/b" } },
      { id: "c", category: "generative" as const, upstream: { mode: "endpoints" as const, endpoints: [{ url: "http://10.0.0.9:8000" }, { url: "https://vllm.example.com" }] } },
    ],
  };

  test("Services by namespace (any cluster domain), IPs by address and port, the rest is external", () => {
    expect(upstreamPeers(catalog)).toEqual({ namespaces: ["gateway-system", "serving"], addresses: [{ cidr: "10.0.0.9/32", port: 8000 }], external: ["vllm.example.com"] });
  });

  test("an external name needs extraEgress; with it, the policy allows the listed addresses", () => {
    expect(egressProblem(upstreamPeers(catalog), [])).toMatch(/^gateway:extraEgress: required: .*vllm\.example\.com/);
    const spec = buildNetworkPolicySpec({
      servingNamespace: "serving",
      upstreams: upstreamPeers(catalog),
      extraEgress: [{ cidr: "203.0.113.0/24", ports: [443] }],
      monitoringNamespace: "monitoring",
      dns: dnsPreset("kube-dns"),
      redis: undefined,
    });
    expect(spec.egress).toEqual(expect.arrayContaining([{ to: [{ ipBlock: { cidr: "203.0.113.0/24" } }], ports: [{ protocol: "TCP", port: 443 }] }]));
  });
});
