// The monitoring program's charts as a real `helm template` renders them: the program runs on Pulumi's mocks, every
// Helm v4 Chart it declares is rendered from its archive with exactly the values the program passed. Used by the
// render tests (stacks/monitoring-charts.test.ts) and by the air-gap image list (scripts/docs-images.ts).
import { KEDA_CHART, KEDA_RELEASE } from "../infra/autoscaling/constants";
import { PINNED_CHARTS } from "../infra/monitoring/constants";
import { QUALIFIED_SECRET_KEYS } from "../infra/monitoring/config";
import { fullConfig, gcsOverrides } from "../infra/monitoring/testing";
import { servingConfig } from "../infra/serving/testing";
import { chartDefaults, type Manifest, findChartArchive, helmTemplate } from "../infra/platform/helm";
import { isKubernetesObject, toManifest } from "../infra/platform/k8s-validate";
import { allContainers, podOwners } from "../infra/platform/manifests";
import { type ResourceRecord, revealSecrets, runWithMocks } from "../infra/platform/mocks";

export const CHART_TYPE = "kubernetes:helm.sh/v4:Chart";

/** The chart components and the archives they render from (AI_PLATFORM_CHARTS_DIR or charts/). */
export const MONITORING_CHARTS = Object.entries(PINNED_CHARTS).map(([component, c]) => ({ component, version: c.version }));

export interface RenderedChart {
  /** Release name, as the program declares it. */
  readonly release: string;
  /** The values the program passed (secrets revealed; none should be there). */
  readonly values: Record<string, unknown>;
  readonly objects: Manifest[];
}

export interface RenderedMonitoring {
  readonly resources: ResourceRecord[];
  /** Charts by release name. */
  readonly charts: Record<string, RenderedChart>;
  /** Kubernetes objects the program declares directly (Secrets, the bucket Job, the viewer's Role, …). */
  readonly direct: Manifest[];
}

/** Runs the program with `config` on the mocks and renders every chart it declares with the archive of its component. */
export async function renderMonitoring(helm: string, config: Record<string, string>, archiveOf: (component: string) => string): Promise<RenderedMonitoring> {
  const { resources } = await runWithMocks(async () => (await import("./program")).program(), { config, secretKeys: QUALIFIED_SECRET_KEYS });
  const charts: Record<string, RenderedChart> = {};
  for (const r of resources.filter((x) => x.type === CHART_TYPE)) {
    const release = String(r.inputs.name);
    const values = revealSecrets(r.inputs.values) as Record<string, unknown>;
    charts[release] = { release, values, objects: helmTemplate(helm, archiveOf(release), release, String(r.inputs.namespace), values) };
  }
  const direct = resources.filter(isKubernetesObject).map((r) => toManifest(r) as Manifest);
  return { resources, charts, direct };
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Leaf paths of a values object (arrays are leaves). */
function leaves(v: unknown, prefix: string[] = []): string[][] {
  if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0) {
    return Object.entries(v).flatMap(([k, x]) => leaves(x, [...prefix, k]));
  }
  return [prefix];
}
const at = (v: unknown, path: readonly string[]): unknown => path.reduce<unknown>((o, k) => (o !== null && typeof o === "object" ? (o as Obj)[k] : undefined), v);
function without(v: Obj, path: readonly string[]): Obj {
  const copy = structuredClone(v);
  let o: Obj = copy;
  for (const k of path.slice(0, -1)) o = o[k];
  delete o[path[path.length - 1] as string];
  return copy;
}

/**
 * The values the program passed to a chart (those under `under` when given) that the chart ignores: each neither
 * restates the chart's default nor changes what helm renders when removed. One `helm template` per value.
 */
export function ignoredValues(helm: string, archive: string, chart: RenderedChart, namespace: string, under: readonly string[] = []): string[] {
  const defaults = chartDefaults(archive);
  const base = JSON.stringify(chart.objects);
  const ignored: string[] = [];
  for (const path of leaves(at(chart.values, under), [...under])) {
    const value = at(chart.values, path);
    if (JSON.stringify(at(defaults, path)) === JSON.stringify(value)) continue; // restates the default
    let changed: boolean;
    try {
      changed = JSON.stringify(helmTemplate(helm, archive, chart.release, namespace, without(chart.values, path))) !== base;
    } catch {
      changed = true; // the chart refuses to render without it
    }
    if (!changed) ignored.push(`${chart.release}: ${path.join(".")}`);
  }
  return ignored;
}

/** The archive of a component at its pinned version, or an error naming where it was looked for. */
export function pinnedArchive(component: string): string {
  const pin = MONITORING_CHARTS.find((c) => c.component === component);
  const archive = pin ? findChartArchive(pin.component, pin.version) : undefined;
  if (!archive) throw new Error(`no archive for ${component} (npm run charts:pull, or AI_PLATFORM_CHARTS_DIR)`);
  return archive;
}

/** Markers of the generated image list in docs/monitoring.md (`npm run docs:images` rewrites what is between). */
export const AIRGAP_MARKERS = { start: "<!-- generated by npm run docs:images: start -->", end: "<!-- generated by npm run docs:images: end -->" } as const;

/** Stacks that pull images the full configuration does not: the table lists those images with the variant's note. */
export const AIRGAP_VARIANTS: readonly { readonly note: string; readonly config: Record<string, string> }[] = [
  { note: "with `objectStore: gcs`", config: fullConfig({ "monitoring:components": JSON.stringify(["logstore"]), ...gcsOverrides() }) },
];

/** The KEDA release as a stack with `cluster:keda: install` renders it (its images join the air-gap list). */
export const AIRGAP_KEDA = { note: "with `cluster:keda: install`", chart: KEDA_CHART } as const;

export async function renderKeda(helm: string, archive: string): Promise<RenderedMonitoring> {
  const { resources } = await runWithMocks(async () => (await import("./program")).program(), { config: servingConfig({ "cluster:keda": "install" }) });
  const chart = resources.find((r) => r.type === CHART_TYPE && r.name === KEDA_RELEASE);
  if (!chart) throw new Error("the program declared no KEDA release with cluster:keda install");
  const values = revealSecrets(chart.inputs.values) as Record<string, unknown>;
  return { resources, charts: { [KEDA_RELEASE]: { release: KEDA_RELEASE, values, objects: helmTemplate(helm, archive, KEDA_RELEASE, String(chart.inputs.namespace), values) } }, direct: [] };
}

/**
 * The images the monitoring stack pulls, from the rendered objects themselves (every container and init container of
 * every chart's workloads, and of the objects the stack declares), as a Markdown table: image, and what pulls it.
 * `base` renders every component; an image only a variant pulls carries the variant's note.
 */
export function airgapImageTable(base: RenderedMonitoring, variants: readonly { readonly note: string; readonly rendered: RenderedMonitoring }[] = []): string {
  const pulledBy = new Map<string, Set<string>>();
  const add = (r: RenderedMonitoring, note: string, only?: (image: string) => boolean) => {
    for (const p of podOwners([...Object.values(r.charts).flatMap((c) => c.objects), ...r.direct])) {
      for (const c of allContainers(p)) {
        if (only && !only(c.image)) continue;
        const set = pulledBy.get(c.image) ?? new Set<string>();
        set.add(`${p.kind} \`${p.name}\` (${c.name})${note}`);
        pulledBy.set(c.image, set);
      }
    }
  };
  add(base, "");
  const inBase = new Set(pulledBy.keys());
  for (const v of variants) add(v.rendered, ` ${v.note}`, (image) => !inBase.has(image));
  const rows = [...pulledBy].sort(([a], [b]) => a.localeCompare(b)).map(([image, by]) => `| \`${image}\` | ${[...by].sort().join(", ")} |`);
  return ["| Image | Pulled by |", "|---|---|", ...rows].join("\n");
}

/** The section of a page between the markers (exclusive), trimmed. */
export function generatedSection(page: string): string | undefined {
  const start = page.indexOf(AIRGAP_MARKERS.start);
  const end = page.indexOf(AIRGAP_MARKERS.end);
  return start < 0 || end < start ? undefined : page.slice(start + AIRGAP_MARKERS.start.length, end).trim();
}
