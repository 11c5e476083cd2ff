// Everything the program sends to a cluster, applied to a real kube-apiserver (with etcd) on loopback: the objects it
// declares directly, the CRD sets it installs, and every object each pinned chart renders with the program's values
// and transforms, for each stack variant (stacks/stack-variants.ts). Each variant gets an empty API server; each
// object is applied by server-side apply with strict field validation, then applied again, which must change
// nothing; and a Pod from every workload's template must pass a server-side dry run (admission included).
// Needs KUBE_APISERVER and ETCD (or both on PATH), the chart archives, and CRD manifests in AI_PLATFORM_CRDS_DIR
// for the custom resources (docs/development.md, "A real API server"); without them it says what is missing and skips.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { applyAll, changedByReapply, dryRunPods, ensureNamespaces, installCrds, objectId, type Refusal, type Rendered, unstoredFields, workloadPods } from "../infra/platform/apply-check";
import { type ApiServer, describeWithApiServer, type Etcd, startApiServer, startEtcd } from "../infra/platform/apiserver";
import { crdLibraryFromEnv, CRDS_DIR_ENV } from "../infra/platform/crd-manifests";
import { describeWithCharts, type Manifest } from "../infra/platform/helm";
import type { KubeObject } from "../infra/platform/kube-api";
import { enforcedLevel } from "../infra/platform/pod-security";
import { objectsToApply, renderStackObjects, STACK_CHARTS } from "./stack-objects";
import { stackVariants } from "./stack-variants";

const STARTUP_MS = 300_000;
const APPLY_MS = 600_000;

const list = (refusals: readonly Refusal[]) => refusals.map((r) => `${r.object}: ${r.message}`);

describeWithApiServer("every rendered object on a real kube-apiserver", (binaries) => {
  describeWithCharts("with the pinned charts", STACK_CHARTS, ({ helm }) => {
    const crdLibrary = crdLibraryFromEnv();
    let dir: string;
    let etcd: Etcd;
    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "apiserver-suite-"));
      etcd = await startEtcd(binaries.etcd, dir);
    }, STARTUP_MS);
    afterAll(async () => {
      await etcd?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    stackVariants().forEach((variant, index) => {
      describe(variant.name, () => {
        let server: ApiServer;
        /** Every object the program sends: its CRD sets, the objects it declares, what its charts render. */
        let rendered: Rendered[];
        /** Custom resources whose CRD neither the program, a chart nor the CRD folder provides (or there is no folder). */
        const withoutCrd: Manifest[] = [];
        /** The objects as sent, each in its namespace, and what the server stored of each accepted one. */
        let sent: Manifest[] = [];
        let stored = new Map<Manifest, KubeObject>();
        /** The objects the program declares itself (not a chart's): held to every field, zero values included. */
        let own = new Set<Manifest>();

        beforeAll(async () => {
          // Each variant on an empty server: its own etcd prefix (variants name the same objects differently).
          server = await startApiServer(binaries.kubeApiserver, etcd, `/variant-${index}`);
          const stack = await renderStackObjects(helm, variant.config, variant.secretKeys);
          own = new Set(stack.direct);
          const resolved = await objectsToApply(server.api, stack, crdLibrary);
          rendered = resolved.rendered;
          withoutCrd.push(...resolved.withoutCrd);
          const fixtures = await installCrds(server.api, resolved.clusterCrds);
          if (fixtures.refusals.length > 0) throw new Error(`CRDs from ${CRDS_DIR_ENV} refused:\n${list(fixtures.refusals).join("\n")}`);
          await ensureNamespaces(server.api, rendered);
        }, STARTUP_MS);
        afterAll(async () => {
          await server?.stop();
        });

        test("every object is accepted by server-side apply with strict field validation, on kube-apiserver 1.34 or newer", async () => {
          expect(server.version).toMatch(/^v1\.(3[4-9]|[4-9]\d)\./);
          const result = await applyAll(server.api, rendered);
          ({ sent, stored } = result);
          expect({ refused: list(result.refusals), of: sent.length }).toEqual({ refused: [], of: sent.length });
          expect(sent.length).toBeGreaterThan(20);
        }, APPLY_MS);

        if (crdLibrary) {
          test(`every custom resource's kind is served (its CRD from the program, a chart or ${CRDS_DIR_ENV})`, () => {
            expect(withoutCrd.map(objectId)).toEqual([]);
          });
        } else {
          test.skip(`custom resources — skipped, no CRD manifests: set ${CRDS_DIR_ENV} to a folder of CRD YAML (InferencePool, Gateway API, …)`, () => undefined);
        }

        test("the server stores every field as the program sends it (no diff that never settles)", () => {
          const unstored = [...stored].flatMap(([sent, live]) =>
            // Status is the server's (a write to the object ignores it); a Secret's stringData is write-only by
            // design: the server folds it into data.
            unstoredFields({ ...sent, status: undefined, ...(sent.kind === "Secret" ? { stringData: undefined } : {}) }, live, { zeroValues: own.has(sent) ? "reported" : "omitted" }).map(
              (p) => `${objectId(sent)}: ${p}`,
            ),
          );
          expect(unstored).toEqual([]);
        });

        test("a second apply of every object changes nothing (same resourceVersion and generation)", async () => {
          expect(stored.size).toBe(sent.length);
          expect((await changedByReapply(server.api, stored.keys())).changed).toEqual([]);
        }, APPLY_MS);

        test("a Pod from every workload's template passes a server-side dry run", async () => {
          const pods = workloadPods(sent);
          expect(pods.length).toBeGreaterThan(0);
          expect(list(await dryRunPods(server.api, pods))).toEqual([]);
        }, APPLY_MS);

        test("Pod Security admission enforces each namespace's labels: a pod of the render given the host's network is refused", async () => {
          const enforcing = new Set(sent.filter((o) => o.kind === "Namespace" && enforcedLevel(o.metadata.labels as Record<string, string> | undefined) !== "privileged").map((o) => o.metadata.name));
          const pods = workloadPods(sent).filter((p) => enforcing.has(p.pod.metadata.namespace ?? ""));
          expect(pods.length).toBeGreaterThan(0);
          const hostNetwork = pods.map(({ owner, pod }) => ({ owner, pod: { ...pod, spec: { ...(pod.spec as object), hostNetwork: true } } }));
          const refusals = await dryRunPods(server.api, hostNetwork);
          expect(refusals.map((r) => [r.object, /violates PodSecurity/.test(r.message)])).toEqual(hostNetwork.map((p) => [`Pod of ${p.owner}`, true]));
        }, APPLY_MS);
      });
    });
  });
});
