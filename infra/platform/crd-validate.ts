// Schema check of custom resources (CRDs) the platform declares directly. kubernetes-models only knows the
// built-in API, so each CRD kind we create gets a zod schema of the fields we set (strict where we own the
// shape), and `validateAnyObject` picks the right check for any object.
import { z } from "zod";
import { modelFor, validateKubernetesObject } from "./k8s-validate";
import { dnsLabel, gatewayDuration as duration, port } from "./schema-rules";

const objectName = z.string().min(1).max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "must be a DNS subdomain");
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
      .max(32),
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
              z.strictObject({
                type: z.literal("URLRewrite"),
                urlRewrite: z.strictObject({ path: z.strictObject({ type: z.literal("ReplacePrefixMatch"), replacePrefixMatch: z.string().startsWith("/") }) }),
              }),
            )
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
            .max(16),
          timeouts: z.strictObject({ request: duration.optional(), backendRequest: duration.optional() }).optional(),
        }),
      )
      .min(1)
      .max(16),
  }),
});

/** CRD kinds with a schema here, by `apiVersion/kind`. */
export const CRD_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  "gateway.networking.k8s.io/v1/HTTPRoute": HttpRouteSchema,
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
