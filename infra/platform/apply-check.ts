// Applying a set of rendered objects to a real API server the way a deploy does, and reading what the server made
// of them: CRDs first (each waited for until its kind is served), then Namespaces, then everything else, each by
// server-side apply with strict field validation; what was refused and why; what a second apply changed; which
// fields the server did not keep as sent; and a Pod made from every workload's template, as a dry run.
import type { Manifest } from "./helm";
import { type KubeApi, KubeApiError, type KubeObject } from "./kube-api";
import { podOwners } from "./manifests";

/** `Kind namespace/name`, how an object is named in messages. */
export function objectId(o: Pick<Manifest, "kind" | "metadata">): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
}

export interface Refusal {
  readonly object: string;
  readonly message: string;
}

const FIRST = ["CustomResourceDefinition", "Namespace"];

/** CRDs, then Namespaces, then the rest in their given order. */
export function applyOrder<T extends Pick<Manifest, "kind">>(objects: readonly T[]): T[] {
  const rank = (o: T) => (FIRST.includes(o.kind) ? FIRST.indexOf(o.kind) : FIRST.length);
  return [...objects].sort((a, b) => rank(a) - rank(b));
}

/** An object as rendered, and the namespace a deploy puts it in when it names none and its kind is namespaced. */
export interface Rendered {
  readonly obj: Manifest;
  /** A chart's release namespace; the provider's default namespace for an object declared directly. */
  readonly namespace: string;
}

/** The object with its namespace filled in where its kind is namespaced and it names none. */
async function placed(api: KubeApi, { obj, namespace }: Rendered): Promise<Manifest> {
  const info = await api.resourceFor(obj.apiVersion, obj.kind);
  if (!info?.namespaced || obj.metadata.namespace) return obj;
  return { ...obj, metadata: { ...obj.metadata, namespace } };
}

/**
 * Namespaces the objects may live in that they do not declare, each with its `default` ServiceAccount (which the
 * controller-manager would make; pods without a serviceAccountName are admitted only once it exists): what the
 * cluster is assumed to have, not part of what is checked.
 */
export async function ensureNamespaces(api: KubeApi, rendered: readonly Rendered[]): Promise<void> {
  const names = new Set(rendered.map((r) => r.obj.metadata.namespace ?? r.namespace));
  for (const r of rendered) if (r.obj.kind === "Namespace") names.add(r.obj.metadata.name);
  for (const name of [...names].sort()) {
    if ((await api.raw("GET", `/api/v1/namespaces/${name}`)).status === 404) await api.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    await api.apply({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: name } });
  }
}

/** Applies CRDs and waits until each accepted one's kind is served. */
export async function installCrds(api: KubeApi, crds: readonly Manifest[]): Promise<Applied> {
  const result = await applyEach(api, crds);
  for (const crd of result.stored.keys()) await api.waitEstablished(crd.metadata.name);
  api.forgetDiscovery();
  return result;
}

export interface Applied {
  /** What the server stored for each accepted object (the key is the object as sent). */
  readonly stored: Map<Manifest, KubeObject>;
  readonly refusals: Refusal[];
}

/** Server-side applies each object in turn; what the server stored for each accepted one, and every refusal. */
export async function applyEach(api: KubeApi, objects: readonly Manifest[]): Promise<Applied> {
  const stored = new Map<Manifest, KubeObject>();
  const refusals: Refusal[] = [];
  for (const obj of objects) {
    try {
      stored.set(obj, await api.apply(obj));
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
      refusals.push({ object: objectId(obj), message: `${err.status} ${err.message}` });
    }
  }
  return { stored, refusals };
}

/**
 * A deploy's first apply: the CRDs among the objects (then their kinds are waited for), then every other object, in
 * its namespace, Namespaces first. Returns what was sent (placed) with what the server made of it.
 */
export async function applyAll(api: KubeApi, rendered: readonly Rendered[]): Promise<Applied & { sent: Manifest[] }> {
  const crdObjects = rendered.filter((r) => r.obj.kind === "CustomResourceDefinition").map((r) => r.obj);
  const crds = await installCrds(api, crdObjects);
  const rest: Manifest[] = [];
  for (const r of rendered) if (r.obj.kind !== "CustomResourceDefinition") rest.push(await placed(api, r));
  const ordered = applyOrder(rest);
  const others = await applyEach(api, ordered);
  return { sent: [...crdObjects, ...ordered], stored: new Map([...crds.stored, ...others.stored]), refusals: [...crds.refusals, ...others.refusals] };
}

/**
 * What a second apply of each object changed, against the object as it is just before (the server's own writes since
 * the first apply, such as a CRD's status, are not the apply's). A changed generation, or a changed object, is a
 * change: the deploy's next apply would change it again. A new resourceVersion with the object otherwise the same is
 * the server persisting a default it had only filled in on read (a PersistentVolumeClaim's `status.phase: Pending` is
 * stored by the first update after its create): that settles, which a third apply proves; one that does not is a change.
 */
export async function changedByReapply(api: KubeApi, objects: Iterable<Manifest>): Promise<{ changed: string[]; settledOnce: string[] }> {
  const changed: string[] = [];
  const settledOnce: string[] = [];
  for (const obj of objects) {
    const first = await api.get(obj);
    const second = await api.apply(obj);
    if (second.metadata.resourceVersion === first.metadata.resourceVersion) continue;
    const differs = differences(withoutVolatile(first), withoutVolatile(second));
    if (second.metadata.generation === first.metadata.generation && differs.length === 0) {
      const third = await api.apply(obj);
      if (third.metadata.resourceVersion === second.metadata.resourceVersion) {
        settledOnce.push(objectId(obj));
        continue;
      }
    }
    const generation = second.metadata.generation !== first.metadata.generation ? `, generation ${first.metadata.generation} → ${second.metadata.generation}` : "";
    changed.push(`${objectId(obj)}: resourceVersion ${first.metadata.resourceVersion} → ${second.metadata.resourceVersion}${generation}${differs.length ? `; ${differs.join(", ")}` : ""}`);
  }
  return { changed, settledOnce };
}

function withoutVolatile(o: KubeObject): unknown {
  const { resourceVersion: _rv, generation: _g, managedFields, ...metadata } = o.metadata as KubeObject["metadata"] & { managedFields?: { time?: string }[] };
  return { ...o, metadata: { ...metadata, managedFields: managedFields?.map(({ time: _t, ...m }) => m) } };
}

type Json = unknown;
const isMap = (v: Json): v is Record<string, Json> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Paths where `a` and `b` differ (a value only one of them has counts). */
export function differences(a: Json, b: Json, at = ""): string[] {
  if (isMap(a) && isMap(b)) return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) => differences(a[k], b[k], `${at}.${k}`));
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((x, i) => differences(x, b[i], `${at}[${i}]`));
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [at || "."];
}

/** A value the API leaves out when it serialises an object (Go's omitempty): absent and this are the same to it. */
function isZero(v: Json): boolean {
  return v === null || v === false || v === 0 || v === "" || (Array.isArray(v) && v.length === 0) || (isMap(v) && Object.values(v).every(isZero));
}

/**
 * Values the program sends that the server does not keep as sent (a value normalised, a field dropped): each is a
 * difference between the program's inputs and the live object that no apply removes. Paths of `sent` only: defaults
 * the server adds are fine; a `null` sets nothing (manifests carry `creationTimestamp: null`). A zero value the
 * server omits (`false`, `0`, `""`, an empty list or map) is reported only with `zeroValues: "reported"`: for the
 * objects the program writes itself, where one (`egress: []`) made every apply rewrite the object; a chart's
 * templates are full of them, harmless to the charts' own upgrades.
 */
export function unstoredFields(sent: Json, stored: Json, options: { readonly zeroValues?: "omitted" | "reported" } = {}): string[] {
  const omitZero = options.zeroValues !== "reported";
  const walk = (sent: Json, stored: Json, at: string): string[] => {
    if (isMap(sent)) {
      if (!isMap(stored)) return omitZero && isZero(sent) && stored === undefined ? [] : [at || "."];
      return Object.keys(sent)
        .filter((k) => sent[k] !== undefined && sent[k] !== null && !(omitZero && stored[k] === undefined && isZero(sent[k])))
        .flatMap((k) => (stored[k] === undefined ? [`${at}.${k}`] : walk(sent[k], stored[k], `${at}.${k}`)));
    }
    if (Array.isArray(sent)) {
      if (!Array.isArray(stored) || stored.length !== sent.length) return [at];
      return sent.flatMap((x, i) => walk(x, stored[i], `${at}[${i}]`));
    }
    return JSON.stringify(sent) === JSON.stringify(stored) ? [] : [`${at} (${JSON.stringify(sent)} stored as ${JSON.stringify(stored)})`];
  };
  return walk(sent, stored, "");
}

/** The volumes a StatefulSet's controller adds to its first pod: one claim per volumeClaimTemplate (`<template>-<set>-0`). */
function claimVolumes(o: Manifest): Record<string, unknown>[] {
  if (o.kind !== "StatefulSet") return [];
  const templates = ((o.spec as { volumeClaimTemplates?: { metadata: { name: string } }[] } | undefined)?.volumeClaimTemplates ?? []);
  return templates.map((t) => ({ name: t.metadata.name, persistentVolumeClaim: { claimName: `${t.metadata.name}-${o.metadata.name}-0` } }));
}

/** A Pod from the template of every workload (and every bare Pod), in the workload's namespace, as its controller makes it. */
export function workloadPods(objects: readonly Manifest[]): { owner: string; pod: Manifest }[] {
  return objects.flatMap((o) =>
    podOwners([o]).map((p) => {
      const claims = claimVolumes(o);
      const spec = claims.length > 0 ? { ...p.spec, volumes: [...(p.spec.volumes ?? []), ...claims] } : p.spec;
      return {
        owner: objectId(o),
        pod: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: `${p.name}-dry-run`, namespace: o.metadata.namespace, labels: p.metadata.labels, annotations: p.metadata.annotations },
          spec,
        },
      };
    }),
  );
}

/** Each pod created as a dry run (admission and validation run, nothing is stored); the refusals. */
export async function dryRunPods(api: KubeApi, pods: readonly { owner: string; pod: Manifest }[]): Promise<Refusal[]> {
  const refusals: Refusal[] = [];
  for (const { owner, pod } of pods) {
    try {
      await api.createDryRun(pod);
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
      refusals.push({ object: `Pod of ${owner}`, message: `${err.status} ${err.message}` });
    }
  }
  return refusals;
}
