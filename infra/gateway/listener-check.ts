// What an existing Gateway (read from the cluster at preview) would do with the routes `gateway:exposure` attaches
// to it, by the Gateway API's attachment rules: the listener named (or every listener, when none is), its protocol,
// `allowedRoutes` (namespaces From Same/All/Selector, and kinds) and its host name. A route no listener admits is
// silently ignored by the controller; one an HTTP listener admits serves the API without TLS. Both fail the preview.
import { z } from "zod";
import { FIXED_NAMESPACE_LABEL_KEYS } from "./labels";

const labelSelectorSchema = z.object({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() })).optional(),
});
type LabelSelector = z.infer<typeof labelSelectorSchema>;

/** The fields of a Gateway listener the check reads (gateway.networking.k8s.io/v1; the CRD requires name and protocol). */
const listenerSchema = z.object({
  name: z.string(),
  protocol: z.string(),
  port: z.number().int().optional(),
  hostname: z.string().optional(),
  allowedRoutes: z
    .object({
      namespaces: z.object({ from: z.enum(["All", "Same", "Selector"]).optional(), selector: labelSelectorSchema.optional() }).optional(),
      kinds: z.array(z.object({ group: z.string().optional(), kind: z.string() })).optional(),
    })
    .optional(),
});
export type ListenerView = z.infer<typeof listenerSchema>;

/** The fields of a Gateway's spec the check reads; the CRD requires both. */
export const gatewaySpecSchema = z.object({ gatewayClassName: z.string(), listeners: z.array(listenerSchema) });
export type GatewayView = z.infer<typeof gatewaySpecSchema>;

export interface AttachmentArgs {
  /** `namespace/name` of the Gateway, for messages. */
  readonly gateway: string;
  readonly gatewayNamespace: string;
  /** Namespace of the routes, and its labels as the cluster will hold them (kubernetes.io/metadata.name included). */
  readonly routeNamespace: string;
  readonly routeNamespaceLabels: Readonly<Record<string, string>>;
  readonly httpsListener?: string;
  readonly httpListener?: string;
  readonly hostnames?: readonly string[];
}

const KEY = "gateway:exposure";

/** Kubernetes label-selector semantics (matchLabels AND matchExpressions). */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e) => {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const value = labels[e.key];
    switch (e.operator) {
      case "In":
        return has && (e.values ?? []).includes(value as string);
      case "NotIn":
        return !has || !(e.values ?? []).includes(value as string);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
      default:
        return false;
    }
  });
  return byLabel && byExpression;
}

/**
 * The labels that, added to `labels`, make the selector match: what `gateway:namespaceLabels` must set. Undefined when
 * no addition can (a NotIn or DoesNotExist the labels meet already, an In without values, or a label the stack fixes).
 */
export function labelsToMatch(selector: LabelSelector, labels: Readonly<Record<string, string>>, fixedKeys: readonly string[]): Record<string, string> | undefined {
  const needed: Record<string, string> = {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) needed[k] = v;
  for (const e of selector.matchExpressions ?? []) {
    const value = labels[e.key];
    if (e.operator === "In" && !(value !== undefined && (e.values ?? []).includes(value)) && e.values?.[0] !== undefined) needed[e.key] ??= e.values[0];
    // Any value will do; "true" is what such selectors usually ask for.
    if (e.operator === "Exists" && value === undefined) needed[e.key] ??= "true";
  }
  if (Object.keys(needed).some((k) => fixedKeys.includes(k))) return undefined;
  return selectorMatches(selector, { ...labels, ...needed }) ? needed : undefined;
}

/** Gateway API host-name intersection: exact, or a listener wildcard `*.x` matching any name ending in `.x`. */
export function hostnamesIntersect(listener: string | undefined, route: readonly string[] | undefined): boolean {
  if (!listener || !route || route.length === 0) return true;
  const covers = (wild: string, name: string) => wild.startsWith("*.") && name.endsWith(wild.slice(1)) && name.length > wild.length - 1;
  return route.some((r) => r === listener || covers(listener, r) || covers(r, listener));
}

/** Why a listener would not take an HTTPRoute from the route namespace; undefined when it would. */
export function admissionProblem(l: ListenerView, a: AttachmentArgs): string | undefined {
  const from = l.allowedRoutes?.namespaces?.from ?? "Same";
  if (from === "Same" && a.gatewayNamespace !== a.routeNamespace) {
    return `admits routes from its own namespace only (allowedRoutes.namespaces.from: Same): its owner must set from: All, or from: Selector matching namespace ${a.routeNamespace} (e.g. kubernetes.io/metadata.name: ${a.routeNamespace})`;
  }
  const selector = l.allowedRoutes?.namespaces?.selector ?? {};
  if (from === "Selector" && !selectorMatches(selector, a.routeNamespaceLabels)) {
    const needed = labelsToMatch(selector, a.routeNamespaceLabels, FIXED_NAMESPACE_LABEL_KEYS);
    const fix = needed
      ? `: give it the labels ${JSON.stringify(needed)} with gateway:namespaceLabels`
      : `, and no labels gateway:namespaceLabels may set would make it one: its owner must change the selector`;
    return `admits routes from the namespaces its selector matches (allowedRoutes.namespaces.selector ${JSON.stringify(selector)}), and namespace ${a.routeNamespace} (labels ${JSON.stringify(a.routeNamespaceLabels)}) is not one of them${fix}`;
  }
  const kinds = l.allowedRoutes?.kinds;
  if (kinds && kinds.length > 0 && !kinds.some((k) => k.kind === "HTTPRoute" && (k.group ?? "gateway.networking.k8s.io") === "gateway.networking.k8s.io")) {
    return `admits only ${kinds.map((k) => k.kind).join(", ")} (allowedRoutes.kinds), not HTTPRoute`;
  }
  if (!hostnamesIntersect(l.hostname, a.hostnames)) return `is for host ${l.hostname}, which none of gateway:exposure hostnames (${(a.hostnames ?? []).join(", ")}) matches`;
  return undefined;
}

const describe = (l: ListenerView) => `listener "${l.name}" (${l.protocol}${l.port ? ` ${l.port}` : ""})`;

/** The spec of an existing Gateway as the cluster returned it, or the `gateway:exposure …` line saying it is malformed. */
export function parseExistingGateway(spec: unknown, gateway: string): { readonly gateway: GatewayView } | { readonly problem: string } {
  const parsed = gatewaySpecSchema.safeParse(spec);
  if (parsed.success) return { gateway: parsed.data };
  const why = parsed.error.issues.map((i) => `${["spec", ...i.path].join(".")}: ${i.message}`).join("; ");
  return { problem: `${KEY} [existingGateway]: Gateway ${gateway}, as read from the cluster, is not a Gateway the preview can check: ${why}` };
}

/** `gateway:exposure …` lines for an existing Gateway that would not serve the routes as configured. */
export function attachmentProblems(gw: GatewayView, a: AttachmentArgs): string[] {
  const listeners = gw.listeners;
  const names = listeners.map((l) => l.name).join(", ") || "none";
  const problems: string[] = [];
  const named = (key: string, name: string) => {
    const l = listeners.find((x) => x.name === name);
    if (!l) problems.push(`${KEY} [existingGateway.${key}]: Gateway ${a.gateway} has no listener "${name}" (its listeners: ${names})`);
    return l;
  };

  if (a.httpsListener !== undefined) {
    const l = named("httpsListener", a.httpsListener);
    if (l && l.protocol !== "HTTPS") problems.push(`${KEY} [existingGateway.httpsListener]: ${describe(l)} of Gateway ${a.gateway} does not terminate TLS: name its HTTPS listener`);
    const why = l && admissionProblem(l, a);
    if (l && why) problems.push(`${KEY} [existingGateway.httpsListener]: ${describe(l)} of Gateway ${a.gateway} would not attach the API route: it ${why}`);
  } else {
    // No sectionName: the route attaches to every listener that admits it.
    const admitting = listeners.filter((l) => (l.protocol === "HTTP" || l.protocol === "HTTPS") && admissionProblem(l, a) === undefined);
    const plain = admitting.filter((l) => l.protocol === "HTTP");
    if (plain.length > 0) {
      problems.push(`${KEY} [existingGateway.httpsListener]: required: without it the API route also attaches to ${plain.map(describe).join(", ")} of Gateway ${a.gateway}, serving API keys over plain HTTP; name the HTTPS listener`);
    } else if (admitting.length === 0) {
      const why = listeners.map((l) => `${describe(l)} ${l.protocol === "HTTP" || l.protocol === "HTTPS" ? admissionProblem(l, a) : "is not an HTTP listener"}`);
      problems.push(`${KEY} [existingGateway]: no listener of Gateway ${a.gateway} would attach the API route: ${why.join("; ") || "it has none"}`);
    }
  }

  if (a.httpListener !== undefined) {
    const l = named("httpListener", a.httpListener);
    if (l && l.protocol !== "HTTP") problems.push(`${KEY} [existingGateway.httpListener]: ${describe(l)} of Gateway ${a.gateway} is not a plain-HTTP listener: the redirect belongs on the HTTP one`);
    const why = l && admissionProblem(l, a);
    if (l && why) problems.push(`${KEY} [existingGateway.httpListener]: ${describe(l)} of Gateway ${a.gateway} would not attach the redirect route: it ${why}`);
  }
  return problems;
}
