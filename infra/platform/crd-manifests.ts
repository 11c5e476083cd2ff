// CRD manifests from a folder (every *.yaml under it), for tests that install CRDs into a real API server before the
// objects of their kinds: $AI_PLATFORM_CRDS_DIR, unset by default. A manifest the program applies itself (a CRD set
// in `install` mode) is found by its file name; any other kind by its group and kind.
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import type { Manifest } from "./helm";

export const CRDS_DIR_ENV = "AI_PLATFORM_CRDS_DIR";

export type Crd = Manifest & { spec: { group: string; names: { kind: string; plural: string }; versions: { name: string; served: boolean }[] } };

export interface CrdLibrary {
  readonly dir: string;
  /** The CRDs of the first file named `name` (sorted by path), or undefined. */
  file(name: string): Crd[] | undefined;
  /** The CRD serving `kind` of `apiVersion` (first by path), or undefined. */
  forKind(apiVersion: string, kind: string): Crd | undefined;
}

function yamlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Whether a CRD serves `kind` in `apiVersion` (`<group>/<version>`). */
export function crdServes(crd: Manifest, apiVersion: string, kind: string): boolean {
  if (crd.kind !== "CustomResourceDefinition") return false;
  const { spec } = crd as Crd;
  const [group, version] = apiVersion.split("/");
  return spec.group === group && spec.names.kind === kind && spec.versions.some((v) => v.name === version && v.served);
}

export function loadCrdLibrary(dir: string): CrdLibrary {
  const files = yamlFiles(dir).map((file) => ({
    file,
    crds: parseAllDocuments(fs.readFileSync(file, "utf8"))
      .map((d) => d.toJS() as Manifest | null)
      .filter((m): m is Crd => m?.kind === "CustomResourceDefinition" && m.apiVersion === "apiextensions.k8s.io/v1"),
  }));
  return {
    dir,
    file: (name) => files.find((f) => path.basename(f.file) === name && f.crds.length > 0)?.crds,
    forKind: (apiVersion, kind) => files.flatMap((f) => f.crds).find((c) => crdServes(c, apiVersion, kind)),
  };
}

/** The library of $AI_PLATFORM_CRDS_DIR, or undefined when it is unset or not a folder. */
export function crdLibraryFromEnv(env: NodeJS.ProcessEnv = process.env): CrdLibrary | undefined {
  const dir = env[CRDS_DIR_ENV];
  return dir && fs.existsSync(dir) && fs.statSync(dir).isDirectory() ? loadCrdLibrary(dir) : undefined;
}
