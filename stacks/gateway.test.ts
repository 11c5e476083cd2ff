// The gateway program on Pulumi's mocks: what it declares for a given configuration, and what the keys do.
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { ApiKeysFileSchema } from "../gateway/src/auth/api-keys";
import type { CatalogInput } from "../gateway/src/config/catalog";
import { gatewayConfig, SECRET_KEYS, TEST_CATALOG, TEST_KEYS, TEST_REDIS_URL } from "../infra/gateway/testing";
import { isKubernetesObject, toManifest, validateKubernetesObject } from "../infra/platform/k8s-validate";
import { isSecretValue, redactSecrets, type ResourceRecord, revealSecrets, runWithMocks, SECRET_PLACEHOLDER } from "../infra/platform/mocks";
import { parseStackYaml } from "../infra/platform/stack-config";
import { withAliases } from "../infra/gateway/config";
import { render } from "../infra/platform/render";
import type { GatewayOutputs } from "./gateway";

/** What the serving part of the same program hands the gateway. */
type ServingSupply = { catalog: CatalogInput; namespace: string };
import { PROGRAM_SECRET_KEYS } from "./render";

interface Run {
  readonly rs: ResourceRecord[];
  readonly out: GatewayOutputs;
  /** Resolved `apiKeys` output. */
  readonly keys: Record<string, string>;
  readonly keysSecret: boolean;
}

const value = <T>(o: pulumi.Output<T>) => new Promise<T>((resolve) => o.apply((v) => (resolve(v), v)));

/** The gateway part alone with a given serving supply (as the serving part of the same program would hand it). */
async function deployWithSupply(supply: ServingSupply): Promise<GatewayOutputs> {
  const { deployGateway, planGateway } = await import("./gateway");
  const { createCluster } = await import("../infra/platform/cluster");
  const { loadClusterConfig } = await import("../infra/platform/cluster-config");
  const { createDigestKey } = await import("../infra/platform/secret-digest");
  const { loadGatewayConfig, loadGatewaySecrets } = await import("../infra/gateway");
  const plan = planGateway(loadGatewayConfig(), supply);
  const secrets = loadGatewaySecrets();
  return deployGateway({ cluster: createCluster(loadClusterConfig()), plan, redisUrl: secrets.redisUrl, usageLedgerKeys: secrets.usageLedger, crds: { gatewayApi: [], certManager: [] }, digestKey: createDigestKey() });
}

async function run(overrides: Record<string, string | undefined> = {}, serving?: () => ServingSupply): Promise<Run> {
  const { resources, outputs } = await runWithMocks(
    async () => {
      // Import after the mocks are installed, as Pulumi's testing guide requires.
      const out = serving ? await deployWithSupply(serving()) : (await import("./program")).program().gateway;
      if (!out) throw new Error("gateway not deployed");
      return { out, keys: await value(out.apiKeys), keysSecret: await pulumi.isSecret(out.apiKeys) };
    },
    { config: gatewayConfig(overrides), secretKeys: SECRET_KEYS },
  );
  return { rs: resources, ...outputs };
}

const named = (rs: ResourceRecord[], type: string, name: string) => {
  const r = rs.find((x) => x.type === type && x.name === name);
  if (!r) throw new Error(`no ${type} ${name}; have ${rs.map((x) => `${x.type} ${x.name}`).join(", ")}`);
  return r;
};
const T = {
  ns: "kubernetes:core/v1:Namespace",
  cm: "kubernetes:core/v1:ConfigMap",
  secret: "kubernetes:core/v1:Secret",
  deploy: "kubernetes:apps/v1:Deployment",
  pdb: "kubernetes:policy/v1:PodDisruptionBudget",
  hpa: "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
  svc: "kubernetes:core/v1:Service",
  np: "kubernetes:networking.k8s.io/v1:NetworkPolicy",
  bytes: "random:index/randomBytes:RandomBytes",
} as const;

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are read field by field */
const manifest = (rs: ResourceRecord[], type: string, name = "gateway") => toManifest(named(rs, type, name)) as any;
const podTemplate = (rs: ResourceRecord[]) => manifest(rs, T.deploy).spec.template;
const container = (rs: ResourceRecord[]) => podTemplate(rs).spec.containers[0];
const keysFileOf = (rs: ResourceRecord[]) =>
  ApiKeysFileSchema.parse(parse((revealSecrets(named(rs, T.secret, "gateway-api-keys").inputs) as any).stringData["keys.yaml"] as string));
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * The gateway part rendered offline (as `npm run render` does) with `config` over an image and TEST_KEYS: each manifest
 * by file name, everything written as one text, and the keys it minted.
 */
async function renderGateway(config: Record<string, unknown>, secretKeys: string[] = []) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "render-gateway-"));
  try {
    let keys: Record<string, string> = {};
    await render({
      stack: "dev",
      out,
      projectRoot: path.resolve(__dirname, ".."),
      project: "ai-platform",
      knownSecretKeys: PROGRAM_SECRET_KEYS,
      env: {
        PULUMI_CONFIG: JSON.stringify({ "gateway:image": "registry.example.com/ai-platform/gateway:0.1.0", "gateway:apiKeys": TEST_KEYS, ...config }),
        ...(secretKeys.length > 0 ? { PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(secretKeys) } : {}),
      },
      program: async () => {
        const gateway = await deployWithSupply({ catalog: TEST_CATALOG, namespace: "app-serving" });
        gateway.apiKeys.apply((k) => (keys = k));
        return gateway;
      },
    });
    const dir = path.join(out, "manifests");
    const manifests = Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
    return { manifests, tree: Object.values(manifests).join("\n") + fs.readFileSync(path.join(out, "resources.json"), "utf8"), keys };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

describe("gateway on mocks, standalone with the fixture configuration", () => {
  let r: Run;
  beforeAll(async () => {
    r = await run();
  });

  test("declares the namespace, catalog, keys Secret, one random per key, Deployment, PDB, HPA, Service, NetworkPolicy, the rate-limit store", () => {
    const list = r.rs.filter((x) => x.custom).map((x) => `${x.type} ${x.name}`).sort();
    expect(list).toEqual(
      [
        "pulumi:providers:kubernetes cluster",
        `${T.ns} ai-gateway`,
        // team-a has limits and the gateway may run 6 replicas: gateway:redis auto deploys the shared store.
        `${T.secret} gateway-redis`,
        `${T.deploy} gateway-redis`,
        `${T.svc} gateway-redis`,
        `${T.np} gateway-redis`,
        "random:index/randomPassword:RandomPassword gateway-redis-password",
        // The secret every replica signs stored-response ids with, and its Secret.
        "random:index/randomPassword:RandomPassword gateway-response-id-secret",
        `${T.secret} gateway-response-ids`,
        // The stack's key for secret digests on pod templates.
        "random:index/randomBytes:RandomBytes secret-digest-key",
        `${T.cm} gateway-catalog`,
        `${T.secret} gateway-api-keys`,
        `${T.bytes} gateway-key-team-a`,
        `${T.bytes} gateway-key-team-b`,
        `${T.bytes} gateway-key-batch`,
        `${T.deploy} gateway`,
        `${T.pdb} gateway`,
        `${T.hpa} gateway`,
        `${T.svc} gateway`,
        `${T.np} gateway`,
      ].sort(),
    );
    expect(named(r.rs, "ai-platform:gateway:Gateway", "gateway").custom).toBe(false);
  });

  test("every Kubernetes object validates against the Kubernetes OpenAPI schema and lives in the gateway namespace", () => {
    const objects = r.rs.filter(isKubernetesObject);
    expect(objects).toHaveLength(13);
    for (const o of objects) {
      expect(() => validateKubernetesObject(toManifest(o))).not.toThrow();
      if (o.type !== T.ns) expect([o.type, (toManifest(o).metadata as { namespace?: string }).namespace]).toEqual([o.type, "ai-gateway"]);
    }
  });

  test("Deployment: image, ports, probes on the health endpoints, resources, drain settings", () => {
    const d = manifest(r.rs, T.deploy);
    const c = container(r.rs);
    // The HPA owns the replica count: server-side apply must not take the field back on every `pulumi up`.
    expect(d.spec).not.toHaveProperty("replicas");
    expect(named(r.rs, T.deploy, "gateway").ignoreChanges).toEqual([]);
    expect(c.image).toBe("registry.example.com/ai-platform/gateway:0.1.0");
    expect(c.ports).toEqual([
      { name: "http", containerPort: 8080, protocol: "TCP" },
      { name: "metrics", containerPort: 9090, protocol: "TCP" },
    ]);
    // The operations listener: client connections cannot fill it.
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "metrics" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "metrics" });
    expect(c.resources).toEqual({ requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "2", memory: "512Mi" } });
    const env = Object.fromEntries((c.env as { name: string; value?: string }[]).map((e) => [e.name, e.value]));
    expect(env).toEqual({
      PORT: "8080",
      GATEWAY_METRICS_PORT: "9090",
      GATEWAY_CATALOG: "/etc/gateway/catalog/catalog.yaml",
      GATEWAY_KEYS_FILE: "/etc/gateway/keys/keys.yaml",
      GATEWAY_DRAIN_DELAY_MS: "5000",
      GATEWAY_SHUTDOWN_GRACE_MS: "30000",
      LOG_LEVEL: "info",
    });
    // SIGKILL only after the drain delay and the whole shutdown grace.
    expect(podTemplate(r.rs).spec.terminationGracePeriodSeconds).toBeGreaterThan(5 + 30);
  });

  test("hardened pod: non-root, read-only root filesystem, no capabilities, RuntimeDefault seccomp, tmp emptyDir", () => {
    const spec = podTemplate(r.rs).spec;
    expect(container(r.rs).securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.volumes).toContainEqual({ name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } });
    expect(container(r.rs).volumeMounts).toEqual([
      { name: "catalog", mountPath: "/etc/gateway/catalog", readOnly: true },
      { name: "keys", mountPath: "/etc/gateway/keys", readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
    ]);
    // Whole-directory mounts: a subPath mount would never see a Secret update (no hot reload).
    for (const m of container(r.rs).volumeMounts) expect(m.subPath).toBeUndefined();
    expect(spec.topologySpreadConstraints.map((t: { topologyKey: string }) => t.topologyKey)).toEqual(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]);
  });

  test("pod labels make the collector ship its logs; annotations make the metrics server scrape it", () => {
    const { labels, annotations } = podTemplate(r.rs).metadata;
    expect(labels).toEqual({
      "ai-platform.io/platform": "ai-platform",
      "app.kubernetes.io/name": "gateway",
      "app.kubernetes.io/instance": "gateway",
      "app.kubernetes.io/component": "gateway",
      "app.kubernetes.io/part-of": "app-serving",
      "app.kubernetes.io/managed-by": "pulumi",
    });
    expect(annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics" });
    expect(Object.keys(annotations).sort()).toEqual(["checksum/catalog", "checksum/redis-url", "checksum/response-id-secret", "prometheus.io/path", "prometheus.io/port", "prometheus.io/scrape"]);
  });

  test("the catalog is mounted from a ConfigMap and its checksum is on the pod template", () => {
    const text = manifest(r.rs, T.cm, "gateway-catalog").data["catalog.yaml"] as string;
    expect(parse(text)).toEqual(TEST_CATALOG);
    expect(podTemplate(r.rs).metadata.annotations["checksum/catalog"]).toBe(sha256(text));
    expect(podTemplate(r.rs).spec.volumes).toContainEqual({ name: "catalog", configMap: { name: "gateway-catalog" } });
  });

  test("PDB, HPA (autoscaling/v2 on CPU) and Service (80 → http, plus metrics)", () => {
    const selector = { matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "gateway" } };
    expect(manifest(r.rs, T.pdb).spec).toEqual({ maxUnavailable: 1, selector });
    const hpa = manifest(r.rs, T.hpa).spec;
    expect(hpa).toMatchObject({ scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "gateway" }, minReplicas: 2, maxReplicas: 6 });
    expect(hpa.metrics).toEqual([{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }]);
    expect(manifest(r.rs, T.svc).spec).toEqual({
      type: "ClusterIP",
      selector: selector.matchLabels,
      ports: [
        { name: "http", port: 80, targetPort: "http", protocol: "TCP" },
        { name: "metrics", port: 9090, targetPort: "metrics", protocol: "TCP" },
      ],
    });
  });

  test("NetworkPolicy: API from the cluster, metrics from monitoring; egress to serving, DNS, the rate-limit store, nothing else", () => {
    const np = manifest(r.rs, T.np).spec;
    expect(np.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(np.ingress).toEqual([
      { from: [{ namespaceSelector: {} }], ports: [{ protocol: "TCP", port: 8080 }] },
      { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }], ports: [{ protocol: "TCP", port: 9090 }] },
    ]);
    expect(np.egress).toEqual([
      { to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "app-serving" } } }] },
      {
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
        ports: [
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ],
      },
      { to: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway-redis", "app.kubernetes.io/instance": "gateway-redis" } } }], ports: [{ protocol: "TCP", port: 6379 }] },
    ]);
  });

  test("keys: exported as a secret output, sk- + 43 base64url characters each", () => {
    expect(r.keysSecret).toBe(true);
    expect(Object.keys(r.keys).sort()).toEqual(["batch", "team-a", "team-b"]);
    for (const k of Object.values(r.keys)) expect(k).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    expect(new Set(Object.values(r.keys)).size).toBe(3);
  });

  test("the Secret holds the keys file with hashes matching the exported keys, and the declared limits", () => {
    const file = keysFileOf(r.rs);
    expect(file.keys).toEqual([
      { name: "team-a", sha256: sha256(r.keys["team-a"] as string), models: ["qwen3-8b"], rpm: 60, tpm: 100000 },
      { name: "team-b", sha256: sha256(r.keys["team-b"] as string), expiresAt: "2027-06-30T00:00:00Z" },
      { name: "batch", sha256: sha256(r.keys.batch as string) },
    ]);
    const secret = named(r.rs, T.secret, "gateway-api-keys");
    // Hashes only, but derived from the secret random bytes: the engine stores and shows the data as a secret.
    expect(isSecretValue(secret.inputs.stringData) || isSecretValue((secret.inputs.stringData as Record<string, unknown>)["keys.yaml"])).toBe(true);
    expect(redactSecrets(secret.inputs.stringData)).toEqual({ "keys.yaml": "[secret]" });
    expect(podTemplate(r.rs).spec.volumes).toContainEqual({ name: "keys", secret: { secretName: "gateway-api-keys", defaultMode: 0o440 } });
  });

  test("no plaintext key anywhere in what the program declares, not even unredacted", () => {
    const everything = JSON.stringify(r.rs.map((x) => revealSecrets(x.inputs)));
    for (const key of Object.values(r.keys)) {
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(key.slice(3));
    }
  });

  test("removing the gateway removes it (an orphan would keep serving keys the stack can no longer revoke); only the namespace stays", () => {
    for (const x of r.rs.filter((y) => y.type.startsWith("kubernetes:"))) expect([x.type, x.name, x.retainOnDelete]).toEqual([x.type, x.name, x.type === T.ns]);
    for (const x of r.rs.filter((y) => y.type.startsWith("random:"))) expect(x.retainOnDelete).toBe(false);
  });

  test("the deployed store's password lives in its Secret only; the gateway reads the URL from it", () => {
    const secret = named(r.rs, T.secret, "gateway-redis");
    const data = revealSecrets(secret.inputs.stringData) as Record<string, string>;
    const password = /requirepass (\S+)/.exec(data["valkey.conf"] ?? "")?.[1] ?? "";
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(data.url).toBe(`redis://:${password}@gateway-redis.ai-gateway.svc.cluster.local:6379/0`);
    expect(redactSecrets(secret.inputs.stringData)).toEqual({ url: "[secret]", "valkey.conf": "[secret]" });
    for (const x of r.rs.filter((y) => y !== secret && y.type !== "random:index/randomPassword:RandomPassword")) {
      expect([x.type, x.name, JSON.stringify(revealSecrets(x.inputs)).includes(password)]).toEqual([x.type, x.name, false]);
    }
    expect(container(r.rs).env).toContainEqual({ name: "GATEWAY_REDIS_URL", valueFrom: { secretKeyRef: { name: "gateway-redis", key: "url" } } });
  });

  test("every Kubernetes object goes through the stack's provider", () => {
    for (const x of r.rs.filter((y) => y.type.startsWith("kubernetes:"))) expect([x.type, x.name, x.provider]).toEqual([x.type, x.name, "cluster"]);
  });
  test("the response-id secret: generated, only in a Secret (as a secret), read by every replica from it", async () => {
    const secret = named(r.rs, T.secret, "gateway-response-ids");
    expect(redactSecrets(secret.inputs.stringData)).toEqual({ secret: "[secret]" });
    expect((revealSecrets(secret.inputs.stringData) as { secret: string }).secret).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(container(r.rs).env).toContainEqual({ name: "GATEWAY_RESPONSE_ID_SECRET", valueFrom: { secretKeyRef: { name: "gateway-response-ids", key: "secret" } } });
  });

});

describe("key lifecycle", () => {
  let base: Run;
  beforeAll(async () => {
    base = await run();
  });

  test("bumping rotation issues a new secret for that key only", async () => {
    const keys = TEST_KEYS.map((k) => (k.name === "team-a" ? { ...k, rotation: 1 } : k));
    const next = await run({ "gateway:apiKeys": JSON.stringify(keys) });
    expect(next.keys["team-a"]).not.toBe(base.keys["team-a"]);
    expect(next.keys["team-b"]).toBe(base.keys["team-b"]);
    expect(next.keys.batch).toBe(base.keys.batch);
    expect(named(next.rs, T.bytes, "gateway-key-team-a").inputs.keepers).toEqual({ name: "team-a", rotation: "1" });
  });

  test("removing an entry revokes it: no random resource, no hash, no output", async () => {
    const next = await run({ "gateway:apiKeys": JSON.stringify(TEST_KEYS.filter((k) => k.name !== "team-b")) });
    expect(next.rs.some((x) => x.name === "gateway-key-team-b")).toBe(false);
    expect(keysFileOf(next.rs).keys.map((k) => k.name)).toEqual(["team-a", "batch"]);
    expect(Object.keys(next.keys)).toEqual(["team-a", "batch"]);
  });

  test("key changes do not touch the pod template (the process hot-reloads the file); catalog changes do", async () => {
    // (The rate-limit store stays: with no limited key left, `auto` would drop it, and that is a pod change.)
    const fewer = await run({ "gateway:apiKeys": JSON.stringify([]), "gateway:redis": "deploy" });
    expect(podTemplate(fewer.rs)).toEqual(podTemplate(base.rs));
    expect(keysFileOf(fewer.rs).keys).toEqual([]);
    const catalog: CatalogInput = { models: [...TEST_CATALOG.models, { id: "llama", category: "generative", upstream: { mode: "pool", url: "http://llama-pool.app-serving.svc:80" } }] };
    const changed = await run({ "gateway:catalog": JSON.stringify(catalog) });
    const before = podTemplate(base.rs).metadata.annotations["checksum/catalog"];
    const after = podTemplate(changed.rs).metadata.annotations["checksum/catalog"];
    expect(after).not.toBe(before);
    expect(after).toBe(sha256(manifest(changed.rs, T.cm, "gateway-catalog").data["catalog.yaml"]));
  });
});

describe("options", () => {
  test("Redis: URL only in a Secret (as a secret), env from it, egress to Redis added", async () => {
    const r = await run({ "gateway:redisUrl": TEST_REDIS_URL, "gateway:redisEgress": JSON.stringify({ namespace: "redis", podLabels: { "app.kubernetes.io/name": "redis" } }) });
    const secret = named(r.rs, T.secret, "gateway-redis");
    expect(revealSecrets(secret.inputs.stringData)).toEqual({ url: TEST_REDIS_URL });
    expect(redactSecrets(secret.inputs.stringData)).toEqual({ url: "[secret]" });
    expect(container(r.rs).env).toContainEqual({ name: "GATEWAY_REDIS_URL", valueFrom: { secretKeyRef: { name: "gateway-redis", key: "url" } } });
    for (const x of r.rs.filter((y) => y !== secret)) expect(JSON.stringify(revealSecrets(x.inputs))).not.toContain("redis-pass-Hq7vX2");
    expect(manifest(r.rs, T.np).spec.egress[2]).toEqual({
      to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "redis" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "redis" } } }],
      ports: [{ protocol: "TCP", port: 6379 }],
    });
    expect(manifest(r.rs, T.np).spec.egress).toHaveLength(3);
  });

  test("Redis outside the cluster: egress to its CIDR and port only", async () => {
    const r = await run({ "gateway:redisUrl": "rediss://cache.example.com:6380", "gateway:redisEgress": JSON.stringify({ cidr: "10.20.0.7/32", port: 6380 }) });
    expect(manifest(r.rs, T.np).spec.egress[2]).toEqual({ to: [{ ipBlock: { cidr: "10.20.0.7/32" } }], ports: [{ protocol: "TCP", port: 6380 }] });
  });

  test("API ingress from the listed namespaces only", async () => {
    const r = await run({ "gateway:ingressNamespaces": JSON.stringify(["envoy-gateway-system", "apps"]) });
    expect(manifest(r.rs, T.np).spec.ingress[0].from).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "envoy-gateway-system" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "apps" } } },
    ]);
  });

  test("pool mode through an inference gateway in another namespace: that namespace is an allowed upstream too", async () => {
    const catalog: CatalogInput = {
      models: [...TEST_CATALOG.models, { id: "llama", category: "generative", upstream: { mode: "pool", url: "http://inference-gateway.gateway-system.svc.cluster.local" } }],
    };
    const r = await run({ "gateway:catalog": JSON.stringify(catalog) });
    expect(manifest(r.rs, T.np).spec.egress[0].to).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "app-serving" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "gateway-system" } } },
    ]);
  });

  test("namespaces, replicas, resources, log level and extra settings reach the objects", async () => {
    const r = await run({
      "gateway:namespace": "llm",
      "gateway:servingNamespace": "models",
      "gateway:replicas": "3",
      "gateway:maxReplicas": "9",
      "gateway:resources": JSON.stringify({ limits: { memory: "1Gi" } }),
      "gateway:logLevel": "debug",
      "gateway:shutdownGraceSeconds": "120",
      "gateway:env": JSON.stringify({ GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: "900000" }),
      "gateway:imagePullSecrets": JSON.stringify(["regcred"]),
    });
    expect(named(r.rs, T.ns, "llm").inputs.metadata).toMatchObject({ name: "llm" });
    expect(manifest(r.rs, T.deploy).metadata.namespace).toBe("llm");
    expect(manifest(r.rs, T.hpa).spec).toMatchObject({ minReplicas: 3, maxReplicas: 9 });
    expect(container(r.rs).resources.limits).toEqual({ cpu: "2", memory: "1Gi" });
    expect(container(r.rs).env).toEqual(expect.arrayContaining([{ name: "LOG_LEVEL", value: "debug" }, { name: "GATEWAY_SHUTDOWN_GRACE_MS", value: "120000" }, { name: "GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS", value: "900000" }]));
    expect(podTemplate(r.rs).spec.terminationGracePeriodSeconds).toBeGreaterThan(125);
    expect(podTemplate(r.rs).spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    // The configured serving namespace, plus the one the fixture catalog's Services name.
    expect(manifest(r.rs, T.np).spec.egress[0].to).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "models" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "app-serving" } } },
    ]);
  });
});

describe("catalog source and configuration errors", () => {
  const fromServing = (): ServingSupply => ({ catalog: TEST_CATALOG, namespace: "serving-ns" });

  test("the serving part's catalog and namespace are used when it is in the program", async () => {
    const r = await run({ "gateway:catalog": undefined }, fromServing);
    expect(parse(manifest(r.rs, T.cm, "gateway-catalog").data["catalog.yaml"])).toEqual(TEST_CATALOG);
    expect(manifest(r.rs, T.np).spec.egress[0].to[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"]).toBe("serving-ns");
  });

  test("gateway:aliases join the serving part's catalog in the gateway's catalog file", async () => {
    const aliases = [{ id: "chat", models: ["qwen3-8b"] }];
    const r = await run({ "gateway:catalog": undefined, "gateway:aliases": JSON.stringify(aliases) }, fromServing);
    expect(parse(manifest(r.rs, T.cm, "gateway-catalog").data["catalog.yaml"])).toEqual({ ...TEST_CATALOG, aliases: [{ ...aliases[0], listed: true }] });
  });

  test("gateway:corsOrigins reach the gateway process as GATEWAY_CORS_ORIGINS; none, no variable", async () => {
    const r = await run({ "gateway:corsOrigins": JSON.stringify(["https://chat.example.com", "http://localhost:5173"]) });
    expect(container(r.rs).env).toContainEqual({ name: "GATEWAY_CORS_ORIGINS", value: "https://chat.example.com,http://localhost:5173" });
    const plain = await run();
    expect(container(plain.rs).env.map((e: { name: string }) => e.name)).not.toContain("GATEWAY_CORS_ORIGINS");
  });

  test("without gateway:exposure no TLS Secret reaches the pod: no certificate volume, no GATEWAY_TLS_CERT_FILE", async () => {
    const { rs } = await run();
    expect(podTemplate(rs).spec.volumes.map((v: { name: string }) => v.name)).toEqual(["catalog", "keys", "tmp"]);
    expect(container(rs).env.map((e: { name: string }) => e.name)).not.toContain("GATEWAY_TLS_CERT_FILE");
  });

  test("gateway:traces sets the exporter and opens egress to the collector only; absent, neither", async () => {
    const traces = { endpoint: "http://otel-collector.observability:4318/v1/traces", sampleRatio: 0.25, egress: { namespace: "observability", podLabels: { app: "otel-collector" } } };
    const r = await run({ "gateway:traces": JSON.stringify(traces) });
    expect(container(r.rs).env).toEqual(
      expect.arrayContaining([
        { name: "GATEWAY_OTLP_TRACES_ENDPOINT", value: traces.endpoint },
        { name: "GATEWAY_TRACE_SAMPLE_RATIO", value: "0.25" },
      ]),
    );
    expect(manifest(r.rs, T.np).spec.egress).toContainEqual({
      to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } }, podSelector: { matchLabels: { app: "otel-collector" } } }],
      ports: [{ protocol: "TCP", port: 4318 }],
    });
    const plain = await run();
    expect(container(plain.rs).env.map((e: { name: string }) => e.name)).not.toContain("GATEWAY_OTLP_TRACES_ENDPOINT");
    expect(JSON.stringify(manifest(plain.rs, T.np).spec.egress)).not.toContain("4318");
    const err = (await run({ "gateway:traces": JSON.stringify({ endpoint: "otel:4318" }) }).catch((e: Error) => e)) as Error;
    expect(err.message).toContain("gateway:traces [endpoint]");
    expect(err.message).toContain("gateway:traces [egress]: must be { namespace, podLabels?, port? } or { cidr, port? }");
  });

  test("aliases the catalog cannot serve fail the preview naming gateway:aliases", async () => {
    const aliases = [{ id: "chat", models: ["qwen3-8b", "llama-70b"] }, { id: "bge-m3", models: ["qwen3-8b"] }];
    const err = (await run({ "gateway:aliases": JSON.stringify(aliases) }).catch((e: Error) => e)) as Error;
    expect(err.message).toContain(`gateway:aliases [0.models.1]: "llama-70b" is not a model or adapter of the catalog`);
    expect(err.message).toContain(`gateway:aliases [1.id]: "bge-m3" is a model id; an alias needs a name of its own`);
  });

  test("an alias named like a LoRA adapter of the serving part's catalog fails the preview naming gateway:aliases", async () => {
    const [first, ...rest] = TEST_CATALOG.models;
    const lora = { maxLoras: 1, adapters: [{ id: "qwen3-8b-sql", path: "/model-cache/lora-adapters/qwen3-8b-sql", loading: "on-demand" as const }] };
    const catalog = { ...TEST_CATALOG, models: [{ ...first!, lora }, ...rest] };
    const aliases = [{ id: "qwen3-8b-sql", models: [first!.id] }];
    const err = (await run({ "gateway:catalog": undefined, "gateway:aliases": JSON.stringify(aliases) }, () => ({ catalog, namespace: "serving-ns" })).catch((e: Error) => e)) as Error;
    expect(err.message).toContain(`gateway:aliases [0.id]: "qwen3-8b-sql" is a LoRA adapter of "${first!.id}"; an alias needs a name of its own`);
  });

  test("a catalog both from serving and from gateway:catalog is refused", async () => {
    await expect(run({}, fromServing)).rejects.toThrow(/gateway:catalog: must come from one source, not the serving part of this program and gateway:catalog/);
  });

  test("a standalone gateway without gateway:catalog is refused", async () => {
    await expect(run({ "gateway:catalog": undefined })).rejects.toThrow(/gateway:catalog: required for a standalone gateway/);
  });

  test("an invalid configuration fails before anything is declared, naming every key", async () => {
    const err = (await run({ "gateway:image": undefined, "gateway:replicas": "-1", "gateway:apiKeys": JSON.stringify([{ name: "A" }]) }).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^Invalid stack configuration \(3 problems\):/);
    for (const key of ["gateway:image", "gateway:replicas", "gateway:apiKeys [0.name]"]) expect(err.message).toContain(key);
  });

  test("no gateway: namespace in the stack: nothing is declared", async () => {
    const { resources } = await runWithMocks(async () => (await import("./program")).program(), { config: { "platform:labelDomain": "ai-platform.io" } });
    expect(resources).toEqual([]);
  });
});

describe("usage ledger", () => {
  const MINIO = { bucket: "ai-platform-usage", s3Endpoint: "http://objectstore.app-shaide.svc.cluster.local:9000", egress: { namespace: "app-shaide", podLabels: { app: "minio" } } };
  const KEYS = { "gateway:usageLedgerAccessKeyId": "AKIALEDGERWRITER7", "gateway:usageLedgerSecretAccessKey": "wr1ter-S3cret-Zq8" };
  const ADMIN = { "gateway:usageLedgerAdminAccessKeyId": "AKIALEDGERADMIN9", "gateway:usageLedgerAdminSecretAccessKey": "adm1n-S3cret-Pw4" };
  const ROLE = { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/ai-gateway-ledger" };
  const JOB = "kubernetes:batch/v1:Job";
  const SA = "kubernetes:core/v1:ServiceAccount";

  test("static keys: only in Secrets (as secrets), the gateway's env reads them; the Job makes the bucket; egress to the store; the policy is an output", async () => {
    const r = await run({ "gateway:usageLedger": JSON.stringify({ ...MINIO, flushSeconds: 5 }), ...KEYS, ...ADMIN });
    const secret = named(r.rs, T.secret, "gateway-usage-ledger");
    expect(redactSecrets(secret.inputs.stringData)).toEqual({ AWS_ACCESS_KEY_ID: "[secret]", AWS_SECRET_ACCESS_KEY: "[secret]" });
    expect(revealSecrets(secret.inputs.stringData)).toEqual({ AWS_ACCESS_KEY_ID: "AKIALEDGERWRITER7", AWS_SECRET_ACCESS_KEY: "wr1ter-S3cret-Zq8" });
    const admin = named(r.rs, T.secret, "usage-ledger-bucket-admin");
    expect(redactSecrets(admin.inputs.stringData)).toEqual({ AWS_ACCESS_KEY_ID: "[secret]", AWS_SECRET_ACCESS_KEY: "[secret]" });
    for (const x of r.rs.filter((y) => y !== secret && y !== admin)) {
      const text = JSON.stringify(revealSecrets(x.inputs));
      expect([x.type, x.name, text.includes("wr1ter-S3cret-Zq8") || text.includes("adm1n-S3cret-Pw4")]).toEqual([x.type, x.name, false]);
    }

    const env = container(r.rs).env;
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "GATEWAY_LEDGER_BUCKET", value: "ai-platform-usage" },
        { name: "GATEWAY_LEDGER_S3_ENDPOINT", value: MINIO.s3Endpoint },
        { name: "GATEWAY_LEDGER_S3_REGION", value: "us-east-1" },
        { name: "GATEWAY_LEDGER_PREFIX", value: "ledger/" },
        { name: "GATEWAY_LEDGER_FLUSH_MS", value: "5000" },
        { name: "AWS_ACCESS_KEY_ID", valueFrom: { secretKeyRef: { name: "gateway-usage-ledger", key: "AWS_ACCESS_KEY_ID" } } },
        { name: "AWS_SECRET_ACCESS_KEY", valueFrom: { secretKeyRef: { name: "gateway-usage-ledger", key: "AWS_SECRET_ACCESS_KEY" } } },
      ]),
    );
    // Each pod is its own replica in the ledger: its name, never one set for all.
    expect(env.map((e: { name: string }) => e.name)).not.toContain("GATEWAY_REPLICA_NAME");
    expect(podTemplate(r.rs).metadata.annotations["checksum/usage-ledger-credentials"]).toMatch(/^[0-9a-f]{16}$/);
    expect(podTemplate(r.rs).spec).not.toHaveProperty("serviceAccountName");

    expect(manifest(r.rs, T.np).spec.egress).toContainEqual({
      to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "app-shaide" } }, podSelector: { matchLabels: { app: "minio" } } }],
      ports: [{ protocol: "TCP", port: 9000 }],
    });

    const job = manifest(r.rs, JOB, "usage-ledger-bucket");
    expect(job.metadata.annotations).toEqual({ "pulumi.com/replaceUnready": "true" });
    expect(job.spec.template.spec.containers[0].env).toContainEqual({ name: "AWS_SECRET_ACCESS_KEY", valueFrom: { secretKeyRef: { name: "usage-ledger-bucket-admin", key: "AWS_SECRET_ACCESS_KEY" } } });
    expect(manifest(r.rs, T.cm, "usage-ledger-bucket-script").data["usage-ledger-bucket.sh"]).toContain("put-bucket-lifecycle-configuration");
    // The gateway starts once the bucket and its rule are there.
    expect(named(r.rs, T.deploy, "gateway").dependsOn).toContain("usage-ledger-bucket");

    expect(r.out.usageLedgerPolicy).toEqual({
      Version: "2012-10-17",
      Statement: [
        expect.objectContaining({ Action: ["s3:PutObject", "s3:GetObject"], Resource: ["arn:aws:s3:::ai-platform-usage/ledger/*"] }),
        expect.objectContaining({ Action: ["s3:ListBucket"], Resource: ["arn:aws:s3:::ai-platform-usage"], Condition: { StringLike: { "s3:prefix": ["ledger/*"] } } }),
      ],
    });
    expect(pulumi.Output.isInstance(r.out.usageLedgerPolicy)).toBe(false);
    for (const o of r.rs.filter(isKubernetesObject)) expect(() => validateKubernetesObject(toManifest(o))).not.toThrow();
  });

  test("IRSA: the gateway's own service account carries the role, no keys Secret; without admin credentials no Job", async () => {
    const r = await run({ "gateway:usageLedger": JSON.stringify({ bucket: "usage", region: "eu-west-1", egress: { cidr: "52.218.0.0/17" }, serviceAccountAnnotations: ROLE }) });
    const sa = manifest(r.rs, SA, "gateway");
    expect(sa).toMatchObject({ metadata: { name: "gateway", namespace: "ai-gateway", annotations: ROLE }, automountServiceAccountToken: false });
    expect(podTemplate(r.rs).spec).toMatchObject({ serviceAccountName: "gateway", automountServiceAccountToken: false });
    expect(r.rs.filter((x) => x.name === "gateway-usage-ledger" || x.type === JOB)).toEqual([]);
    const names = container(r.rs).env.map((e: { name: string }) => e.name);
    expect(names).not.toContain("AWS_ACCESS_KEY_ID");
    expect(names).not.toContain("GATEWAY_LEDGER_S3_ENDPOINT");
    expect(manifest(r.rs, T.np).spec.egress).toContainEqual({ to: [{ ipBlock: { cidr: "52.218.0.0/17" } }], ports: [{ protocol: "TCP", port: 443 }] });
  });

  test("the Job with its own role: its own service account, no admin Secret", async () => {
    const r = await run({ "gateway:usageLedger": JSON.stringify({ bucket: "usage", egress: { cidr: "52.216.0.0/15" }, serviceAccountAnnotations: ROLE, bucketJobServiceAccountAnnotations: ROLE }) });
    expect(manifest(r.rs, SA, "usage-ledger-bucket").metadata.annotations).toEqual(ROLE);
    expect(manifest(r.rs, JOB, "usage-ledger-bucket").spec.template.spec.serviceAccountName).toBe("usage-ledger-bucket");
    expect(r.rs.filter((x) => x.name === "usage-ledger-bucket-admin")).toEqual([]);
  });

  test("without gateway:usageLedger: nothing of it, and no policy output", async () => {
    const r = await run();
    expect(r.rs.filter((x) => /usage-ledger/.test(x.name) || x.type === SA)).toEqual([]);
    expect(r.out).not.toHaveProperty("usageLedgerPolicy");
    expect(container(r.rs).env.map((e: { name: string }) => e.name).filter((n: string) => n.startsWith("GATEWAY_LEDGER"))).toEqual([]);
  });

  test("a key's budget reaches the keys file", async () => {
    const budget = { tokens: 10000, period: "month" };
    const r = await run({ "gateway:apiKeys": JSON.stringify([{ name: "team-a", budget }]) });
    expect(keysFileOf(r.rs).keys[0]?.budget).toEqual(budget);
  });

  test("an invalid combination fails before anything is declared, naming the keys", async () => {
    const err = (await run({ "gateway:usageLedger": JSON.stringify(MINIO), "gateway:usageLedgerAccessKeyId": "ledger-writer" }).catch((e: Error) => e)) as Error;
    expect(err.message).toContain("gateway:usageLedgerSecretAccessKey: required with gateway:usageLedger");
    expect(err.message).not.toContain("ledger-writer");
  });

  test("offline render: the keys are [secret] in the manifests and nowhere else", async () => {
    const { manifests, tree } = await renderGateway({ "gateway:usageLedger": MINIO, ...KEYS, ...ADMIN }, [...Object.keys(KEYS), ...Object.keys(ADMIN)]);
    const secretFile = "secret-ai-gateway-gateway-usage-ledger.yaml";
    expect(Object.keys(manifests)).toEqual(expect.arrayContaining([secretFile, "job-ai-gateway-usage-ledger-bucket.yaml"]));
    expect((parse(manifests[secretFile] as string) as { stringData: unknown }).stringData).toEqual({ AWS_ACCESS_KEY_ID: "[secret]", AWS_SECRET_ACCESS_KEY: "[secret]" });
    for (const v of [...Object.values(KEYS), ...Object.values(ADMIN)]) expect(tree).not.toContain(v);
  });
});

describe("offline render", () => {
  test("the gateway's objects are rendered with the keys file masked and no key anywhere", async () => {
    const { manifests, tree, keys } = await renderGateway({});
    expect(Object.keys(manifests)).toEqual(
      expect.arrayContaining([
        "namespace-ai-gateway.yaml",
        "configmap-ai-gateway-gateway-catalog.yaml",
        "secret-ai-gateway-gateway-api-keys.yaml",
        "deployment-ai-gateway-gateway.yaml",
        "poddisruptionbudget-ai-gateway-gateway.yaml",
        "horizontalpodautoscaler-ai-gateway-gateway.yaml",
        "service-ai-gateway-gateway.yaml",
        "networkpolicy-ai-gateway-gateway.yaml",
      ]),
    );
    const secret = parse(manifests["secret-ai-gateway-gateway-api-keys.yaml"] as string) as { stringData: unknown };
    expect(secret.stringData).toEqual({ "keys.yaml": "[secret]" });
    expect(Object.keys(keys)).toHaveLength(TEST_KEYS.length);
    for (const k of Object.values(keys)) expect(tree).not.toContain(k);
  });
});

describe("keys' model lists checked against the catalog at preview", () => {
  const previewOf = (config: Record<string, string>, stackOutputs?: Record<string, Record<string, unknown>>) =>
    runWithMocks(async () => (await import("./program")).program(), { config, secretKeys: SECRET_KEYS, preview: true, ...(stackOutputs ? { stackOutputs } : {}) }).then(
      () => undefined,
      (e: Error) => e,
    );
  const keys = (...models: string[][]) => JSON.stringify(models.map((m, i) => ({ name: `team-${i}`, models: m })));

  test("gateway:catalog: a name it does not serve fails the preview naming gateway:apiKeys, the key, the name and its close matches", async () => {
    const err = await previewOf(gatewayConfig({ "gateway:apiKeys": keys(["qwen3-8b"], ["qwen3-8b", "bge-m"]) }));
    expect(err?.message).toMatch(/^Invalid stack configuration \(1 problem\):/);
    expect(err?.message).toContain(`gateway:apiKeys [1.models.1]: key "team-1" names "bge-m", which is not a model, adapter or alias of the catalog; did you mean "bge-m3"?`);
  });

  test("the serving part's catalog: its adapters and gateway:aliases are names a key may list, anything else fails", async () => {
    const [first, ...rest] = TEST_CATALOG.models;
    const lora = { maxLoras: 1, adapters: [{ id: "qwen3-8b-sql", path: "/model-cache/lora-adapters/qwen3-8b-sql", loading: "on-demand" as const }] };
    const catalog = { ...TEST_CATALOG, models: [{ ...first!, lora }, ...rest] };
    const serving = () => ({ catalog, namespace: "serving-ns" });
    const aliases = JSON.stringify([{ id: "chat", models: ["qwen3-8b"] }]);
    const ok = await run({ "gateway:catalog": undefined, "gateway:aliases": aliases, "gateway:apiKeys": keys(["qwen3-8b-sql", "chat", "bge-m3"]) }, serving);
    expect(keysFileOf(ok.rs).keys[0]?.models).toEqual(["qwen3-8b-sql", "chat", "bge-m3"]);
    const err = (await run({ "gateway:catalog": undefined, "gateway:aliases": aliases, "gateway:apiKeys": keys(["qwen3-8b-sq1", "chat2"]) }, serving).catch((e: Error) => e)) as Error;
    expect(err.message).toContain(`gateway:apiKeys [0.models.0]: key "team-0" names "qwen3-8b-sq1", which is not a model, adapter or alias of the catalog; did you mean "qwen3-8b-sql", "qwen3-8b"?`);
    expect(err.message).toContain(`gateway:apiKeys [0.models.1]: key "team-0" names "chat2", which is not a model, adapter or alias of the catalog; did you mean "chat"?`);
  });

  test("gateway:servingStack: checked against that stack's catalog output when the preview reads it", async () => {
    const config = (models: string[]) => gatewayConfig({ "gateway:catalog": undefined, "gateway:servingStack": "acme/ai-platform/serving-prod", "gateway:apiKeys": keys(models) });
    const stackOutputs = { "acme/ai-platform/serving-prod": { serving: { catalog: TEST_CATALOG, namespace: "models-prod" } } };
    expect(await previewOf(config(["qwen3-8b", "bge-m3"]), stackOutputs)).toBeUndefined();
    const err = await previewOf(config(["qwen3-8b", "llama-3.3-70b-instruct"]), stackOutputs);
    expect(err?.message).toContain(
      `gateway:apiKeys [0.models.1]: key "team-0" names "llama-3.3-70b-instruct", which is not a model, adapter or alias of the catalog of gateway:servingStack acme/ai-platform/serving-prod (it serves "qwen3-8b", "bge-m3")`,
    );
  });

  const examples = path.join(__dirname, "examples");
  test.each(fs.readdirSync(examples).filter((f) => /^Pulumi\..+\.yaml$/.test(f)))("%s: every name in its keys' model lists is served", async (file) => {
    const text = fs.readFileSync(path.join(examples, file), "utf8");
    const stack = parseStackYaml(text, "ai-platform");
    // The secrets the file lists in its comments, as `pulumi config set --secret` would store them.
    const secrets = [...text.matchAll(/^#\s+pulumi config set --secret (\S+)/gm)].map((m) => m[1]!);
    const config = { ...stack.config, ...Object.fromEntries(secrets.map((k) => [k, SECRET_PLACEHOLDER])) };
    const { outputs: plan } = await runWithMocks(async () => (await import("./program")).planProgram(), { config, secretKeys: [...stack.secretKeys, ...secrets] });
    const gateway = plan?.gateway;
    if (!gateway || gateway.source.kind === "stack") throw new Error(`${file}: no gateway with a catalog known at preview`);
    const { keyModelProblems, servedNames } = await import("../infra/gateway/key-models");
    const catalog = withAliases(gateway.source.catalog, gateway.cfg.aliases);
    expect(keyModelProblems(gateway.cfg.apiKeys, catalog)).toEqual([]);
    for (const key of gateway.cfg.apiKeys) for (const name of key.models ?? []) expect(servedNames(catalog)).toContain(name);
  });
});
