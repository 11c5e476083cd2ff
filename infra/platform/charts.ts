// Where chart archives live: `charts/<component>-<version>.tgz` at the repository root (pulled by charts/pull.sh),
// and the check that each archive a stack renders from is there, so a missing one fails the preview with one message
// naming the file instead of surfacing as a provider error.
import { existsSync } from "fs";
import * as path from "path";

/** Repository root: chart archive and model folder paths are relative to it, wherever the program starts. */
export const REPO_ROOT = path.resolve(__dirname, "..", "..");

/** Default archive of a chart: `charts/<component>-<version>.tgz`. */
export function chartArchivePath(component: string, version: string): string {
  return path.join(REPO_ROOT, "charts", `${component}-${version}.tgz`);
}

/** A chart archive a part renders from: the file, and the stack keys that chose it. */
export interface ChartArchiveUse {
  /** As configured: absolute for the pinned default, as written for an override. */
  readonly file: string;
  /** The key whose value is this file, when the operator set it (`monitoring:logstoreChartPath`). */
  readonly overriddenBy?: string;
  /** The key (or pin) that chose the version, and the key that would point elsewhere. */
  readonly version: string;
  readonly versionKey: string;
  readonly overrideKey?: string;
}

/** One problem line per archive that is not there, naming the file and how to get it. */
export function missingChartArchives(uses: readonly ChartArchiveUse[], exists: (file: string) => boolean = existsSync): string[] {
  return uses
    .filter((u) => !exists(path.resolve(REPO_ROOT, u.file)))
    .map((u) => {
      if (u.overriddenBy) return `${u.overriddenBy}: chart archive ${u.file} not found`;
      const shown = path.relative(REPO_ROOT, u.file);
      const elsewhere = u.overrideKey ? `, or set ${u.overrideKey} to a copy` : "";
      return `${shown}: chart archive not found (${u.versionKey} ${u.version}): run \`npm run charts:pull\` (an air-gapped machine copies it there from a mirror${elsewhere})`;
    });
}
