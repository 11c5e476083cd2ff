// Where chart archives live: `charts/<component>-<version>.tgz` at the repository root (pulled by charts/pull.sh).
import * as path from "path";

/** Repository root: chart archive and model folder paths are relative to it, wherever the program starts. */
export const REPO_ROOT = path.resolve(__dirname, "..", "..");

/** Default archive of a chart: `charts/<component>-<version>.tgz`. */
export function chartArchivePath(component: string, version: string): string {
  return path.join(REPO_ROOT, "charts", `${component}-${version}.tgz`);
}

export { CHART_VERSION_PATTERN } from "./schema-rules";
