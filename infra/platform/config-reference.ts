// The configuration reference (docs/configuration.md), generated from the zod schemas that validate the stack
// configuration, so the page cannot say something the code does not do. Each key's description and examples come
// from its `.meta(doc(…))`; type and default from zod's own JSON Schema. `npm run docs:config` writes the page; a test
// fails when the committed page and the schemas differ, and validates every example against its key's schema.
import { z } from "zod";

/** One configuration namespace of the stacks. */
export interface NamespaceReference {
  readonly namespace: string;
  readonly title: string;
  /** What the namespace configures and who needs it (Markdown). */
  readonly intro: string;
  readonly schema: z.ZodObject;
  /** Keys set with `pulumi config set --secret`. */
  readonly secretKeys: readonly string[];
}

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
  examples?: unknown[];
};

export interface KeyRow {
  readonly key: string;
  readonly type: string;
  readonly default?: unknown;
  readonly required: boolean;
  readonly secret: boolean;
  readonly description: string;
  readonly examples: readonly unknown[];
}

const code = (v: unknown) => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``;

const KiB = 1024;
const MiB = KiB * KiB;

/** A default as people read it, by the setting's unit suffix: 4 MiB, 10 s, 8,192. */
export function formatDefault(key: string, value: number): string {
  if (key.endsWith("Bytes")) {
    if (value % MiB === 0) return `${value / MiB} MiB`;
    if (value % KiB === 0) return `${value / KiB} KiB`;
    return `${value.toLocaleString("en-US")} bytes`;
  }
  if (key.endsWith("Ms")) return value % 1000 === 0 ? `${value / 1000} s` : `${value} ms`;
  return value.toLocaleString("en-US");
}

/** Maps with more keys than this show as `map of name → …`: the description says which names. */
const LISTED_PROPERTY_NAMES = 8;

/** A short, readable type from a JSON Schema node. */
export function typeOf(s: JsonSchema): string {
  if (s.const !== undefined) return code(s.const);
  if (s.enum) return s.enum.map(code).join(" | ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" or ");
  const range = (n: JsonSchema) =>
    n.minimum !== undefined && n.maximum !== undefined && n.maximum < Number.MAX_SAFE_INTEGER ? ` ${n.minimum}–${n.maximum}` : n.minimum !== undefined ? ` ≥ ${n.minimum}` : "";
  switch (s.type) {
    case "array":
      return `list of ${s.items ? typeOf(s.items) : "values"}`;
    case "object":
      if (s.properties && Object.keys(s.properties).length > 0) return "object";
      if (typeof s.additionalProperties === "object") {
        const names = s.propertyNames && (s.propertyNames.enum?.length ?? 0) <= LISTED_PROPERTY_NAMES ? typeOf(s.propertyNames) : s.propertyNames ? "name" : "string";
        return `map of ${names} → ${typeOf(s.additionalProperties)}`;
      }
      return "object";
    case "integer":
    case "number":
      return `${s.type}${range(s)}`;
    case undefined:
      return "any";
    default:
      return Array.isArray(s.type) ? s.type.join(" or ") : s.type;
  }
}

/** Every key of a namespace, objects with named properties expanded one level (`crds.inferencePool`). */
export function keyRows(ref: NamespaceReference): KeyRow[] {
  const json = z.toJSONSchema(ref.schema, { io: "input", unrepresentable: "any" }) as JsonSchema & { required?: string[] };
  const rows: KeyRow[] = [];
  for (const [key, s] of Object.entries(json.properties ?? {})) {
    const secret = ref.secretKeys.includes(key);
    rows.push({
      key,
      type: secret ? "secret string" : typeOf(s),
      default: s.default !== undefined && !(typeof s.default === "object" && s.default !== null && Object.keys(s.default).length === 0 && s.properties) ? s.default : undefined,
      required: json.required?.includes(key) ?? false,
      secret,
      description: s.description ?? "",
      examples: s.examples ?? [],
    });
    if (s.type === "object" && s.properties) {
      for (const [sub, t] of Object.entries(s.properties)) {
        rows.push({ key: `${key}.${sub}`, type: typeOf(t), default: t.default, required: false, secret: false, description: t.description ?? "", examples: t.examples ?? [] });
      }
    }
  }
  return rows;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The first example that says more than the Default column; none when every example is the default. */
function exampleCell(r: KeyRow): string {
  const shown = r.examples.find((e) => JSON.stringify(e) !== JSON.stringify(r.default));
  return shown === undefined ? "" : cell(code(shown));
}

export function renderNamespace(ref: NamespaceReference): string {
  const rows = keyRows(ref);
  const lines = [
    `## \`${ref.namespace}:\` ${ref.title}`,
    "",
    ref.intro,
    "",
    "| Key | Type | Default | Description | Example |",
    "|---|---|---|---|---|",
    // A secret's type says so, and the page's preamble how to set one; a required key says so in its type.
    ...rows.map((r) =>
      [
        `\`${ref.namespace}:${r.key}\``,
        cell(r.required ? `${r.type}, required` : r.type),
        r.default === undefined ? "" : cell(code(r.default)),
        cell(r.description),
        r.secret ? "" : exampleCell(r),
      ].join(" | ").replace(/^/, "| ").replace(/$/, " |"),
    ),
    "",
  ];
  return lines.join("\n");
}

/** One environment variable of a process, as a row of its reference table. */
export interface EnvRow {
  readonly name: string;
  /** As shown: a code span, `unset`, or a value with its readable form. */
  readonly default: string;
  readonly description: string;
  /** How a stack sets it (Markdown). */
  readonly setBy: string;
}

/** A section of the reference that is not a configuration namespace: a table of environment variables. */
export interface EnvReference {
  readonly heading: string;
  readonly intro: string;
  readonly rows: readonly EnvRow[];
}

export function renderEnvReference(ref: EnvReference): string {
  return [
    `## ${ref.heading}`,
    "",
    ref.intro,
    "",
    "| Variable | Default | Description | In a stack |",
    "|---|---|---|---|",
    ...ref.rows.map((r) => `| \`${r.name}\` | ${cell(r.default)} | ${cell(r.description)} | ${cell(r.setBy)} |`),
    "",
  ].join("\n");
}

export function renderReference(title: string, preamble: string, refs: readonly NamespaceReference[], envRefs: readonly EnvReference[] = []): string {
  return [`# ${title}`, "", preamble, "", ...refs.map(renderNamespace), ...envRefs.map(renderEnvReference)].join("\n");
}
