// Offline render: evaluates a Pulumi program on the engine's mocks and writes what it declares.
//   <out>/resources.json   every resource as { type, name, inputs, options } (Helm charts with their full values;
//                          options: the provider and the lifecycle options the engine received), secrets replaced
//                          by "[secret]"
//   <out>/manifests/       every Kubernetes object declared directly, one YAML file each
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { isKubernetesObject, toManifest } from "./k8s-validate";
import { redactSecrets, type ResourceRecord, runWithMocks } from "./mocks";
import { resolveStackConfig } from "./stack-config";

export interface RenderOptions {
  readonly stack: string;
  readonly out: string;
  readonly projectRoot: string;
  readonly project: string;
  /** Secrets the program reads; missing ones render with a placeholder value. */
  readonly knownSecretKeys: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Loads the program (imports it), after the mocks are installed. */
  readonly program: () => Promise<unknown>;
}

/** The options a reviewer audits lifecycle by; absent ones are left out. */
export interface RenderedOptions {
  readonly provider?: string;
  readonly dependsOn?: string[];
  readonly retainOnDelete?: true;
  readonly deleteBeforeReplace?: boolean;
  readonly customTimeouts?: ResourceRecord["customTimeouts"];
  readonly ignoreChanges?: string[];
  /** Engine-side transforms (on a Chart or ConfigFile: retainOnDelete for every rendered object). */
  readonly transforms?: number;
  /** Read from the cluster (`Resource.get`), not managed. */
  readonly read?: true;
}

export interface RenderedResource {
  readonly type: string;
  readonly name: string;
  readonly inputs: unknown;
  readonly options: RenderedOptions;
}

export function renderedOptions(r: ResourceRecord): RenderedOptions {
  return {
    ...(r.provider ? { provider: r.provider } : {}),
    ...(r.dependsOn.length > 0 ? { dependsOn: [...r.dependsOn] } : {}),
    ...(r.retainOnDelete ? { retainOnDelete: true as const } : {}),
    ...(r.deleteBeforeReplace !== undefined ? { deleteBeforeReplace: r.deleteBeforeReplace } : {}),
    ...(r.customTimeouts ? { customTimeouts: r.customTimeouts } : {}),
    ...(r.ignoreChanges.length > 0 ? { ignoreChanges: [...r.ignoreChanges] } : {}),
    ...(r.transforms > 0 ? { transforms: r.transforms } : {}),
    ...(r.read ? { read: true as const } : {}),
  };
}

export function toRendered(r: ResourceRecord): RenderedResource {
  return { type: r.type, name: r.name, inputs: redactSecrets(r.inputs), options: renderedOptions(r) };
}

export function manifestFileName(obj: Record<string, unknown>): string {
  const meta = (obj.metadata ?? {}) as { name?: string; namespace?: string };
  const parts = [String(obj.kind ?? "object"), meta.namespace, meta.name].filter((p): p is string => typeof p === "string" && p !== "");
  return `${parts.join("-").toLowerCase().replace(/[^a-z0-9.-]/g, "_")}.yaml`;
}

export async function render(opts: RenderOptions): Promise<{ resources: RenderedResource[]; manifests: string[] }> {
  const { config, secretKeys } = resolveStackConfig({
    stackFile: path.join(opts.projectRoot, `Pulumi.${opts.stack}.yaml`),
    project: opts.project,
    env: opts.env,
    knownSecretKeys: opts.knownSecretKeys,
  });
  const { resources } = await runWithMocks(opts.program, { config, secretKeys, project: opts.project, stack: opts.stack });

  const rendered = resources.map(toRendered);
  fs.rmSync(opts.out, { recursive: true, force: true });
  const manifestDir = path.join(opts.out, "manifests");
  fs.mkdirSync(manifestDir, { recursive: true });
  fs.writeFileSync(path.join(opts.out, "resources.json"), JSON.stringify(rendered, null, 2) + "\n");
  const manifests: string[] = [];
  for (const r of resources.filter(isKubernetesObject)) {
    const obj = toManifest(r);
    const file = manifestFileName(obj);
    fs.writeFileSync(path.join(manifestDir, file), stringify(obj));
    manifests.push(file);
  }
  return { resources: rendered, manifests };
}
