// The monitoring program's charts as a real `helm template` renders them: the program runs on Pulumi's mocks, every
// Helm v4 Chart it declares is rendered from its archive with exactly the values the program passed. Used by the
// render tests (stacks/monitoring-charts.test.ts) and by the air-gap image list (scripts/docs-images.ts).
import { PINNED_CHARTS } from "../infra/monitoring/constants";
import { QUALIFIED_SECRET_KEYS } from "../infra/monitoring/config";
import { type Manifest, findChartArchive, helmTemplate } from "../infra/platform/helm";
import { isKubernetesObject, toManifest } from "../infra/platform/k8s-validate";
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

/** The archive of a component at its pinned version, or an error naming where it was looked for. */
export function pinnedArchive(component: string): string {
  const pin = MONITORING_CHARTS.find((c) => c.component === component);
  const archive = pin ? findChartArchive(pin.component, pin.version) : undefined;
  if (!archive) throw new Error(`no archive for ${component} (npm run charts:pull, or AI_PLATFORM_CHARTS_DIR)`);
  return archive;
}
