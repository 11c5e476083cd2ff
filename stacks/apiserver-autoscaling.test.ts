// Autoscaling on a real kube-apiserver (with etcd) on loopback: KEDA's CRD refuses a ScaledObject whose minimum is
// above its maximum (its CEL rule), and server-side apply ownership of a Deployment's `spec.replicas` behaves as the
// program relies on: once an autoscaler has written the count through `/scale`, an apply that leaves the field out
// (what pulumi-kubernetes sends for an ignoreChanges field another manager owns) keeps it, while a forced apply of
// the rendered count (what every `pulumi up` would send without ignoreChanges, patch force on) resets it.
// Needs KUBE_APISERVER, ETCD and AI_PLATFORM_CRDS_DIR with keda-2.20.2-crds.yaml; skipped without them.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { installCrds } from "../infra/platform/apply-check";
import { type ApiServer, describeWithApiServer, type Etcd, startApiServer, startEtcd } from "../infra/platform/apiserver";
import { crdLibraryFromEnv, CRDS_DIR_ENV } from "../infra/platform/crd-manifests";
import type { Manifest } from "../infra/platform/helm";
import { KubeApiError } from "../infra/platform/kube-api";
import { loadModelFolders } from "../infra/serving/model-folders";
import { planModels } from "../infra/serving/plan";
import { buildScaledObject, decodeDeploymentName } from "../infra/serving/scaled-object";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = "app-serving";
const STARTUP_MS = 300_000;
const KEDA_CRDS = "keda-2.20.2-crds.yaml";

describeWithApiServer("autoscaling on a real kube-apiserver", (binaries) => {
  const library = crdLibraryFromEnv();
  const crds = library?.file(KEDA_CRDS);
  if (!crds) {
    test.skip(`skipped: no ${KEDA_CRDS} in ${CRDS_DIR_ENV}`, () => undefined);
    return;
  }
  let dir: string;
  let etcd: Etcd;
  let server: ApiServer;
  const model = planModels(["generative/qwen3-8b"], {}, loadModelFolders(), "deployments/models", {}, { "generative/qwen3-8b": { minReplicas: 0, maxReplicas: 2 } })[0]!;
  const scaledObject = buildScaledObject(model, "ai-platform.io", {
    namespace: NS,
    labelDomain: "ai-platform.io",
    gatewayNamespace: "ai-gateway",
    serverAddress: "http://metrics-server.monitoring.svc.cluster.local:80",
    startupBudgetSeconds: 1500,
  }) as Manifest;
  const deployment = (replicas?: number): Manifest => {
    const labels = { app: "decode" };
    return {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: decodeDeploymentName(model.def), namespace: NS },
      spec: {
        ...(replicas !== undefined ? { replicas } : {}),
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "vllm", image: "ghcr.io/llm-d/llm-d-cuda:v0.5.0" }] } },
      },
    };
  };
  /** Server-side apply as `manager` (the provider's apply), forced or not. */
  const applyAs = async (obj: Manifest, manager: string, force: boolean) => {
    const q = new URLSearchParams({ fieldManager: manager, fieldValidation: "Strict", ...(force ? { force: "true" } : {}) });
    return server.api.raw("PATCH", `/apis/apps/v1/namespaces/${NS}/deployments/${obj.metadata.name}?${q}`, obj, "application/apply-patch+yaml");
  };
  const replicas = async () => ((await server.api.get(deployment())) as Obj).spec.replicas as number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "apiserver-autoscaling-"));
    etcd = await startEtcd(binaries.etcd, dir);
    server = await startApiServer(binaries.kubeApiserver, etcd, "/autoscaling");
    const installed = await installCrds(server.api, crds);
    if (installed.refusals.length > 0) throw new Error(installed.refusals.map((r) => r.message).join("\n"));
    await server.api.raw("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  }, STARTUP_MS);
  afterAll(async () => {
    await server?.stop();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the program's ScaledObject is accepted; minReplicaCount above maxReplicaCount is refused by the CRD's rule", async () => {
    const stored = (await server.api.apply(scaledObject)) as Obj;
    expect(stored.spec).toMatchObject({ minReplicaCount: 0, maxReplicaCount: 2 });
    const bad = { ...scaledObject, metadata: { ...scaledObject.metadata, name: "bad" }, spec: { ...(scaledObject.spec as Obj), minReplicaCount: 3 } };
    const err = await server.api.apply(bad).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubeApiError);
    expect(String((err as Error).message)).toContain("minReplicaCount must be less than or equal to maxReplicaCount");
  });

  test("replicas an autoscaler wrote through /scale survive an apply without the field, and are reset by a forced apply with it", async () => {
    expect((await applyAs(deployment(0), "pulumi-kubernetes", true)).status).toBe(201);
    // KEDA wakes the model (an update of the scale subresource, as KEDA and the HPA controller make).
    const scale = await server.api.raw("PATCH", `/apis/apps/v1/namespaces/${NS}/deployments/${deployment().metadata.name}/scale?fieldManager=keda`, { spec: { replicas: 2 } }, "application/merge-patch+json");
    expect(scale.status).toBe(200);
    const owners = (((await server.api.get(deployment())) as Obj).metadata.managedFields as Obj[]).filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes("f:replicas")).map((f) => [f.manager, f.operation, f.subresource]);
    expect(owners).toEqual([["keda", "Update", "scale"]]);
    // ignoreChanges: the provider leaves the field out of its apply when another manager owns it.
    expect((await applyAs(deployment(), "pulumi-kubernetes", true)).status).toBe(200);
    expect(await replicas()).toBe(2);
    // Without ignoreChanges and without force: the conflict pulumi-kubernetes users report.
    const conflict = await applyAs(deployment(0), "pulumi-kubernetes", false);
    expect([conflict.status, JSON.stringify(conflict.body)]).toEqual([409, expect.stringContaining('conflict with \\"keda\\" with subresource \\"scale\\"')]);
    expect(await replicas()).toBe(2);
    // With force (cluster:forceConflicts, the default): the model silently goes back to the rendered count.
    expect((await applyAs(deployment(0), "pulumi-kubernetes", true)).status).toBe(200);
    expect(await replicas()).toBe(0);
  });
});
