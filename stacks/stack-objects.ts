// Everything a stack sends to the cluster, as Kubernetes objects: the program runs on Pulumi's mocks with a stack's
// configuration, and what it declares is collected: the objects declared directly, the CRD manifests it installs
// (its ConfigFile sources), and every object each Helm chart renders, by a real `helm template` of the chart's archive
// with exactly the values the program passed, then through the transforms the program registered on that chart, in
// order, as the engine applies them. Used by the real-API-server suite (stacks/apiserver.test.ts).
import * as fs from "fs";
import * as path from "path";
import type * as pulumi from "@pulumi/pulumi";
import { REPO_ROOT } from "../infra/platform/charts";
import { type Manifest, helmTemplate } from "../infra/platform/helm";
import { isKubernetesObject } from "../infra/platform/k8s-validate";
import { revealSecrets, type ResourceRecord, runWithMocks } from "../infra/platform/mocks";
import { KEDA_CHART } from "../infra/autoscaling/constants";
import type { Rendered } from "../infra/platform/apply-check";
import type { KubeApi } from "../infra/platform/kube-api";
import { type Crd, type CrdLibrary, crdServes } from "../infra/platform/crd-manifests";
import { PINNED_CHARTS as SERVING_CHARTS } from "../infra/serving/constants";
import { CHART_TYPE, MONITORING_CHARTS } from "./monitoring-charts";

const CONFIG_FILE_TYPE = "kubernetes:yaml/v2:ConfigFile";

/** Every chart archive a stack may render (the production example with KEDA installed uses each one). */
export const STACK_CHARTS = [
  ...MONITORING_CHARTS,
  ...Object.entries(SERVING_CHARTS).map(([component, c]) => ({ component, version: c.version })),
  { component: KEDA_CHART.component, version: KEDA_CHART.version },
];

/** Where the provider puts a namespaced object declared without a namespace. */
const DEFAULT_NAMESPACE = "default";

export interface RenderedRelease {
  readonly release: string;
  readonly namespace: string;
  readonly objects: Manifest[];
}

export interface StackObjects {
  /** Objects declared directly, secrets revealed (a test stack's values). */
  readonly direct: Manifest[];
  readonly releases: RenderedRelease[];
  /** The manifests the program applies with a ConfigFile (the CRD sets in `install` mode), as the program names them. */
  readonly crdSources: string[];
  /** Releases left unrendered because their archive is absent (only with `absentCharts: "skip"`), as `release (archive)`. */
  readonly skipped: string[];
}

/** The engine's type token of an object a chart renders: `kubernetes:<group or core>/<version>:<Kind>`. */
export function typeToken(obj: Pick<Manifest, "apiVersion" | "kind">): string {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["core", obj.apiVersion];
  return `kubernetes:${group}/${version}:${obj.kind}`;
}

/**
 * The archive a Chart resource names, looked up by its file name in $AI_PLATFORM_CHARTS_DIR, then charts/, then at
 * the path itself (the program names `charts/<component>-<version>.tgz` unless a stack overrides the path).
 */
export function archiveOf(chart: string): string | undefined {
  const name = path.basename(chart);
  const candidates = [process.env.AI_PLATFORM_CHARTS_DIR ? path.join(process.env.AI_PLATFORM_CHARTS_DIR, name) : undefined, path.join(REPO_ROOT, "charts", name), chart];
  return candidates.find((c): c is string => c !== undefined && fs.existsSync(c));
}

/** The objects after the chart's transforms, each called with the arguments the engine gives it. */
async function transformed(objects: Manifest[], release: string, transforms: readonly pulumi.ResourceTransform[]): Promise<Manifest[]> {
  const out: Manifest[] = [];
  for (const obj of objects) {
    let props = obj as unknown as Record<string, unknown>;
    for (const t of transforms) {
      const name = `${release}:${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name}`;
      const result = await t({ type: typeToken(obj), name, props, opts: {}, custom: true });
      if (result) props = result.props;
    }
    out.push(props as unknown as Manifest);
  }
  return out;
}

function directObject(r: ResourceRecord): Manifest {
  const obj = revealSecrets(r.inputs) as Manifest;
  return { ...obj, metadata: { ...obj.metadata, name: obj.metadata?.name ?? r.name } };
}

/**
 * Runs the program with `config` and collects what it would send to the cluster. A chart archive that is absent
 * throws, unless `absentCharts` is "skip": then the release is listed in `skipped` (and without helm, every release).
 */
export async function renderStackObjects(
  helm: string | undefined,
  config: Record<string, string>,
  secretKeys: readonly string[],
  options: { absentCharts?: "throw" | "skip" } = {},
): Promise<StackObjects> {
  const { resources, transforms } = await runWithMocks(async () => (await import("./program")).program(), { config, secretKeys });
  const releases: RenderedRelease[] = [];
  const skipped: string[] = [];
  for (const r of resources.filter((x) => x.type === CHART_TYPE)) {
    const release = String(r.inputs.name);
    const namespace = String(r.inputs.namespace);
    const archive = archiveOf(String(r.inputs.chart));
    if ((!archive || !helm) && options.absentCharts === "skip") {
      skipped.push(`${release} (${path.basename(String(r.inputs.chart))})`);
      continue;
    }
    if (!helm) throw new Error(`no helm to render release ${release}`);
    if (!archive) throw new Error(`no chart archive ${path.basename(String(r.inputs.chart))} for release ${release} (npm run charts:pull, or AI_PLATFORM_CHARTS_DIR)`);
    const objects = helmTemplate(helm, archive, release, namespace, revealSecrets(r.inputs.values));
    releases.push({ release, namespace, objects: await transformed(objects, release, transforms.get(`${r.type}::${r.name}`) ?? []) });
  }
  return {
    direct: resources.filter((r) => isKubernetesObject(r) && !r.read).map(directObject),
    releases,
    crdSources: resources.filter((r) => r.type === CONFIG_FILE_TYPE).map((r) => String(r.inputs.file)),
    skipped,
  };
}

/** What a stack's objects need from a cluster to be applied: the objects in order, CRDs the cluster must already have. */
export interface ObjectsToApply {
  /** Its CRD sets (from the library, by file name), the objects it declares, what its charts render. */
  readonly rendered: Rendered[];
  /** CRDs of kinds neither the stack nor the server serves, from the library: a cluster with that controller has them. */
  readonly clusterCrds: Crd[];
  /** Custom resources whose kind neither the stack, the server nor the library serves (left out of `rendered`). */
  readonly withoutCrd: Manifest[];
}

/** A stack's objects against a server: which to apply, in namespaces, and which CRDs the cluster is assumed to have. */
export async function objectsToApply(api: KubeApi, stack: StackObjects, library: CrdLibrary | undefined): Promise<ObjectsToApply> {
  const programCrds = library ? stack.crdSources.flatMap((source) => library.file(path.basename(source)) ?? []) : [];
  const all: Rendered[] = [
    ...programCrds.map((obj) => ({ obj, namespace: DEFAULT_NAMESPACE })),
    ...stack.direct.map((obj) => ({ obj, namespace: DEFAULT_NAMESPACE })),
    ...stack.releases.flatMap((r) => r.objects.map((obj) => ({ obj, namespace: r.namespace }))),
  ];
  // Kinds the stack's objects define, then kinds the server serves, then kinds the cluster is assumed to have.
  const defined = (o: Manifest) => all.some(({ obj: crd }) => crdServes(crd, o.apiVersion, o.kind));
  const clusterCrds = new Map<string, Crd>();
  const rendered: Rendered[] = [];
  const withoutCrd: Manifest[] = [];
  for (const r of all) {
    const o = r.obj;
    if (o.kind === "CustomResourceDefinition" || defined(o) || (await api.resourceFor(o.apiVersion, o.kind))) {
      rendered.push(r);
      continue;
    }
    const crd = library?.forKind(o.apiVersion, o.kind);
    if (crd) {
      clusterCrds.set(crd.metadata.name, crd);
      rendered.push(r);
    } else withoutCrd.push(o);
  }
  return { rendered, clusterCrds: [...clusterCrds.values()], withoutCrd };
}
