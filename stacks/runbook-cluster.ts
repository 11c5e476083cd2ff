// A cluster for the runbook's kubectl commands in a test: a real kube-apiserver on loopback
// (infra/platform/apiserver.ts) behind a kubeconfig whose context has the page's name, the real kubectl of the npm
// package helm comes from, a shell that runs a page's command line as written, and a stack's objects applied as
// `pulumi up` sends them (stack-objects.ts renders them, apply-check.ts applies them). Nothing reconciles: no nodes,
// pods or controllers, so a command is run here only if the API server alone answers it.
import { spawn, spawnSync } from "child_process";
import { stringify } from "yaml";
import { applyAll, ensureNamespaces, installCrds, type Refusal } from "../infra/platform/apply-check";
import type { ApiServer } from "../infra/platform/apiserver";
import type { CrdLibrary } from "../infra/platform/crd-manifests";
import { type Manifest, packagedBinary } from "../infra/platform/helm";
import { objectsToApply, renderStackObjects } from "./stack-objects";

/** $KUBECTL, else the kubectl beside helm in the npm package (unpacked once); undefined when neither runs. */
export function kubectlBinary(): string | undefined {
  const bin = process.env.KUBECTL || packagedBinary("kubectl/kubectl");
  return bin && spawnSync(bin, ["version", "--client"]).status === 0 ? bin : undefined;
}

/** A kubeconfig with one cluster, user and context, all named `context`, for the API server's admin token. */
export function kubeconfig(credentials: ApiServer["credentials"], context: string): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: context, cluster: { server: credentials.url, "certificate-authority-data": Buffer.from(credentials.ca).toString("base64") } }],
    users: [{ name: context, user: { token: credentials.token } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
  });
}

export interface ShellResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The command was still running at the deadline and was stopped (with every process it started). */
  readonly timedOut: boolean;
}

/** `bash -c script` with exactly `env`; at `timeoutMs` its whole process group is killed (a pipeline's kubectl too). */
export function runShell(script: string, env: Record<string, string>, timeoutMs: number): Promise<ShellResult> {
  return new Promise((resolve) => {
    const proc = spawn("bash", ["-c", script], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-(proc.pid as number), "SIGKILL");
    }, timeoutMs);
    proc.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, timedOut });
    });
  });
}

/**
 * CRDs the cluster is assumed to have for `kinds` (`apiVersion`, `kind`), from the library, installed: what a
 * runbook's prerequisites put there (a Gateway API implementation, cert-manager). Returns the refusals.
 */
export async function installClusterCrds(api: ApiServer["api"], library: CrdLibrary, kinds: readonly (readonly [string, string])[]): Promise<Refusal[]> {
  const crds = kinds.map(([apiVersion, kind]) => {
    const crd = library.forKind(apiVersion, kind);
    if (!crd) throw new Error(`no CRD for ${apiVersion} ${kind} in ${library.dir}`);
    return crd;
  });
  return (await installCrds(api, crds)).refusals;
}

export interface AppliedStack {
  /** The objects sent, each in its namespace. */
  readonly sent: Manifest[];
  readonly refusals: Refusal[];
  /** Custom resources whose kind neither the stack, the cluster nor the library serves (left out). */
  readonly withoutCrd: string[];
}

/**
 * What `pulumi up` sends for a stack configuration, applied: its CRD sets (from the library, by file name), then the
 * objects it declares and its charts render, by server-side apply with strict field validation. A custom resource
 * whose CRD the cluster lacks gets it from the library, as a cluster with that controller installed has it.
 */
export async function applyStack(api: ApiServer["api"], helm: string, library: CrdLibrary, config: Record<string, string>, secretKeys: readonly string[]): Promise<AppliedStack> {
  const { rendered, clusterCrds, withoutCrd } = await objectsToApply(api, await renderStackObjects(helm, config, secretKeys), library);
  const fixtures = await installCrds(api, clusterCrds);
  await ensureNamespaces(api, rendered);
  const { sent, refusals } = await applyAll(api, rendered);
  return { sent, refusals: [...fixtures.refusals, ...refusals], withoutCrd: withoutCrd.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.name}`) };
}
