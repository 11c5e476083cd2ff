// Platform pod labels shared by every stack of the platform.
//
// The collector (monitoring stack) filters pods by `<label_domain>/platform=ai-platform` and promotes a few
// `<label_domain>/…` labels to log stream labels; the model-serving stack stamps the same labels on its pods.
// Both must agree on ONE domain, so it is read from a single shared config key, `platform:labelDomain`,
// here and nowhere else.
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { ConfigError, doc, issuesToLines } from "./config";
import { dnsSubdomain } from "./schema-rules";

export { dnsSubdomain };

/** Value of the `<label_domain>/platform` label on every platform pod. */
export const PLATFORM_NAME = "ai-platform";

/** Config namespace and key of the shared label domain. */
export const LABEL_DOMAIN_KEY = "platform:labelDomain";


/** The `platform:` namespace, shared by every stack (only the label domain so far). */
export const platformSchema = z.strictObject({
  labelDomain: dnsSubdomain.meta(
    doc(
      "Domain of the platform's pod labels (`<label_domain>/platform`, `/model-slug`, …): the same in every stack of a cluster.",
      "ai-platform.example.com",
    ),
  ),
});

/** The platform label keys under one domain. */
export interface PlatformLabelKeys {
  readonly platform: string;
  readonly modelSlug: string;
  readonly modelCategory: string;
  readonly nodegroup: string;
}

export function platformLabelKeys(labelDomain: string): PlatformLabelKeys {
  return {
    platform: `${labelDomain}/platform`,
    modelSlug: `${labelDomain}/model-slug`,
    modelCategory: `${labelDomain}/model-category`,
    nodegroup: `${labelDomain}/nodegroup`,
  };
}

/** Validates a raw label domain; returns the issues as `key: message` lines (empty when valid). */
export function checkLabelDomain(raw: string | undefined): string[] {
  if (raw === undefined || raw === "") return [`${LABEL_DOMAIN_KEY}: required (shared label domain of platform pods)`];
  const parsed = dnsSubdomain.safeParse(raw);
  return parsed.success ? [] : issuesToLines("platform", parsed.error.issues, "labelDomain");
}

/** Reads and validates `platform:labelDomain` from the stack configuration. */
export function loadLabelDomain(): string {
  const raw = pulumi.runtime.allConfig()[LABEL_DOMAIN_KEY];
  const problems = checkLabelDomain(raw);
  if (problems.length > 0) throw new ConfigError("platform", problems);
  return raw as string;
}

/**
 * Recommended Kubernetes labels for objects this repository creates directly (not through a chart).
 * `part-of` is the platform name so that any stack can select what the platform owns.
 */
export function standardLabels(name: string, component: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": name,
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/part-of": PLATFORM_NAME,
    "app.kubernetes.io/managed-by": "pulumi",
  };
}

/** The label every namespace carries with its own name (Kubernetes >= 1.21), for NetworkPolicy namespace selectors. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";
