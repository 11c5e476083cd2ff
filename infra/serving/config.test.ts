// The `serving:` namespace: defaults, and one error naming every offending key.
import { ConfigError } from "../platform/config";
import { parseServingConfig } from "./config";
import { rawServing, servingConfig } from "./testing";

const DOMAIN = "ai-platform.io";
const parse = (overrides: Record<string, string | undefined> = {}, labelDomain: string | undefined = DOMAIN) =>
  parseServingConfig(rawServing(servingConfig(overrides)), labelDomain);

/** `labelDomain: null` = the shared key is missing. */
function problems(overrides: Record<string, string | undefined>, labelDomain: string | null = DOMAIN): string {
  try {
    parseServingConfig(rawServing(servingConfig(overrides)), labelDomain ?? undefined);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("serving config", () => {
  test("defaults: namespace created, pinned charts from charts/, no routes, dns catalog", () => {
    const c = parse({ "serving:namespace": undefined, "serving:gpuCapacity": undefined });
    expect(c).toMatchObject({ namespace: "app-serving", createNamespace: true, gpuCapacity: {}, replicas: {}, labelDomain: "ai-platform.io" });
    expect(c.charts.modelService).toMatch(/\/charts\/llm-d-modelservice-v0\.4\.5\.tgz$/);
    expect(c.charts.inferencePool).toMatch(/\/charts\/inferencepool-v1\.3\.0\.tgz$/);
    expect(c.modelsDir).toMatch(/\/deployments\/models$/);
    expect([c.parentGateway, c.inferenceGatewayUrl]).toEqual([undefined, undefined]);
  });

  test("structured keys arrive JSON-encoded (as Pulumi passes them)", () => {
    const c = parse({
      "serving:createNamespace": "false",
      "serving:replicas": JSON.stringify({ "generative/qwen3-8b": 0 }),
      "serving:parentGateway": JSON.stringify({ name: "inference-gateway", namespace: "gateway-system" }),
      "serving:inferenceGatewayUrl": "http://inference-gateway.gateway-system.svc.cluster.local/",
      "serving:modelServiceVersion": "v0.4.12",
    });
    expect(c.createNamespace).toBe(false);
    expect(c.replicas).toEqual({ "generative/qwen3-8b": 0 });
    expect(c.parentGateway).toEqual({ name: "inference-gateway", namespace: "gateway-system" });
    expect(c.inferenceGatewayUrl).toBe("http://inference-gateway.gateway-system.svc.cluster.local");
    expect(c.charts.modelService).toMatch(/llm-d-modelservice-v0\.4\.12\.tgz$/);
  });

  test("every offending key in one message", () => {
    const text = problems(
      {
        "serving:models": JSON.stringify(["generative/qwen3-8b", "vision/x", "generative/qwen3-8b"]),
        "serving:namespace": "App_Serving",
        "serving:gpuCapacity": JSON.stringify({ default: -1 }),
        "serving:replicas": JSON.stringify({ "embedder/other": 1 }),
        "serving:inferenceGatewayUrl": "http://gw.example",
        "serving:colour": "blue",
      },
      "Bad_Domain",
    );
    expect(text).toMatch(/^Invalid stack configuration \(\d+ problems\)/);
    for (const fragment of [
      "serving:models [1]: must be <category>/<model>",
      "serving:models: must not list a model twice",
      "serving:namespace: must be a DNS label",
      "serving:gpuCapacity [default]: must be a GPU count >= 0",
      "serving:replicas [embedder/other]: is not in serving:models",
      "serving:inferenceGatewayUrl: needs serving:parentGateway",
      "serving:colour: unknown key",
      "platform:labelDomain: ",
    ]) {
      expect(text).toContain(fragment);
    }
  });

  test("models and the shared label domain are required", () => {
    const text = problems({ "serving:models": undefined }, null);
    expect(text).toContain("serving:models: required");
    expect(text).toContain("platform:labelDomain: required");
  });

  test("weights, drain, swap and network defaults", () => {
    const c = parse();
    expect(c).toMatchObject({
      weightsCache: { accessMode: "ReadWriteMany", retain: true },
      hasHfToken: false,
      drainSeconds: 120,
      replaces: {},
      networkPolicy: true,
      monitoringNamespace: "monitoring",
      downloadTimeout: { floorMinutes: 10, secondsPerGiB: 120 },
    });
    expect(c.weightsS3).toBeUndefined();
    expect(c.gatewayNamespace).toBeUndefined();
  });

  test("secrets are seen as present, never read as values; S3 weights bring the default downloader image and region", () => {
    const c = parse({
      "serving:hfToken": "hf_abc",
      "serving:weightsS3": JSON.stringify({ endpoint: "http://objectstore:9000", accessKeyId: "reader" }),
      "serving:weightsS3SecretKey": "s3cr3t",
    });
    expect(c.hasHfToken).toBe(true);
    expect(c.weightsS3).toEqual({ endpoint: "http://objectstore:9000", accessKeyId: "reader", region: "us-east-1", image: "amazon/aws-cli:2.37.5" });
    expect(JSON.stringify(c)).not.toMatch(/hf_abc|s3cr3t/);
  });

  test("serving:weightsS3.image is an image reference with a tag or a digest, by the rule every image key follows", () => {
    const s3 = (image: string) => ({ "serving:weightsS3": JSON.stringify({ endpoint: "http://objectstore:9000", accessKeyId: "reader", image }), "serving:weightsS3SecretKey": "s3cr3t" });
    expect(parse(s3("registry.internal:5000/mirror/aws-cli:2.27.9")).weightsS3?.image).toBe("registry.internal:5000/mirror/aws-cli:2.27.9");
    for (const image of ["amazon/aws-cli", "aws cli 2"]) expect(problems(s3(image))).toContain("serving:weightsS3 [image]: must be an image reference with a tag or a digest");
    expect(problems(s3("amazon/aws-cli:latest"))).toContain("serving:weightsS3 [image]: must be pinned: a tag other than latest, or a digest");
  });

  test("serving:weightsS3.region takes a region name and refuses anything else, naming the key", () => {
    const s3 = (region: string) => ({ "serving:weightsS3": JSON.stringify({ endpoint: "https://s3.eu-west-1.amazonaws.com", accessKeyId: "reader", region }), "serving:weightsS3SecretKey": "s3cr3t" });
    expect(parse(s3("eu-west-1")).weightsS3?.region).toBe("eu-west-1");
    expect(problems(s3("EU West"))).toContain("serving:weightsS3 [region]: must be a region name such as us-east-1");
  });

  test("serving:weightsS3.region must be the region of an AWS regional endpoint (the rule monitoring:s3Region follows)", () => {
    const s3 = (endpoint: string, region?: string) => ({ "serving:weightsS3": JSON.stringify({ endpoint, accessKeyId: "reader", region }), "serving:weightsS3SecretKey": "s3cr3t" });
    expect(problems(s3("https://s3.eu-west-1.amazonaws.com", "eu-central-1"))).toContain(
      "serving:weightsS3 [region]: must be eu-west-1, the region of weightsS3.endpoint: AWS refuses requests signed for another region",
    );
    // The default (us-east-1) is checked too; the global endpoint is us-east-1's; other stores take any region.
    expect(problems(s3("https://s3.eu-west-1.amazonaws.com"))).toContain("serving:weightsS3 [region]: must be eu-west-1, the region of weightsS3.endpoint: AWS refuses requests signed for another region");
    expect(parse(s3("https://s3.amazonaws.com")).weightsS3?.region).toBe("us-east-1");
    expect(parse(s3("https://minio.eu-west-1.example.com", "us-east-1")).weightsS3?.region).toBe("us-east-1");
  });

  test("a swap names two listed models, one pair per model, the outgoing one not scaled up", () => {
    const text = problems({
      "serving:replaces": JSON.stringify({ "generative/sim-chat": "generative/qwen3-8b", "embedder/bge-small-en": "generative/qwen3-8b", "generative/other": "generative/sim-chat" }),
      "serving:replicas": JSON.stringify({ "generative/qwen3-8b": 1 }),
      "serving:weightsS3": JSON.stringify({ endpoint: "http://objectstore:9000", accessKeyId: "reader" }),
    });
    for (const fragment of [
      "serving:replaces [generative/other]: generative/other is not in serving:models",
      "serving:replicas [generative/qwen3-8b]: must be 0 or absent: generative/qwen3-8b is being replaced",
      "serving:replaces: generative/qwen3-8b is replaced by more than one model",
      "serving:replaces [generative/sim-chat]: is itself being replaced",
      "serving:weightsS3SecretKey: required with serving:weightsS3",
    ]) {
      expect(text).toContain(fragment);
    }
  });
});
