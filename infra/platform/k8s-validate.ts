// Schema check of Kubernetes objects against the Kubernetes OpenAPI schema, through kubernetes-models
// (generated from the upstream OpenAPI spec). Any stack can feed it the objects it declares.
import * as models from "kubernetes-models";
import { redactSecrets, type ResourceRecord } from "./mocks";

type ModelClass = new (data: unknown) => { validate(): void };

/** `networking.k8s.io` → `networkingK8sIo`, the export name kubernetes-models uses for an API group. */
function groupExportName(group: string): string {
  return group
    .split(".")
    .map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join("")
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The kubernetes-models class for an apiVersion/kind, or undefined when the library has none (e.g. a CRD). */
export function modelFor(apiVersion: string, kind: string): ModelClass | undefined {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const root = models as unknown as Record<string, Record<string, Record<string, unknown>>>;
  const versions = group === "" ? { [apiVersion]: root.v1 as unknown as Record<string, unknown> } : root[groupExportName(group ?? "")];
  const mod = versions?.[version ?? ""] as Record<string, unknown> | undefined;
  const cls = mod?.[kind];
  return typeof cls === "function" ? (cls as ModelClass) : undefined;
}

/**
 * Validates one object; throws with the schema errors. An object of a kind the library does not know fails too:
 * the point is that nothing declared goes unchecked.
 */
export function validateKubernetesObject(obj: Record<string, unknown>): void {
  const apiVersion = String(obj.apiVersion ?? "");
  const kind = String(obj.kind ?? "");
  const Model = modelFor(apiVersion, kind);
  if (!Model) throw new Error(`no Kubernetes schema known for ${apiVersion}/${kind}`);
  const name = (obj.metadata as { name?: string } | undefined)?.name ?? "(unnamed)";
  try {
    new Model(obj).validate();
  } catch (err) {
    throw new Error(`${kind} ${name} is not a valid ${apiVersion}/${kind}: ${(err as Error).message}`);
  }
}

/** True for a recorded resource that is a Kubernetes object declared directly (not a Helm chart or a provider). */
export function isKubernetesObject(r: ResourceRecord): boolean {
  return r.custom && /^kubernetes:[^:]+\/[^:]+:[A-Za-z]+$/.test(r.type) && !r.type.startsWith("kubernetes:helm.sh/");
}

/**
 * The Kubernetes object a recorded resource stands for, as it would be sent to the API server: inputs with
 * secrets redacted and `metadata.name` filled in from the resource name when the program left it to auto-naming.
 */
export function toManifest(r: ResourceRecord): Record<string, unknown> {
  const obj = redactSecrets(r.inputs) as Record<string, unknown>;
  const metadata = { ...((obj.metadata as Record<string, unknown> | undefined) ?? {}) };
  if (metadata.name === undefined) metadata.name = r.name;
  return { ...obj, metadata };
}
