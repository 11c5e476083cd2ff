import type { Prng } from "./prng";
import { randomWord } from "./text-generator";

/**
 * An instance of a JSON Schema, as structured output (vLLM's `response_format: json_schema`) makes a model emit:
 * `type` (a list means a choice: its first type other than `null`), `enum`, `const`, `properties`, `required`,
 * `additionalProperties`, `items`/`prefixItems`, `minItems`/`maxItems`, `uniqueItems`, `minimum`/`maximum` and their
 * exclusive forms, an integer `multipleOf`, `minLength`/`maxLength`, common `format`s, `anyOf`/`oneOf` (the first
 * branch) and `$ref` within the document (`$defs`, `definitions`, `#`). Keywords it cannot honour are refused with
 * UnsupportedSchemaError rather than answered with an instance that would not validate. Bounded: past SOFT_DEPTH only
 * what is required is generated, past HARD_DEPTH (a schema whose required parts recurse) it refuses, and sizes are capped.
 */

type Schema = Record<string, unknown>;

const SOFT_DEPTH = 5;
const HARD_DEPTH = 32;
const MAX_SIZE = 1000;

/** Constraints with no instance generator here; a schema using one gets a 400, not an instance that breaks it. */
const REFUSED = [
  "pattern",
  "patternProperties",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "contains",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "$dynamicRef",
  "unevaluatedItems",
] as const;

export class UnsupportedSchemaError extends Error {
  constructor(
    readonly at: string,
    reason: string,
  ) {
    super(`${reason} (at ${at})`);
    this.name = "UnsupportedSchemaError";
  }
}

/** A value valid against `schema` (a JSON Schema document: object or boolean), drawn from `prng`. */
export function jsonInstance(schema: unknown, prng: Prng): unknown {
  return new InstanceGenerator(schema, prng).value(schema, "#", 0);
}

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

const FORMATS: Record<string, (prng: Prng) => string> = {
  "date-time": (p) => `2026-0${p.int(1, 9)}-1${p.int(0, 9)}T0${p.int(0, 9)}:${p.int(10, 59)}:00Z`,
  date: (p) => `2026-0${p.int(1, 9)}-1${p.int(0, 9)}`,
  time: (p) => `0${p.int(0, 9)}:${p.int(10, 59)}:00Z`,
  email: (p) => `${randomWord(p)}@example.com`,
  uri: (p) => `https://example.com/${randomWord(p)}`,
  hostname: (p) => `${randomWord(p)}.example.com`,
  ipv4: (p) => `192.0.2.${p.int(1, 254)}`,
  ipv6: (p) => `2001:db8::${p.int(1, 9999)}`,
  uuid: (p) => {
    const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[p.int(0, 15)]).join("");
    return `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
  },
};
FORMATS.url = FORMATS.uri as (prng: Prng) => string;

class InstanceGenerator {
  constructor(
    private readonly root: unknown,
    private readonly prng: Prng,
  ) {}

  value(schema: unknown, at: string, depth: number): unknown {
    if (depth > HARD_DEPTH) throw new UnsupportedSchemaError(at, `the schema requires nesting deeper than ${HARD_DEPTH} levels`);
    if (schema === true || schema === undefined) return this.words(1, 3);
    if (schema === false) throw new UnsupportedSchemaError(at, "the schema `false` admits no value");
    if (!isSchema(schema)) throw new UnsupportedSchemaError(at, "a schema must be an object or a boolean");
    for (const keyword of REFUSED) {
      if (keyword in schema) throw new UnsupportedSchemaError(at, `the keyword \`${keyword}\` is not supported by the simulator`);
    }
    if (typeof schema.$ref === "string") return this.value(this.resolve(schema.$ref, at), schema.$ref, depth + 1);
    if ("const" in schema) return schema.const;
    if (Array.isArray(schema.enum)) {
      if (schema.enum.length === 0) throw new UnsupportedSchemaError(at, "an empty `enum` admits no value");
      return this.prng.pick(schema.enum);
    }
    for (const key of ["anyOf", "oneOf"] as const) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length > 0) return this.value(branches[0], `${at}/${key}/0`, depth + 1);
    }
    switch (typeOf(schema)) {
      case "null":
        return null;
      case "boolean":
        return this.prng.next() < 0.5;
      case "integer":
        return this.integer(schema, at);
      case "number":
        return this.number(schema, at);
      case "string":
        return this.string(schema, at);
      case "array":
        return this.array(schema, at, depth);
      case "object":
        return this.object(schema, at, depth);
      default:
        return this.words(1, 3);
    }
  }

  /** A `$ref` inside this document: `#`, or a JSON pointer from it (`#/$defs/x`, `#/definitions/x`). */
  private resolve(ref: string, at: string): unknown {
    if (!ref.startsWith("#")) throw new UnsupportedSchemaError(at, `\`$ref\` ${ref} points outside the schema`);
    let node: unknown = this.root;
    for (const raw of ref.slice(1).split("/").slice(1)) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      node = isSchema(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
      if (node === undefined) throw new UnsupportedSchemaError(at, `\`$ref\` ${ref} resolves to nothing`);
    }
    return node;
  }

  private integer(schema: Schema, at: string): number {
    const step = finite(schema.multipleOf) ?? 1;
    if (!Number.isInteger(step) || step <= 0) throw new UnsupportedSchemaError(at, "only a positive integer `multipleOf` is supported");
    const [min, max] = bounds(schema, at);
    const lo = Math.ceil(min.exclusive ? Math.floor(min.value) + 1 : min.value);
    const hi = Math.floor(max.exclusive ? Math.ceil(max.value) - 1 : max.value);
    const kLo = Math.ceil(lo / step);
    const kHi = Math.floor(hi / step);
    if (kLo > kHi) throw new UnsupportedSchemaError(at, "no integer fits the bounds");
    return this.prng.int(kLo, kHi) * step;
  }

  private number(schema: Schema, at: string): number {
    if (schema.multipleOf !== undefined) return this.integer(schema, at);
    const [min, max] = bounds(schema, at);
    const fits = (v: number) => (min.exclusive ? v > min.value : v >= min.value) && (max.exclusive ? v < max.value : v <= max.value);
    const drawn = Math.round((min.value + this.prng.next() * (max.value - min.value)) * 100) / 100;
    for (const candidate of [drawn, (min.value + max.value) / 2, min.value, max.value]) if (fits(candidate)) return candidate;
    throw new UnsupportedSchemaError(at, "no number fits the bounds");
  }

  private string(schema: Schema, at: string): string {
    const minLength = finite(schema.minLength) ?? 0;
    const maxLength = finite(schema.maxLength) ?? Number.POSITIVE_INFINITY;
    if (minLength > maxLength) throw new UnsupportedSchemaError(at, "`minLength` is above `maxLength`");
    if (minLength > MAX_SIZE) throw new UnsupportedSchemaError(at, `\`minLength\` above ${MAX_SIZE}`);
    const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
    if (format) {
      const text = format(this.prng);
      if ([...text].length < minLength || [...text].length > maxLength) throw new UnsupportedSchemaError(at, `a \`${String(schema.format)}\` does not fit the length bounds`);
      return text;
    }
    // Other formats are annotations here, as most validators treat unknown ones.
    let text = this.words(1, 3);
    while (text.length < minLength) text += ` ${randomWord(this.prng)}`;
    return text.length > maxLength ? text.slice(0, maxLength) : text;
  }

  private array(schema: Schema, at: string, depth: number): unknown[] {
    // Draft 2020-12 `prefixItems` + `items`; draft-07's tuple `items` + `additionalItems`.
    const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
    const rest: unknown = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const minItems = Math.max(finite(schema.minItems) ?? 0, 0);
    const maxItems = Math.min(finite(schema.maxItems) ?? Number.POSITIVE_INFINITY, rest === false ? tuple.length : Number.POSITIVE_INFINITY);
    if (minItems > maxItems) throw new UnsupportedSchemaError(at, "`minItems` is above what the array may hold");
    if (minItems > MAX_SIZE) throw new UnsupportedSchemaError(at, `\`minItems\` above ${MAX_SIZE}`);
    const wanted = depth >= SOFT_DEPTH ? minItems : Math.min(Math.max(this.prng.int(1, 3), minItems), maxItems);
    const unique = schema.uniqueItems === true;
    const out: unknown[] = [];
    const seen = new Set<string>();
    for (let attempt = 0; out.length < wanted && attempt < wanted * 10 + 10; attempt++) {
      const i = out.length;
      const item = i < tuple.length ? this.value(tuple[i], `${at}/prefixItems/${i}`, depth + 1) : this.value(rest, `${at}/items`, depth + 1);
      const key = JSON.stringify(item);
      if (unique && seen.has(key)) continue;
      seen.add(key);
      out.push(item);
    }
    if (out.length < minItems) throw new UnsupportedSchemaError(at, "not enough distinct items for `uniqueItems`");
    return out;
  }

  private object(schema: Schema, at: string, depth: number): Record<string, unknown> {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
    const out: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(properties)) {
      // Required properties always; optional ones about half the time, as models do, and none deep down.
      if (required.has(name) || (depth < SOFT_DEPTH && this.prng.next() < 0.5)) out[name] = this.value(sub, `${at}/properties/${name}`, depth + 1);
    }
    for (const name of required) {
      if (name in out) continue;
      if (schema.additionalProperties === false) throw new UnsupportedSchemaError(at, `required property \`${name}\` is not allowed by \`additionalProperties: false\``);
      out[name] = this.value(schema.additionalProperties, `${at}/additionalProperties`, depth + 1);
    }
    return out;
  }

  private words(min: number, max: number): string {
    return Array.from({ length: this.prng.int(min, max) }, () => randomWord(this.prng)).join(" ");
  }
}

/** The schema's type: the first listed other than `null` (a list with `null` is how a nullable value is written). */
function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null") ?? (t.includes("null") ? "null" : undefined);
  if (schema.properties !== undefined || schema.required !== undefined) return "object";
  if (schema.items !== undefined || schema.prefixItems !== undefined) return "array";
  if (schema.minimum !== undefined || schema.maximum !== undefined) return "number";
  return undefined;
}

interface Bound {
  value: number;
  exclusive: boolean;
}

/** Lower and upper bounds, the tighter of inclusive and exclusive; a range of 100 where one side is open. */
function bounds(schema: Schema, at: string): [Bound, Bound] {
  const tighter = (inclusive: number | undefined, exclusive: number | undefined, lower: boolean): Bound | undefined => {
    if (inclusive === undefined) return exclusive === undefined ? undefined : { value: exclusive, exclusive: true };
    if (exclusive === undefined) return { value: inclusive, exclusive: false };
    return (lower ? exclusive >= inclusive : exclusive <= inclusive) ? { value: exclusive, exclusive: true } : { value: inclusive, exclusive: false };
  };
  const min = tighter(finite(schema.minimum), finite(schema.exclusiveMinimum), true);
  const max = tighter(finite(schema.maximum), finite(schema.exclusiveMaximum), false);
  const lo = min ?? { value: max ? Math.min(0, max.value - 100) : 0, exclusive: false };
  const hi = max ?? { value: lo.value + 100, exclusive: false };
  if (lo.value > hi.value) throw new UnsupportedSchemaError(at, "the minimum is above the maximum");
  return [lo, hi];
}
