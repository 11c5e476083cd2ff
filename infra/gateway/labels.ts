// Labels of the gateway's objects and pods.
import { PLATFORM_NAME, platformLabelKeys, standardLabels } from "../platform/labels";
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
