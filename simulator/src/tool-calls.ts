import type { Prng } from "./prng";
import { randomWord } from "./text-generator";

/**
 * Fills a function's arguments from its JSON Schema so that the call validates against
 * `properties`/`required`/`enum`/`minimum`/`maximum`: what a well-behaved tool-calling model emits.
 */

type JsonSchema = Record<string, unknown>;

function asSchema(value: unknown): JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonSchema) : {};
}

function schemaType(schema: JsonSchema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null");
  if (schema.properties !== undefined) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function numberBound(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

export function sampleFromSchema(schemaValue: unknown, prng: Prng, depth = 0): unknown {
  const schema = asSchema(schemaValue);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return prng.pick(schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) {
    const nonNull = variants.filter((v) => asSchema(v).type !== "null");
    return sampleFromSchema(nonNull[0] ?? variants[0], prng, depth);
  }
  switch (schemaType(schema)) {
    case "integer": {
      const min = Math.ceil(numberBound(schema.minimum, 0));
      const max = Math.floor(numberBound(schema.maximum, Math.max(min, 0) + 100));
      return max >= min ? prng.int(min, max) : min;
    }
    case "number": {
      const min = numberBound(schema.minimum, 0);
      const max = numberBound(schema.maximum, min + 100);
      return Math.round((min + prng.next() * (max - min)) * 100) / 100;
    }
    case "boolean":
      return prng.next() < 0.5;
    case "null":
      return null;
    case "array": {
      if (depth >= 4) return [];
      const minItems = Math.max(0, numberBound(schema.minItems, 1));
      const count = Math.max(minItems, Math.min(numberBound(schema.maxItems, 2), prng.int(1, 2)));
      return Array.from({ length: count }, () => sampleFromSchema(schema.items, prng, depth + 1));
    }
    case "object":
      return depth >= 4 ? {} : sampleObject(schema, prng, depth);
    default:
      return `${randomWord(prng)} ${randomWord(prng)}`;
  }
}

function sampleObject(schema: JsonSchema, prng: Prng, depth: number): Record<string, unknown> {
  const properties = asSchema(schema.properties);
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []);
  const out: Record<string, unknown> = {};
  for (const [name, propSchema] of Object.entries(properties)) {
    // Required properties always; optional ones about half the time, as models do.
    if (required.has(name) || prng.next() < 0.5) out[name] = sampleFromSchema(propSchema, prng, depth + 1);
  }
  for (const name of required) {
    if (!(name in out)) out[name] = `${randomWord(prng)}`;
  }
  return out;
}

/** The JSON `arguments` string for a function with the given parameters schema. */
export function generateToolArguments(parameters: unknown, prng: Prng): string {
  return JSON.stringify(sampleObject(asSchema(parameters), prng, 0));
}
