// The development object store (docs/operations.md, step 3) is what the dev stack's monitoring keys expect.
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { validateKubernetesObject } from "../infra/platform/k8s-validate";
import { parseStackYaml } from "../infra/platform/stack-config";

const docs = parseAllDocuments(fs.readFileSync(path.join(__dirname, "dev", "objectstore.yaml"), "utf8")).map((d) => d.toJS() as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any

describe("deployments/dev/objectstore.yaml", () => {
  test("every object is schema-valid", () => {
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(["Namespace/app-shaide", "Deployment/objectstore", "Service/objectstore"]);
    for (const d of docs) expect(() => validateKubernetesObject(d)).not.toThrow();
  });

  test("it answers where the dev stack's monitoring:s3Endpoint points", () => {
    const { config } = parseStackYaml(fs.readFileSync(path.join(__dirname, "..", "Pulumi.dev.yaml"), "utf8"), "ai-platform");
    const endpoint = new URL(config["monitoring:s3Endpoint"] as string);
    const service = docs.find((d) => d.kind === "Service");
    expect(endpoint.hostname).toBe(`${service?.metadata.name}.${service?.metadata.namespace}.svc.cluster.local`);
    expect(service?.spec.ports[0].port).toBe(Number(endpoint.port));
  });

  test("the S3 API listens on the port the Service targets, with the credentials file from the Secret", () => {
    const c = docs.find((d) => d.kind === "Deployment")?.spec.template.spec.containers[0];
    expect(c.args).toEqual(expect.arrayContaining(["-s3", "-s3.port=9000", "-s3.config=/etc/seaweedfs/s3.json"]));
    expect(docs.find((d) => d.kind === "Deployment")?.spec.template.spec.volumes).toContainEqual({ name: "config", secret: { secretName: "objectstore-s3-config" } });
  });
});
