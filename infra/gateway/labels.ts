// Labels of the gateway's objects and pods.
import { NAMESPACE_NAME_LABEL, PLATFORM_NAME, platformLabelKeys, standardLabels } from "../platform/labels";
import { POD_SECURITY_LABEL_KEYS, type PodSecurityLevel, podSecurityLabels } from "../platform/pod-security";
import type { ExposureSettings } from "./exposure-config";
import { APP_NAME, PART_OF } from "./constants";

/** Selects the gateway pods (Service, PDB, NetworkPolicy, topology spread); never changes once deployed. */
export function selectorLabels(): Record<string, string> {
  return { "app.kubernetes.io/name": APP_NAME, "app.kubernetes.io/instance": APP_NAME };
}

/**
 * Every gateway object and pod: the recommended labels with part-of `app-serving` (see PART_OF) and the platform
 * label `<label_domain>/platform: ai-platform`, which is what makes the collector ship the pods' logs.
 */
export function gatewayLabels(labelDomain: string): Record<string, string> {
  return {
    ...standardLabels(APP_NAME, APP_NAME),
    ...selectorLabels(),
    "app.kubernetes.io/part-of": PART_OF,
    [platformLabelKeys(labelDomain).platform]: PLATFORM_NAME,
  };
}

/** Labels of the gateway namespace the stack sets itself. */
const OWN_NAMESPACE_LABELS: Readonly<Record<string, string>> = { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi" };

/** Label keys `gateway:namespaceLabels` may not set: the stack's own, its Pod Security ones, and the name label the API server sets. */
export const FIXED_NAMESPACE_LABEL_KEYS: readonly string[] = [...Object.keys(OWN_NAMESPACE_LABELS), ...POD_SECURITY_LABEL_KEYS, NAMESPACE_NAME_LABEL];

/**
 * The gateway namespace's Pod Security level: restricted (the gateway and its Valkey pass it), baseline with a Gateway
 * of its own, whose implementation may run its proxy pods in the Gateway's namespace with a security context the
 * platform does not set (Istio's sets no seccomp profile, which restricted requires).
 */
export function gatewayPodSecurityLevel(exposure: ExposureSettings | undefined): PodSecurityLevel {
  return exposure?.ownGateway ? "baseline" : "restricted";
}

/** The gateway Namespace's labels as declared: `gateway:namespaceLabels` and the stack's own. */
export function gatewayNamespaceLabels(extra: Readonly<Record<string, string>>, exposure: ExposureSettings | undefined): Record<string, string> {
  return { ...extra, ...OWN_NAMESPACE_LABELS, ...podSecurityLabels(gatewayPodSecurityLevel(exposure)) };
}

/** The same labels as the cluster will hold them once the stack is applied (the API server adds the name label). */
export function storedNamespaceLabels(namespace: string, extra: Readonly<Record<string, string>>, exposure: ExposureSettings | undefined): Record<string, string> {
  return { ...gatewayNamespaceLabels(extra, exposure), [NAMESPACE_NAME_LABEL]: namespace };
}
