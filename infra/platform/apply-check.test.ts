// The pure parts of the real-API-server suite's support: what counts as a change, what the server did not keep,
// the order of applies, the pods made from workloads, where CRDs and binaries are found. The parts that talk to a
// server run in stacks/apiserver.test.ts.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { findApiServerBinaries } from "./apiserver";
import { applyOrder, differences, objectId, unstoredFields, workloadPods } from "./apply-check";
import { loadCrdLibrary } from "./crd-manifests";
import type { Manifest } from "./helm";

describe("what the server kept of what was sent", () => {
  test("a normalised value and a dropped field are reported; server defaults and omitted zero values are not", () => {
    const sent = { spec: { policyTypes: ["Egress"], egress: [], hostIPC: false, annotations: {}, replicas: 1, resources: { cpu: "0.5" }, mode: "fast" } };
    const stored = { spec: { policyTypes: ["Egress"], replicas: 1, resources: { cpu: "500m" }, revisionHistoryLimit: 10 } };
    expect(unstoredFields(sent, stored)).toEqual(['.spec.resources.cpu ("0.5" stored as "500m")', ".spec.mode"]);
    expect(unstoredFields({ spec: { a: undefined, b: [1, 2] } }, { spec: { b: [1, 2] } })).toEqual([]);
    expect(unstoredFields({ spec: { b: [1, 2] } }, { spec: { b: [1] } })).toEqual([".spec.b"]);
    // The program's own objects: a zero value the server drops is a diff every apply sees again.
    expect(unstoredFields(sent, stored, { zeroValues: "reported" })).toEqual([".spec.egress", ".spec.hostIPC", ".spec.annotations", '.spec.resources.cpu ("0.5" stored as "500m")', ".spec.mode"]);
  });

  test("differences name every path where two objects differ, either side", () => {
    expect(differences({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 3] }, d: true })).toEqual([".b.c[1]", ".d"]);
    expect(differences({ a: [1] }, { a: [1, 2] })).toEqual([".a"]);
  });
});

describe("applying", () => {
  const m = (kind: string, name: string, namespace?: string): Manifest => ({ apiVersion: "v1", kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

  test("CRDs, then Namespaces, then the rest in the order given", () => {
    const order = applyOrder([m("Service", "a", "x"), m("Namespace", "x"), m("ConfigMap", "b", "x"), m("CustomResourceDefinition", "c")]);
    expect(order.map(objectId)).toEqual(["CustomResourceDefinition c", "Namespace x", "Service x/a", "ConfigMap x/b"]);
  });

  test("a Pod from each workload's template, in the workload's namespace; objects without pods give none", () => {
    const template = { metadata: { labels: { app: "w" } }, spec: { containers: [{ name: "c", image: "i" }] } };
    const objects: Manifest[] = [
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "apps" }, spec: { template } },
      { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "tick", namespace: "apps" }, spec: { jobTemplate: { spec: { template } } } },
      m("ConfigMap", "cfg", "apps"),
    ];
    expect(workloadPods(objects)).toEqual([
      { owner: "Deployment apps/web", pod: { apiVersion: "v1", kind: "Pod", metadata: { name: "web-dry-run", namespace: "apps", labels: { app: "w" } }, spec: template.spec } },
      { owner: "CronJob apps/tick", pod: { apiVersion: "v1", kind: "Pod", metadata: { name: "tick-dry-run", namespace: "apps", labels: { app: "w" } }, spec: template.spec } },
    ]);
  });

  test("a StatefulSet's pod gets the claim of each volumeClaimTemplate, as its controller gives pod 0", () => {
    const set: Manifest = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "store", namespace: "db" },
      spec: { template: { spec: { containers: [{ name: "c", image: "i", volumeMounts: [{ name: "data", mountPath: "/d" }] }], volumes: [{ name: "tmp", emptyDir: {} }] } }, volumeClaimTemplates: [{ metadata: { name: "data" } }] },
    };
    expect(workloadPods([set])[0]?.pod.spec).toMatchObject({ volumes: [{ name: "tmp", emptyDir: {} }, { name: "data", persistentVolumeClaim: { claimName: "data-store-0" } }] });
  });
});

describe("CRD manifests from a folder", () => {
  let dir: string;
  const crd = (group: string, kind: string, versions: string[]) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${kind.toLowerCase()}s.${group}` },
    spec: { group, names: { kind, plural: `${kind.toLowerCase()}s` }, scope: "Namespaced", versions: versions.map((name) => ({ name, served: true, storage: true })) },
  });
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "crds-"));
    fs.mkdirSync(path.join(dir, "set"));
    fs.writeFileSync(path.join(dir, "set", "manifests.yaml"), [crd("example.io", "Pool", ["v1"]), { apiVersion: "v1", kind: "Namespace", metadata: { name: "x" } }].map((d) => stringify(d)).join("---\n"));
    fs.writeFileSync(path.join(dir, "other.yml"), stringify(crd("other.io", "Rule", ["v1beta1"])));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("a set by its file name (CRDs only), another kind by group, version and kind", () => {
    const lib = loadCrdLibrary(dir);
    expect(lib.file("manifests.yaml")?.map((c) => c.metadata.name)).toEqual(["pools.example.io"]);
    expect(lib.file("absent.yaml")).toBeUndefined();
    expect(lib.forKind("other.io/v1beta1", "Rule")?.metadata.name).toBe("rules.other.io");
    expect(lib.forKind("other.io/v1", "Rule")).toBeUndefined();
  });
});

describe("the binaries", () => {
  test("a path that does not run is named with its variable; a missing one says how to get it", () => {
    const { binaries, missing } = findApiServerBinaries({ KUBE_APISERVER: "/nonexistent/kube-apiserver", ETCD: "/nonexistent/etcd", PATH: "" });
    expect(binaries).toBeUndefined();
    expect(missing).toEqual(["KUBE_APISERVER=/nonexistent/kube-apiserver does not run", "ETCD=/nonexistent/etcd does not run"]);
    expect(findApiServerBinaries({ PATH: "" }).missing).toEqual([expect.stringMatching(/^no kube-apiserver \(build cmd\/kube-apiserver/), expect.stringMatching(/^no etcd \(apt-get install etcd-server/)]);
  });
});
