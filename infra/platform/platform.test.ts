// Shared platform helpers: label domain, config errors, Kubernetes schema validation, mocks, stack config.
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { ConfigError, decodeStructured, issuesToLines } from "./config";
import { isKubernetesObject, modelFor, toManifest, validateKubernetesObject } from "./k8s-validate";
import { checkLabelDomain, platformLabelKeys, standardLabels } from "./labels";
import { redactSecrets, revealSecrets, runWithMocks } from "./mocks";
import { retainRenderedOptions, retainOnDeleteTransform } from "./retain";
import { awsEndpointRegion, endpointRegionIssue, isAwsS3Endpoint } from "./s3-endpoint";
import { parseStackYaml, resolveStackConfig } from "./stack-config";

describe("platform label domain", () => {
  test.each(["ai-platform.io", "example.com", "a.b-c.d", "platform"])("%s is a valid DNS subdomain", (d) => {
    expect(checkLabelDomain(d)).toEqual([]);
  });
  test.each(["Ai-Platform.io", "-bad.io", "under_score.io", "trailing.", `${"a".repeat(64)}.io`])("%s is rejected", (d) => {
    expect(checkLabelDomain(d)[0]).toMatch(/^platform:labelDomain: /);
  });
  test("missing is reported as required", () => {
    expect(checkLabelDomain(undefined)).toEqual(["platform:labelDomain: required (shared label domain of platform pods)"]);
  });
  test("label keys under the domain", () => {
    expect(platformLabelKeys("x.io")).toEqual({ platform: "x.io/platform", modelSlug: "x.io/model-slug", modelCategory: "x.io/model-category", nodegroup: "x.io/nodegroup" });
    expect(standardLabels("logstore", "logstore")["app.kubernetes.io/part-of"]).toBe("ai-platform");
  });
});

describe("S3 endpoints", () => {
  test("AWS's own endpoints and their regions; other stores are not AWS and name no region", () => {
    const cases: [string, boolean, string | undefined][] = [
      ["https://s3.eu-west-1.amazonaws.com", true, "eu-west-1"],
      ["https://s3.dualstack.ap-southeast-2.amazonaws.com", true, "ap-southeast-2"],
      ["https://s3-fips.us-gov-west-1.amazonaws.com", true, "us-gov-west-1"],
      ["https://bucket.vpce-0a1b2c3d-x.s3.eu-central-1.vpce.amazonaws.com", true, "eu-central-1"],
      ["https://s3.cn-north-1.amazonaws.com.cn", true, "cn-north-1"],
      ["https://s3.amazonaws.com", true, "us-east-1"],
      ["https://storage.googleapis.com", false, undefined],
      ["http://minio.eu-west-1.example.com:9000", false, undefined],
      ["http://notamazonaws.com", false, undefined],
    ];
    expect(cases.map(([url]) => [url, isAwsS3Endpoint(url), awsEndpointRegion(url)])).toEqual(cases);
  });
  test("a region that an AWS endpoint contradicts is named, with the endpoint's key; anything else passes", () => {
    expect(endpointRegionIssue("https://s3.eu-west-1.amazonaws.com", "us-east-1", "s3Endpoint")).toBe("must be eu-west-1, the region of s3Endpoint: AWS refuses requests signed for another region");
    expect(endpointRegionIssue("https://s3.eu-west-1.amazonaws.com", "eu-west-1", "s3Endpoint")).toBeUndefined();
    expect(endpointRegionIssue("http://minio:9000", "anything", "s3Endpoint")).toBeUndefined();
    expect(endpointRegionIssue(undefined, "eu-west-1", "s3Endpoint")).toBeUndefined();
  });
});

describe("config errors", () => {
  test("zod issues become namespace:key lines; unknown keys are named one by one", () => {
    const r = z.object({ a: z.string(), b: z.array(z.number()) }).strict().safeParse({ a: 1, b: [1, "x"], c: 1, d: 2 });
    expect(r.success).toBe(false);
    const lines = issuesToLines("ns", r.error?.issues ?? []);
    expect(lines).toEqual(expect.arrayContaining(["ns:c: unknown key", "ns:d: unknown key"]));
    expect(lines.some((l) => l.startsWith("ns:a: "))).toBe(true);
    expect(lines.some((l) => l.startsWith("ns:b [1]: "))).toBe(true);
  });
  test("one message, one line per problem", () => {
    const e = new ConfigError("ns", ["ns:a: x", "ns:b: y"]);
    expect(e.message).toBe("Invalid stack configuration (2 problems):\n  - ns:a: x\n  - ns:b: y");
  });
  test("structured values are JSON-decoded; non-JSON stays a string", () => {
    expect(decodeStructured('["a"]')).toEqual(["a"]);
    expect(decodeStructured("logstore")).toBe("logstore");
  });
});

describe("Kubernetes schema validation", () => {
  const job = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "j" },
    spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] } } },
  };
  test("finds models for core and grouped APIs", () => {
    expect(modelFor("v1", "ConfigMap")).toBeDefined();
    expect(modelFor("networking.k8s.io/v1", "NetworkPolicy")).toBeDefined();
    expect(modelFor("rbac.authorization.k8s.io/v1", "ClusterRole")).toBeDefined();
    expect(modelFor("example.com/v1", "Widget")).toBeUndefined();
  });
  test("accepts a valid object and rejects schema violations", () => {
    expect(() => validateKubernetesObject(job)).not.toThrow();
    const bad = { ...job, spec: { template: { spec: { containers: [{ name: "c", image: 5 }] } } } };
    expect(() => validateKubernetesObject(bad)).toThrow(/Job j is not a valid batch\/v1\/Job: .*image/);
    expect(() => validateKubernetesObject({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: 1 } })).toThrow();
  });
  test("refuses kinds it has no schema for rather than passing them unchecked", () => {
    expect(() => validateKubernetesObject({ apiVersion: "example.com/v1", kind: "Widget" })).toThrow(/no Kubernetes schema/);
  });
});

describe("mocks", () => {
  test("records resources, dependsOn and secret inputs; redaction keeps shape, reveal unwraps", async () => {
    const { resources } = await runWithMocks(
      async () => {
        const k8s = await import("@pulumi/kubernetes");
        const cfg = new pulumi.Config("demo");
        const s = new k8s.core.v1.Secret("s", { stringData: { password: cfg.requireSecret("password") } });
        new k8s.core.v1.ConfigMap("c", { data: { a: "b" } }, { dependsOn: [s] });
      },
      { config: { "demo:password": "hunter2-xyz" }, secretKeys: ["demo:password"] },
    );
    const secret = resources.find((r) => r.name === "s");
    const cm = resources.find((r) => r.name === "c");
    expect(cm?.dependsOn).toEqual(["s"]);
    expect(JSON.stringify(redactSecrets(secret?.inputs))).not.toContain("hunter2-xyz");
    expect(redactSecrets(secret?.inputs)).toMatchObject({ stringData: { password: "[secret]" } });
    expect(revealSecrets(secret?.inputs)).toMatchObject({ stringData: { password: "hunter2-xyz" } });
    expect(secret && isKubernetesObject(secret)).toBe(true);
    expect(cm && toManifest(cm).metadata).toEqual({ name: "c" });
  });
});

describe("stack config", () => {
  test("stack YAML becomes runtime config: lists JSON-encoded, secure values are secrets with a placeholder", () => {
    const { config, secretKeys } = parseStackYaml(
      "config:\n  monitoring:components: [logstore, viewer]\n  monitoring:s3User: u\n  monitoring:s3Password:\n    secure: v1:abc\n  plainKey: 3\n",
      "ai-platform",
    );
    expect(config).toEqual({
      "monitoring:components": '["logstore","viewer"]',
      "monitoring:s3User": "u",
      "monitoring:s3Password": "[secret]",
      "ai-platform:plainKey": "3",
    });
    expect(secretKeys).toEqual(["monitoring:s3Password"]);
  });
  test("PULUMI_CONFIG overrides the file; missing known secrets get a placeholder", () => {
    const { config, secretKeys } = resolveStackConfig({
      stackFile: "/nonexistent/Pulumi.x.yaml",
      project: "ai-platform",
      env: { PULUMI_CONFIG: JSON.stringify({ "monitoring:s3User": "v", "monitoring:components": ["viewer"] }), PULUMI_CONFIG_SECRET_KEYS: '["monitoring:s3User"]' },
      knownSecretKeys: ["monitoring:viewerAdminPassword"],
    });
    expect(config).toEqual({ "monitoring:s3User": "v", "monitoring:components": '["viewer"]', "monitoring:viewerAdminPassword": "[secret]" });
    expect(secretKeys.sort()).toEqual(["monitoring:s3User", "monitoring:viewerAdminPassword"]);
  });
});

describe("retain on delete", () => {
  test("the chart transform marks every rendered object retainOnDelete and keeps its props and options", async () => {
    const result = await retainOnDeleteTransform({
      type: "kubernetes:core/v1:ConfigMap",
      name: "x",
      custom: true,
      props: { data: { a: "b" } },
      opts: { ignoreChanges: ["data.c"] },
    });
    expect(result).toEqual({ props: { data: { a: "b" } }, opts: { ignoreChanges: ["data.c"], retainOnDelete: true } });
  });

  test("a retained object keeps the fields Kubernetes cannot change, so a change to them cannot fail every update", async () => {
    const sts = await retainOnDeleteTransform({ type: "kubernetes:apps/v1:StatefulSet", name: "logstore", custom: true, props: {}, opts: {} });
    expect(sts?.opts.ignoreChanges).toEqual(["spec.selector", "spec.serviceName", "spec.volumeClaimTemplates", "spec.podManagementPolicy"]);
    const pvc = await retainOnDeleteTransform({ type: "kubernetes:core/v1:PersistentVolumeClaim", name: "metrics-server", custom: true, props: {}, opts: { ignoreChanges: ["metadata.labels"] } });
    expect(pvc?.opts.ignoreChanges).toEqual(["metadata.labels", "spec.storageClassName", "spec.accessModes", "spec.volumeName", "spec.selector", "spec.volumeMode"]);
  });
  test("chart options keep the caller's options and add the transform", () => {
    const opts = retainRenderedOptions({ protect: true });
    expect(opts.protect).toBe(true);
    expect(opts.retainOnDelete).toBe(true);
    expect(opts.transforms).toEqual([retainOnDeleteTransform]);
  });
});
