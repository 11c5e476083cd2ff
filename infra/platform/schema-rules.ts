// The value rules every configuration schema shares (Kubernetes names, labels, ports, addresses, versions), defined
// once so that a key means the same thing, with the same message, in every namespace.
import { z } from "zod";

/** RFC 1123 label: namespaces, object names, node groups. */
export const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "must be a DNS label (lowercase letters, digits and '-', at most 63)");

/** RFC 1123 subdomain: label prefixes, storage classes, Secret names. */
export const dnsSubdomain = z
  .string()
  .max(253, "must be at most 253 characters")
  .regex(
    /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/,
    "must be a DNS subdomain (lowercase letters, digits, '-' and '.'), e.g. ai-platform.example.com",
  );

/** Kubernetes label key: optional DNS-subdomain prefix, then a name of at most 63 characters. */
export const labelKey = z.string().regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, "must be a label key");
/** Kubernetes label value: at most 63 characters, possibly empty. */
export const labelValue = z.string().regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/, "must be a label value");
export const labelMap = z.record(labelKey, labelValue);

export const port = z.number().int().min(1, "must be a port (1-65535)").max(65535, "must be a port (1-65535)");

/** An IPv4 or IPv6 CIDR (zod checks the address and the prefix length). */
export const cidr = z.union([z.cidrv4(), z.cidrv6()], { error: "must be a CIDR such as 10.0.12.7/32" });

/** Helm chart versions as pinned here (semver, optional leading `v` as some charts tag). */
export const CHART_VERSION_PATTERN = /^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/;
export const chartVersion = z.string().regex(CHART_VERSION_PATTERN, "must be a chart version such as 14.1.0 or v1.3.0");

export const nonEmpty = z.string().min(1, "must not be empty");

/** Kubernetes resource quantities (`250m`, `1`, `512Mi`). */
export const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/, "must be a quantity such as 250m, 1, 256Mi");

/** Gateway API durations (GEP-2257): `1h`, `30s`, `500ms`, `0s`. */
export const gatewayDuration = z.string().regex(/^([0-9]{1,5}(h|m|s|ms)){1,4}$/, "must be a Gateway API duration such as 600s or 10m");
