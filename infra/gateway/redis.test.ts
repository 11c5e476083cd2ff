// The deployed rate-limit store and what the gateway's NetworkPolicy may reach, as pure builders; and the store's
// configuration file loaded by a real server.
import { type ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import Redis from "ioredis";
import { describeWithRedis } from "../../gateway/test/support/redis-server";
import { resolveDns } from "../platform/cluster-config";
import { buildNetworkPolicySpec, egressProblem, upstreamPeers } from "./network";
import { buildRedisDeploymentSpec, buildRedisNetworkPolicySpec, redisConf, redisUrl } from "./redis-builders";

describe("the deployed rate-limit store", () => {
  test("password in the config file (not on the command line), no persistence, bounded memory", () => {
    const conf = redisConf("s3cr3t");
    expect(conf).toContain("requirepass s3cr3t\n");
    expect(conf).toContain('save ""\n');
    expect(conf).toContain("appendonly no\n");
    expect(conf).toMatch(/maxmemory 64mb\nmaxmemory-policy volatile-ttl/);
    const spec = buildRedisDeploymentSpec({ image: "valkey/valkey:8.1-alpine", configDigest: "abc", secretName: "gateway-redis", fixedUserIds: true, labelDomain: "ai-platform.io" });
    const c = spec.template.spec.containers[0];
    expect(c?.command).toEqual(["valkey-server", "/etc/valkey/valkey.conf"]);
    expect(JSON.stringify(spec)).not.toContain("s3cr3t");
    expect(c?.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(spec.template.metadata.annotations).toEqual({ "checksum/redis-config": "abc" });
    // The platform label: the monitoring collector ships the store's log like the gateway's.
    expect(spec.template.metadata.labels["ai-platform.io/platform"]).toBe("ai-platform");
    expect(spec.strategy).toEqual({ type: "Recreate" });
    expect(spec.template.spec.securityContext).toMatchObject({ runAsUser: 999, runAsGroup: 1000, fsGroup: 1000 });
  });

  test("where the cluster assigns user ids (OpenShift), the pod sets none", () => {
    const spec = buildRedisDeploymentSpec({ image: "valkey/valkey:8.1-alpine", configDigest: "abc", secretName: "gateway-redis", fixedUserIds: false, labelDomain: "ai-platform.io" });
    for (const ctx of [spec.template.spec.securityContext, spec.template.spec.containers[0]?.securityContext]) {
      expect(ctx).toMatchObject({ runAsNonRoot: true });
      for (const id of ["runAsUser", "runAsGroup", "fsGroup"]) expect(ctx).not.toHaveProperty(id);
    }
  });

  test("URL under the cluster domain, password escaped", () => {
    expect(redisUrl("a/b@c", "ai-gateway", "corp.internal")).toBe("redis://:a%2Fb%40c@gateway-redis.ai-gateway.svc.corp.internal:6379/0");
  });

  test("only the gateway's pods reach it, and it reaches nothing: Egress with no rule, in the form the API server stores", () => {
    const spec = buildRedisNetworkPolicySpec();
    expect(spec).toEqual({
      podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway-redis", "app.kubernetes.io/instance": "gateway-redis" } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "gateway" } } }], ports: [{ protocol: "TCP", port: 6379 }] }],
    });
    // An empty egress list is dropped by the server (omitempty), so the live object would never equal what was sent.
    expect(spec).not.toHaveProperty("egress");
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
      dns: resolveDns("kube-dns"),
      redis: undefined,
    });
    expect(spec.egress).toEqual(expect.arrayContaining([{ to: [{ ipBlock: { cidr: "203.0.113.0/24" } }], ports: [{ protocol: "TCP", port: 443 }] }]));
  });
});

describeWithRedis("the generated server config, run by a real server", () => {
  // Valkey reads Redis' config syntax; Debian's redis-server stands in for it here (no container engine).
  let dir: string;
  let server: ChildProcess;
  let port: number;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "valkey-conf-"));
    const conf = path.join(dir, "valkey.conf");
    fs.writeFileSync(conf, redisConf("pw-Ab3dE6"));
    port = 20000 + Math.floor(Math.random() * 20000);
    // The file as generated; only where it listens and writes is moved into the test's scratch space.
    server = spawn("redis-server", [conf, "--port", String(port), "--bind", "127.0.0.1"], { cwd: dir, stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, "127.0.0.1", () => (socket.end(), resolve(true))).on("error", () => resolve(false));
      });
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(() => {
    server.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("refuses clients without the password, serves the gateway with it, persists nothing, evicts only expiring keys", async () => {
    const anonymous = new Redis({ port, host: "127.0.0.1", enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await expect(anonymous.ping()).rejects.toThrow(/NOAUTH/);
    anonymous.disconnect();
    const gateway = new Redis(`redis://:pw-Ab3dE6@127.0.0.1:${port}/0`);
    expect(await gateway.ping()).toBe("PONG");
    expect(await gateway.config("GET", "save")).toEqual(["save", ""]);
    expect(await gateway.config("GET", "appendonly")).toEqual(["appendonly", "no"]);
    expect(await gateway.config("GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "volatile-ttl"]);
    expect(await gateway.config("GET", "maxmemory")).toEqual(["maxmemory", String(64 * 1024 * 1024)]);
    gateway.disconnect();
  });
});
