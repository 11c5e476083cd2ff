// The `gateway:` key table, validated by one zod schema with one error message naming every offending key.
import * as fs from "fs";
import * as path from "path";
import { configProblems } from "../platform/config-testing";
import { parseStackYaml } from "../platform/stack-config";
import { DEFAULT_RESOURCES, parseGatewayConfig } from "./config";
import { gatewayConfig, rawGatewayNamespace, TEST_CATALOG, TEST_KEYS } from "./testing";

/** `null` = no platform:labelDomain in the stack. */
const parse = (overrides: Record<string, string | undefined> = {}, labelDomain: string | null = "ai-platform.io") =>
  parseGatewayConfig(rawGatewayNamespace(gatewayConfig(overrides)), labelDomain ?? undefined);
const problems = configProblems;

describe("gateway config", () => {
  test("the minimal configuration gets the documented defaults", () => {
    const c = parse();
    expect(c).toMatchObject({
      labelDomain: "ai-platform.io",
      image: "registry.example.com/ai-platform/gateway:0.1.0",
      namespace: "ai-gateway",
      servingNamespace: undefined,
      replicas: 2,
      maxReplicas: 6,
      targetCpuUtilization: 70,
      resources: DEFAULT_RESOURCES,
      shutdownGraceSeconds: 30,
      logLevel: "info",
      env: {},
      imagePullSecrets: [],
      catalog: TEST_CATALOG,
    });
    expect(c.apiKeys).toEqual(TEST_KEYS);
    // team-a has limits and up to 6 replicas may serve it: the default (auto) deploys the shared store.
    expect(c.redis).toEqual({ mode: "deployed", image: "docker.io/valkey/valkey:8.1-alpine" });
    expect(c.exposure).toBeUndefined();
  });

  test("every optional key is read", () => {
    const c = parse({
      "gateway:namespace": "llm-gateway",
      "gateway:servingNamespace": "models",
      "gateway:replicas": "3",
      "gateway:maxReplicas": "12",
      "gateway:targetCpuUtilization": "60",
      "gateway:resources": JSON.stringify({ requests: { cpu: "500m" }, limits: { memory: "1Gi" } }),
      "gateway:shutdownGraceSeconds": "60",
      "gateway:logLevel": "debug",
      "gateway:env": JSON.stringify({ GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: "900000" }),
      "gateway:imagePullPolicy": "IfNotPresent",
      "gateway:imagePullSecrets": JSON.stringify(["regcred"]),
      "gateway:redisUrl": "redis://redis.redis.svc:6379",
      "gateway:redisEgress": JSON.stringify({ namespace: "redis", podLabels: { "app.kubernetes.io/name": "redis" } }),
      "gateway:ingressNamespaces": JSON.stringify(["apps", "envoy-gateway-system"]),
      "gateway:exposure": JSON.stringify({ existingGateway: { name: "public", namespace: "gateways" }, hostnames: ["llm.example.com"], requestTimeout: "600s", from: { namespace: "envoy-gateway-system" } }),
      "gateway:corsOrigins": JSON.stringify(["https://chat.example.com"]),
      "gateway:aliases": JSON.stringify([{ id: "chat", models: ["qwen3-8b"] }]),
    });
    expect(c).toMatchObject({
      corsOrigins: ["https://chat.example.com"],
      aliases: [{ id: "chat", models: ["qwen3-8b"], listed: true }],
      namespace: "llm-gateway",
      servingNamespace: "models",
      replicas: 3,
      maxReplicas: 12,
      targetCpuUtilization: 60,
      resources: { requests: { cpu: "500m", memory: "256Mi" }, limits: { cpu: "2", memory: "1Gi" } },
      shutdownGraceSeconds: 60,
      logLevel: "debug",
      env: { GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS: "900000" },
      imagePullPolicy: "IfNotPresent",
      imagePullSecrets: ["regcred"],
      redis: { mode: "external", egress: { namespace: "redis", podLabels: { "app.kubernetes.io/name": "redis" }, port: 6379 } },
      ingressNamespaces: ["apps", "envoy-gateway-system"],
      exposure: { existingGateway: { name: "public", namespace: "gateways" }, hostnames: ["llm.example.com"], requestTimeout: "600s", from: { namespace: "envoy-gateway-system" } },
    });
  });

  test("CORS origins must be origins, named by index", () => {
    expect(() => parse({ "gateway:corsOrigins": JSON.stringify(["https://ok.example", "https://chat.example.com/app"]) })).toThrow(
      /gateway:corsOrigins \[1\]: "https:\/\/chat.example.com\/app" is not an origin/,
    );
  });

  test("the Redis URL never enters the parsed configuration", () => {
    const c = parse({ "gateway:redisUrl": "redis://:hunter2-pw@r:6379", "gateway:redisEgress": JSON.stringify({ cidr: "10.0.0.5/32" }) });
    expect(JSON.stringify(c)).not.toContain("hunter2-pw");
    expect(c.redis).toEqual({ mode: "external", egress: { cidr: "10.0.0.5/32", port: 6379 } });
  });

  describe("shared limits across replicas (gateway:redis)", () => {
    const limited = JSON.stringify([{ name: "team-a", rpm: 60 }]);
    test("auto deploys a store only when a key has limits and there can be more than one replica", () => {
      expect(parse({ "gateway:apiKeys": limited }).redis).toMatchObject({ mode: "deployed" });
      expect(parse({ "gateway:apiKeys": JSON.stringify([{ name: "open" }]) }).redis).toBeUndefined();
      expect(parse({ "gateway:apiKeys": limited, "gateway:replicas": "1", "gateway:maxReplicas": "1" }).redis).toBeUndefined();
    });

    test("deploy always deploys; an external URL wins over auto", () => {
      expect(parse({ "gateway:apiKeys": "[]", "gateway:redis": "deploy" }).redis).toMatchObject({ mode: "deployed" });
      const external = parse({ "gateway:apiKeys": limited, "gateway:redisUrl": "redis://r:6379", "gateway:redisEgress": JSON.stringify({ cidr: "10.0.0.5/32" }) });
      expect(external.redis).toMatchObject({ mode: "external" });
    });

    test("none with limits and several replicas fails preview, naming the key and the multiplication", () => {
      const lines = problems(() => parse({ "gateway:apiKeys": limited, "gateway:redis": "none", "gateway:maxReplicas": "4" }));
      expect(lines).toEqual([expect.stringMatching(/^gateway:redis: none, but 1 API key has rpm\/tpm\/maxConcurrent limits or a budget and the gateway runs up to 4 replicas: .*limits × 4/)]);
    });

    test("a budget alone needs the shared store too: auto deploys it, none with several replicas is refused", () => {
      const budgeted = JSON.stringify([{ name: "team-b", budget: { tokens: 10000, period: "month" } }]);
      expect(parse({ "gateway:apiKeys": budgeted }).redis).toMatchObject({ mode: "deployed" });
      expect(problems(() => parse({ "gateway:apiKeys": budgeted, "gateway:redis": "none", "gateway:maxReplicas": "3" }))).toEqual([expect.stringContaining("1 API key has rpm/tpm/maxConcurrent limits or a budget")]);
      expect(parse({ "gateway:apiKeys": budgeted, "gateway:redis": "none", "gateway:replicas": "1", "gateway:maxReplicas": "1" }).apiKeys[0]?.budget).toEqual({ tokens: 10000, period: "month" });
    });

    test("a budget the gateway would refuse fails preview naming the key", () => {
      const lines = problems(() => parse({ "gateway:apiKeys": JSON.stringify([{ name: "a", budget: { period: "week", tokens: 5 } }, { name: "b", budget: { period: "day" } }]) }));
      expect(lines).toEqual([expect.stringMatching(/^gateway:apiKeys \[0\.budget\.period\]: /), expect.stringMatching(/^gateway:apiKeys \[1\.budget\]: budget: set tokens, requests or both/)]);
    });

    test("a concurrency cap alone needs the shared store too", () => {
      const capped = JSON.stringify([{ name: "batch", maxConcurrent: 4 }]);
      expect(problems(() => parse({ "gateway:apiKeys": capped, "gateway:redis": "none", "gateway:maxReplicas": "4" }))).toEqual([expect.stringContaining("1 API key has rpm/tpm/maxConcurrent limits or a budget")]);
    });

    test("deploy and an external URL exclude each other", () => {
      const lines = problems(() => parse({ "gateway:redis": "deploy", "gateway:redisUrl": "redis://r:6379", "gateway:redisEgress": JSON.stringify({ cidr: "10.0.0.5/32" }) }));
      expect(lines).toEqual([expect.stringContaining("gateway:redis: deploy and redisUrl exclude each other")]);
    });
  });

  test("one error names every offending key", () => {
    const lines = problems(() =>
      parse({
        "gateway:image": undefined,
        "gateway:replicas": "0",
        "gateway:bogus": "1",
        "gateway:apiKeys": JSON.stringify([{ name: "Team A" }, { name: "b", rpm: -1 }, { name: "b", colour: "red" }]),
        "gateway:env": JSON.stringify({ PORT: "1", GATEWAY_BODY_LIMIT_BYTES: "100" }),
        "gateway:catalog": JSON.stringify({ models: [{ id: "x", category: "chat", upstream: { mode: "endpoints", endpoints: [] } }] }),
        "gateway:exposure": JSON.stringify({ existingGateway: {} }),
      }, null),
    );
    expect(lines).toEqual(
      expect.arrayContaining([
        "gateway:image: required",
        expect.stringMatching(/^gateway:replicas: /),
        "gateway:bogus: unknown key",
        expect.stringMatching(/^gateway:apiKeys \[0\.name\]: key name/),
        expect.stringMatching(/^gateway:apiKeys \[1\.rpm\]: /),
        "gateway:apiKeys [2.colour]: unknown key",
        'gateway:apiKeys [2.name]: duplicate key name "b"',
        "gateway:env [PORT]: unknown key",
        expect.stringMatching(/^gateway:catalog \[models\.0\.category\]: /),
        expect.stringMatching(/^gateway:catalog \[models\.0\.upstream\.endpoints\]: /),
        "gateway:exposure [existingGateway.name]: required",
        "platform:labelDomain: required (shared label domain of platform pods)",
      ]),
    );
    expect(lines.some((l) => l.includes("GATEWAY_BODY_LIMIT_BYTES"))).toBe(false);
  });

  test("a key's priority and weight reach the keys file; bad ones fail the preview naming the key", () => {
    expect(parse({ "gateway:apiKeys": JSON.stringify([{ name: "nightly", priority: "batch", weight: 0.5 }]) }).apiKeys).toEqual([{ name: "nightly", priority: "batch", weight: 0.5 }]);
    const lines = problems(() => parse({ "gateway:apiKeys": JSON.stringify([{ name: "a", priority: "urgent" }, { name: "b", weight: 0 }]) }));
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/^gateway:apiKeys \[0\.priority\]: /), expect.stringMatching(/^gateway:apiKeys \[1\.weight\]: /)]));
  });

  test("gateway:env values are checked by the gateway process's own settings schema, naming the variable", () => {
    const lines = problems(() =>
      parse({ "gateway:env": JSON.stringify({ GATEWAY_BODY_LIMIT_BYTES: "lots", GATEWAY_REDIS_FAILURE_MODE: "sometimes" }) }),
    );
    expect(lines).toHaveLength(2);
    expect(lines).toEqual(
      expect.arrayContaining([
        "gateway:env [GATEWAY_BODY_LIMIT_BYTES]: Invalid input: expected number, received NaN",
        expect.stringMatching(/^gateway:env \[GATEWAY_REDIS_FAILURE_MODE\]: .*"open"/),
      ]),
    );
    // The rules across settings too: a per-key body budget below the body limit.
    expect(problems(() => parse({ "gateway:env": JSON.stringify({ GATEWAY_BODY_MEMORY_PER_KEY_BYTES: "1024" }) }))).toEqual([
      "gateway:env [GATEWAY_BODY_MEMORY_PER_KEY_BYTES]: must be at least the body limit (4194304)",
    ]);
    expect(parse({ "gateway:env": JSON.stringify({ GATEWAY_BODY_LIMIT_BYTES: "8388608", GATEWAY_BODY_MEMORY_PER_KEY_BYTES: "16777216" }) }).env).toMatchObject({ GATEWAY_BODY_LIMIT_BYTES: "8388608" });
  });

  test.each([
    ["registry.example.com/gw:latest", "gateway:image: must be pinned"],
    ["registry.example.com/gw", "gateway:image: must be an image reference with a tag or a digest"],
    ["Registry/GW:1", "gateway:image: must be an image reference"],
    ["registry.example.com//gw:1", "gateway:image: must be an image reference"],
  ])("image %s is refused (%s)", (image, message) => {
    expect(problems(() => parse({ "gateway:image": image }))).toContainEqual(expect.stringContaining(message));
  });

  test("gateway:image and gateway:redisImage follow the one image-reference rule, pinned", () => {
    // The distribution grammar: a registry port, and a tag with capitals, are references.
    expect(parse({ "gateway:image": "registry.internal:5000/ai/gateway:V0.1.0" }).image).toBe("registry.internal:5000/ai/gateway:V0.1.0");
    const lines = problems(() => parse({ "gateway:redisImage": "docker.io/valkey/valkey:latest", "gateway:redis": "deploy" }));
    expect(lines).toContain("gateway:redisImage: must be pinned: a tag other than latest, or a digest");
    expect(problems(() => parse({ "gateway:redisImage": "valkey..io/valkey:8" }))).toContainEqual(expect.stringMatching(/^gateway:redisImage: must be an image reference/));
  });

  test("a digest pins an image", () => {
    expect(parse({ "gateway:image": `registry.example.com/gw@sha256:${"a".repeat(64)}` }).image).toContain("@sha256:");
  });

  test("cross-key rules: maxReplicas ≥ replicas, Redis needs its egress, namespaces differ, URL form without echo", () => {
    const lines = problems(() =>
      parse({
        "gateway:replicas": "4",
        "gateway:maxReplicas": "2",
        "gateway:redisUrl": "http://:s3cret-value@redis:6379",
        "gateway:namespace": "models",
        "gateway:servingNamespace": "models",
      }),
    );
    expect(lines).toEqual([
      "gateway:maxReplicas: must be at least replicas (4)",
      "gateway:redisEgress: required with redisUrl (where Redis runs, for the NetworkPolicy)",
      "gateway:redisUrl: must be a redis:// or rediss:// URL",
      "gateway:namespace: must differ from servingNamespace (the gateway gets a namespace of its own)",
    ]);
    expect(lines.join("\n")).not.toContain("s3cret-value");
  });

  test("an encrypted Redis URL the offline render cannot read is accepted as present", () => {
    expect(() => parse({ "gateway:redisUrl": "[secret]", "gateway:redisEgress": JSON.stringify({ namespace: "redis" }) })).not.toThrow();
  });

  test("rotation is a number or a non-empty string; expiry must be ISO 8601 with offset", () => {
    const lines = problems(() => parse({ "gateway:apiKeys": JSON.stringify([{ name: "a", rotation: "" }, { name: "b", expiresAt: "next year" }]) }));
    expect(lines).toEqual([expect.stringMatching(/^gateway:apiKeys \[0\.rotation\]: /), expect.stringMatching(/^gateway:apiKeys \[1\.expiresAt\]: /)]);
    expect(parse({ "gateway:apiKeys": JSON.stringify([{ name: "a", rotation: "2026-q3" }]) }).apiKeys[0]?.rotation).toBe("2026-q3");
  });
});

test("Pulumi.dev.yaml's gateway: keys are a valid configuration", () => {
  const { config } = parseStackYaml(fs.readFileSync(path.join(__dirname, "..", "..", "Pulumi.dev.yaml"), "utf8"), "ai-platform");
  const c = parseGatewayConfig(rawGatewayNamespace(config), config["platform:labelDomain"]);
  expect(c.apiKeys.map((k) => k.name)).toEqual(["dev", "team-a"]);
  // The dev stack deploys serving too: the catalog comes from there, not from gateway:catalog.
  expect(c.catalog).toBeUndefined();
});
