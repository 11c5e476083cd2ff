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

/**
 * The region an S3 client signs its requests for (SigV4): an AWS region such as `us-east-1`, or the name another
 * store answers to (`auto` on Google Cloud Storage, `default` on many Ceph gateways). S3-compatible stores without
 * regions accept any name; AWS refuses a request signed for another region than the bucket's.
 */
export const s3Region = z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "must be a region name such as us-east-1 (lowercase letters, digits and '-')");
/** The region S3 clients sign with where a stack names none (AWS's first region; what S3-compatible stores expect). */
export const DEFAULT_S3_REGION = "us-east-1";

// A container image reference as container runtimes parse it (the distribution project's reference grammar):
// [host[:port]/]path[:tag][@sha256:<64 hex>]. A host is told apart from the first path component by its '.' or ':'
// (or by being `localhost`), as the runtimes do.
const HOST_LABEL = String.raw`[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?`;
const IMAGE_HOST = String.raw`(?:localhost(?::[0-9]+)?|${HOST_LABEL}(?:\.${HOST_LABEL})+(?::[0-9]+)?|${HOST_LABEL}:[0-9]+)`;
const IMAGE_PATH_COMPONENT = String.raw`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`;
const IMAGE_REFERENCE = new RegExp(
  String.raw`^(?:${IMAGE_HOST}/)?${IMAGE_PATH_COMPONENT}(?:/${IMAGE_PATH_COMPONENT})*(?<tag>:[\w][\w.-]{0,127})?(?<digest>@sha256:[a-f0-9]{64})?$`,
);

/** An image with a tag, a digest or both (`repo:tag`, `repo@sha256:…`, `repo:tag@sha256:…`); a bare repository is refused. */
export const imageReference = z
  .string()
  .max(255, "must be at most 255 characters")
  .refine((ref) => {
    const m = IMAGE_REFERENCE.exec(ref);
    return m !== null && (m.groups?.tag !== undefined || m.groups?.digest !== undefined);
  }, "must be an image reference with a tag or a digest, such as registry.example.com/team/app:1.2.0 or docker.io/library/app@sha256:<64 hex digits>");

/**
 * An image reference that names one build: a digest, or a tag other than `latest` (rollouts and rollbacks must mean
 * something). Composes with `imageReference`, whose message a reference without a tag or digest gets.
 */
export const pinnedImage = imageReference.refine((ref) => ref.includes("@") || !ref.endsWith(":latest"), "must be pinned: a tag other than latest, or a digest");
