// Schema check of custom resources (CRDs) the platform declares directly. kubernetes-models only knows the
// built-in API, so each CRD kind we create gets a zod schema of the fields we set (strict where we own the
// shape), and `validateAnyObject` picks the right check for any object. The field names, patterns, limits and the
// CEL rules (x-kubernetes-validations) follow the CRDs: Gateway API v1.3.0 standard channel
// (config/crd/standard/gateway.networking.k8s.io_{httproutes,gateways}.yaml), cert-manager v1.21 (deploy/crds/
// cert-manager.io_certificates.yaml, plus the checks of its admission webhook, internal/apis/certmanager/validation),
// KEDA 2.20.2 (config/crd/bases/keda.sh_scaledobjects.yaml, the release asset keda-2.20.2-crds.yaml).
import { z } from "zod";
import { modelFor, validateKubernetesObject } from "./k8s-validate";
import { dnsLabel, gatewayDuration as duration, port } from "./schema-rules";

const objectName = z.string().min(1).max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "must be a DNS subdomain");
/** Gateway API `Hostname` (and `PreciseHostname` without the wildcard). */
const gatewayHostname = z.string().min(1).max(253).regex(/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
const preciseHostname = z.string().min(1).max(253).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
/** Gateway API `SectionName`. */
const sectionName = z.string().min(1).max(253).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
const groupName = z.string().max(253).regex(/^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
const kindName = z.string().min(1).max(63).regex(/^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/);
const objectMeta = z.object({
  name: objectName,
  namespace: dnsLabel.optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** gateway.networking.k8s.io/v1 HTTPRoute: the fields the platform sets (Gateway API v1.x standard channel). */
export const HttpRouteSchema = z.strictObject({
  apiVersion: z.literal("gateway.networking.k8s.io/v1"),
  kind: z.literal("HTTPRoute"),
  metadata: objectMeta,
  spec: z.strictObject({
    parentRefs: z
      .array(
        z.strictObject({
          group: z.literal("gateway.networking.k8s.io").optional(),
          kind: z.literal("Gateway").optional(),
          name: objectName,
          namespace: dnsLabel.optional(),
          sectionName: objectName.optional(),
          port: port.optional(),
        }),
      )
      .min(1)
      .max(32)
      .refine((refs) => {
        // The CRD's rules on several references to one parent: each names its section, and no two the same.
        const key = (r: { group?: string; kind?: string; name: string; namespace?: string }) => `${r.group ?? ""}/${r.kind ?? ""}/${r.namespace ?? ""}/${r.name}`;
        const byParent = new Map<string, (string | undefined)[]>();
        for (const r of refs) byParent.set(key(r), [...(byParent.get(key(r)) ?? []), r.sectionName]);
        return [...byParent.values()].every((sections) => sections.length === 1 || (sections.every((x) => x) && new Set(sections).size === sections.length));
      }, "sectionName must be specified, and unique, when parentRefs includes 2 or more references to the same parent"),
    hostnames: z.array(z.string().min(1).max(253).regex(/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/)).max(16).optional(),
    rules: z
      .array(
        z.strictObject({
          matches: z
            .array(z.strictObject({ path: z.strictObject({ type: z.enum(["Exact", "PathPrefix", "RegularExpression"]), value: z.string().startsWith("/").max(1024) }) }))
            .max(64)
            .optional(),
          filters: z
            .array(
              z.discriminatedUnion("type", [
                z.strictObject({
                  type: z.literal("URLRewrite"),
                  urlRewrite: z.strictObject({ path: z.strictObject({ type: z.literal("ReplacePrefixMatch"), replacePrefixMatch: z.string().startsWith("/") }) }),
                }),
                z.strictObject({
                  type: z.literal("RequestRedirect"),
                  requestRedirect: z.strictObject({
                    scheme: z.enum(["http", "https"]).optional(),
                    hostname: preciseHostname.optional(),
                    port: port.optional(),
                    statusCode: z.union([z.literal(301), z.literal(302)]).optional(),
                  }),
                }),
              ]),
            )
            .max(16)
            .refine((fs) => fs.filter((f) => f.type === "RequestRedirect").length <= 1, "RequestRedirect filter cannot be repeated")
            .refine((fs) => fs.filter((f) => f.type === "URLRewrite").length <= 1, "URLRewrite filter cannot be repeated")
            .refine((fs) => !(fs.some((f) => f.type === "RequestRedirect") && fs.some((f) => f.type === "URLRewrite")), "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both")
            .optional(),
          // A Service (core group, port required) or an InferencePool of the Gateway API Inference Extension.
          backendRefs: z
            .array(
              z.union([
                z.strictObject({ group: z.literal("").optional(), kind: z.literal("Service").optional(), name: objectName, port, weight: z.number().int().min(0).optional() }),
                z.strictObject({
                  group: z.enum(["inference.networking.k8s.io", "inference.networking.x-k8s.io"]),
                  kind: z.literal("InferencePool"),
                  name: objectName,
                  port: port.optional(),
                  weight: z.number().int().min(0).optional(),
                }),
              ]),
            )
            .max(16)
            .optional(),
          timeouts: z.strictObject({ request: duration.optional(), backendRequest: duration.optional() }).optional(),
        })
        .refine((r) => !((r.backendRefs?.length ?? 0) > 0 && (r.filters ?? []).some((f) => f.type === "RequestRedirect")), "RequestRedirect filter must not be used together with backendRefs"),
      )
      .min(1)
      .max(16),
  }),
});

const listenerSchema = z.strictObject({
  name: sectionName,
  hostname: gatewayHostname.optional(),
  port,
  protocol: z.string().min(1).max(255).regex(/^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$/),
  tls: z
    .strictObject({
      mode: z.enum(["Terminate", "Passthrough"]).optional(),
      certificateRefs: z
        .array(z.strictObject({ group: groupName.optional(), kind: kindName.optional(), name: z.string().min(1).max(253), namespace: dnsLabel.optional() }))
        .max(64)
        .optional(),
      options: z.record(z.string(), z.string().max(4096)).optional(),
    })
    .refine((t) => (t.mode ?? "Terminate") !== "Terminate" || (t.certificateRefs?.length ?? 0) > 0 || Object.keys(t.options ?? {}).length > 0, "certificateRefs or options must be specified when mode is Terminate")
    .optional(),
  allowedRoutes: z
    .strictObject({
      namespaces: z
        .strictObject({
          from: z.enum(["All", "Selector", "Same"]).optional(),
          selector: z.strictObject({ matchLabels: z.record(z.string(), z.string()).optional(), matchExpressions: z.array(z.unknown()).optional() }).optional(),
        })
        .optional(),
      kinds: z.array(z.strictObject({ group: groupName.optional(), kind: kindName })).max(8).optional(),
    })
    .optional(),
});

/** gateway.networking.k8s.io/v1 Gateway: the fields the platform sets, with the listener rules of the CRD. */
export const GatewaySchema = z.strictObject({
  apiVersion: z.literal("gateway.networking.k8s.io/v1"),
  kind: z.literal("Gateway"),
  metadata: objectMeta,
  spec: z.strictObject({
    gatewayClassName: z.string().min(1).max(253),
    listeners: z
      .array(listenerSchema)
      .min(1)
      .max(64)
      .refine((ls) => ls.every((l) => !["HTTP", "TCP", "UDP"].includes(l.protocol) || l.tls === undefined), "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']")
      .refine((ls) => ls.every((l) => l.protocol !== "HTTPS" || l.tls === undefined || (l.tls.mode ?? "Terminate") === "Terminate"), "tls mode must be Terminate for protocol HTTPS")
      .refine((ls) => ls.every((l) => !["TCP", "UDP"].includes(l.protocol) || !l.hostname), "hostname must not be specified for protocols ['TCP', 'UDP']")
      .refine((ls) => new Set(ls.map((l) => l.name)).size === ls.length, "Listener name must be unique within the Gateway")
      .refine((ls) => new Set(ls.map((l) => `${l.port}/${l.protocol}/${l.hostname ?? ""}`)).size === ls.length, "Combination of port, protocol and hostname must be unique for each listener"),
  }),
});

/** cert-manager.io/v1 Certificate: the fields the platform sets, with what the CRD and cert-manager's webhook refuse. */
export const CertificateSchema = z.strictObject({
  apiVersion: z.literal("cert-manager.io/v1"),
  kind: z.literal("Certificate"),
  metadata: objectMeta,
  spec: z
    .strictObject({
      secretName: objectName,
      secretTemplate: z
        .strictObject({
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z
            .record(z.string(), z.string())
            .refine((a) => !Object.keys(a).some((k) => k.startsWith("cert-manager.io/")), "cert-manager.io/* annotations are not allowed")
            .optional(),
        })
        .optional(),
      commonName: z.string().max(64).optional(),
      dnsNames: z.array(z.string().min(1)).optional(),
      issuerRef: z.strictObject({ name: z.string().min(1), kind: z.enum(["Issuer", "ClusterIssuer"]).optional(), group: z.literal("cert-manager.io").optional() }),
      privateKey: z
        .strictObject({
          algorithm: z.enum(["RSA", "ECDSA", "Ed25519"]).optional(),
          encoding: z.enum(["PKCS1", "PKCS8"]).optional(),
          rotationPolicy: z.enum(["Never", "Always"]).optional(),
          size: z.number().int().optional(),
        })
        .optional(),
    })
    .refine((s) => s.commonName !== undefined || (s.dnsNames?.length ?? 0) > 0, "at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set"),
});

const int32 = (min: number) => z.number().int().min(min).max(2 ** 31 - 1);
const scalingPolicy = z.strictObject({ type: z.enum(["Pods", "Percent"]), value: int32(1), periodSeconds: int32(1).max(1800) });
const scalingRules = z.strictObject({
  stabilizationWindowSeconds: int32(0).max(3600).optional(),
  selectPolicy: z.enum(["Max", "Min", "Disabled"]).optional(),
  policies: z.array(scalingPolicy).optional(),
});

/** keda.sh/v1alpha1 ScaledObject (KEDA 2.20.2): the fields the platform sets, with the CRD's limits and CEL rule. */
export const ScaledObjectSchema = z.strictObject({
  apiVersion: z.literal("keda.sh/v1alpha1"),
  kind: z.literal("ScaledObject"),
  metadata: objectMeta,
  spec: z
    .strictObject({
      scaleTargetRef: z.strictObject({ apiVersion: z.string().optional(), kind: z.string().optional(), name: objectName }),
      minReplicaCount: int32(0).optional(),
      maxReplicaCount: int32(1).optional(),
      pollingInterval: int32(1).optional(),
      cooldownPeriod: int32(0).optional(),
      initialCooldownPeriod: int32(0).optional(),
      advanced: z
        .strictObject({
          // The HPA's behavior, copied verbatim by KEDA (autoscaling/v2 HorizontalPodAutoscalerBehavior).
          horizontalPodAutoscalerConfig: z.strictObject({ name: z.string().optional(), behavior: z.strictObject({ scaleUp: scalingRules.optional(), scaleDown: scalingRules.optional() }).optional() }).optional(),
          restoreToOriginalReplicaCount: z.boolean().optional(),
        })
        .optional(),
      triggers: z.array(
        z.strictObject({
          type: z.string().min(1),
          name: z.string().optional(),
          metricType: z.enum(["AverageValue", "Value", "Utilization"]).optional(),
          metadata: z.record(z.string(), z.string()),
        }),
      ),
    })
    .refine((s) => s.minReplicaCount === undefined || s.minReplicaCount <= (s.maxReplicaCount ?? 100), "minReplicaCount must be less than or equal to maxReplicaCount"),
});

/** CRD kinds with a schema here, by `apiVersion/kind`. */
export const CRD_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  "gateway.networking.k8s.io/v1/HTTPRoute": HttpRouteSchema,
  "gateway.networking.k8s.io/v1/Gateway": GatewaySchema,
  "cert-manager.io/v1/Certificate": CertificateSchema,
  "keda.sh/v1alpha1/ScaledObject": ScaledObjectSchema,
};

/** Validates a custom resource against its schema; throws naming the object and the offending fields. */
export function validateCustomObject(obj: Record<string, unknown>): void {
  const key = `${String(obj.apiVersion ?? "")}/${String(obj.kind ?? "")}`;
  const schema = CRD_SCHEMAS[key];
  if (!schema) throw new Error(`no schema known for ${key}`);
  const parsed = schema.safeParse(obj);
  if (!parsed.success) {
    const name = (obj.metadata as { name?: string } | undefined)?.name ?? "(unnamed)";
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${String(obj.kind)} ${name} is not a valid ${key}: ${problems.join("; ")}`);
  }
}

/** Built-in kinds through kubernetes-models, CRDs through CRD_SCHEMAS; anything else fails (nothing goes unchecked). */
export function validateAnyObject(obj: Record<string, unknown>): void {
  if (modelFor(String(obj.apiVersion ?? ""), String(obj.kind ?? ""))) validateKubernetesObject(obj);
  else validateCustomObject(obj);
}
