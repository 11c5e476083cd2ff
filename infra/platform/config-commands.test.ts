import { applyConfigCommands, ConfigCommandError, parseConfigPath, readStackDocument, writeStackDocument } from "./config-commands";
import { SECRET_PLACEHOLDER } from "./mocks";
import { parseStackYaml } from "./stack-config";

const apply = (script: string, start = "config: {}", env: Record<string, string> = {}) => applyConfigCommands(script, readStackDocument(start), { project: "ai-platform", env }).config;

describe("pulumi config set, as the CLI applies it to a stack file", () => {
  test("paths: maps, quoted keys, list indexes", () => {
    expect(parseConfigPath('serving:replaces["generative/llama-3.3-70b"]')).toEqual(["serving:replaces", "generative/llama-3.3-70b"]);
    expect(parseConfigPath("gateway:apiKeys[0].models[1]")).toEqual(["gateway:apiKeys", 0, "models", 1]);
    expect(() => parseConfigPath("gateway:apiKeys[x]")).toThrow(ConfigCommandError);
  });

  test("without --path a value is a string; with it, integers and booleans are typed", () => {
    const config = apply(`
pulumi config set gateway:replicas 3
pulumi config set --path 'serving:gpuCapacity.default' 8
pulumi config set --path 'serving:weightsCache.retain' false
pulumi config set --path 'serving:weightsCache.storageClass' nfs-client
pulumi config set --path gateway:maxReplicas --type string 6
pulumi config set --path gateway:targetCpuUtilization 70
pulumi config set --path 'serving:replicas["generative/qwen3-8b"]' 007`);
    expect(config).toEqual({
      "gateway:replicas": "3",
      "serving:gpuCapacity": { default: 8 },
      "serving:weightsCache": { retain: false, storageClass: "nfs-client" },
      "gateway:maxReplicas": "6",
      // Top level: a string even with --path; a leading zero keeps a string.
      "gateway:targetCpuUtilization": "70",
      "serving:replicas": { "generative/qwen3-8b": "007" },
    });
  });

  test("lists grow by appending at their end; a gap is refused", () => {
    const config = apply(
      `pulumi config set --path 'gateway:apiKeys[1].name' ops
pulumi config set --path 'gateway:apiKeys[1].models[0]' qwen3-8b`,
      "config:\n  gateway:apiKeys:\n    - name: dev\n",
    );
    expect(config["gateway:apiKeys"]).toEqual([{ name: "dev" }, { name: "ops", models: ["qwen3-8b"] }]);
    expect(() => apply("pulumi config set --path 'serving:models[2]' x", "config:\n  serving:models: [a]\n")).toThrow(/past the end of a list of 1/);
    // A path into a key that holds a string replaces the string.
    expect(apply("pulumi config set --path 'serving:gpuCapacity.default' 8", "config:\n  serving:gpuCapacity: '{}'\n")).toEqual({ "serving:gpuCapacity": { default: 8 } });
  });

  test("secrets, variables and command substitutions; a missing variable or value is an error", () => {
    const config = apply(
      `pulumi config set --secret monitoring:s3Password "$S3_PASSWORD"
pulumi config set --secret monitoring:viewerAdminPassword "$(openssl rand -base64 24)"
pulumi config set name \\
  demo   # a comment`,
      "config: {}",
      { S3_PASSWORD: "pw" },
    );
    expect(config).toEqual({ "monitoring:s3Password": { secure: SECRET_PLACEHOLDER }, "monitoring:viewerAdminPassword": { secure: SECRET_PLACEHOLDER }, "ai-platform:name": "demo" });
    expect(() => apply('pulumi config set monitoring:s3User "$S3_USER"')).toThrow(/\$S3_USER is not set/);
    expect(() => apply("pulumi config set --secret serving:hfToken")).toThrow(/would prompt/);
  });

  test("rm removes a key or a list item; the result reads back as the stack file the program sees", () => {
    const doc = applyConfigCommands(
      "pulumi config rm --path 'serving:models[0]'\npulumi config rm gateway:image\npulumi config set --secret gateway:redisUrl x",
      readStackDocument("config:\n  serving:models: [a, b]\n  gateway:image: x\n"),
      { project: "ai-platform" },
    );
    const stack = parseStackYaml(writeStackDocument(doc), "ai-platform");
    expect(stack.config).toEqual({ "serving:models": '["b"]', "gateway:redisUrl": SECRET_PLACEHOLDER });
    expect(stack.secretKeys).toEqual(["gateway:redisUrl"]);
  });
});
