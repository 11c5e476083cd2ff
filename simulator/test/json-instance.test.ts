import Ajv2020 from "ajv/dist/2020";
import { jsonInstance, UnsupportedSchemaError } from "../src/json-instance";
import { createPrng } from "../src/prng";

/** The structured-output instance generator: every instance it draws must validate against its schema (ajv 8, draft 2020-12). */

const ajv = new Ajv2020({ strict: false, validateFormats: false });

const SCHEMAS: Record<string, object> = {
  "a flat object, all required (OpenAI strict mode)": {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer" }, score: { type: "number" }, ok: { type: "boolean" }, none: { type: "null" } },
    required: ["name", "age", "score", "ok", "none"],
    additionalProperties: false,
  },
  "optional properties": { type: "object", properties: { a: { type: "string" }, b: { type: "integer" } } },
  "enum and const": { type: "object", properties: { color: { enum: ["red", "green", 3, null] }, kind: { const: { fixed: [1, 2] } } }, required: ["color", "kind"] },
  "bounds, inclusive and exclusive": {
    type: "object",
    properties: {
      pct: { type: "number", minimum: 0, maximum: 1 },
      tiny: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 0.001 },
      neg: { type: "integer", maximum: -5 },
      open: { type: "integer", exclusiveMinimum: 9.5, exclusiveMaximum: 12 },
      step: { type: "integer", minimum: 1, maximum: 50, multipleOf: 7 },
      point: { type: "number", minimum: 2.5, maximum: 2.5 },
    },
    required: ["pct", "tiny", "neg", "open", "step", "point"],
  },
  "string lengths and formats": {
    type: "object",
    properties: {
      short: { type: "string", maxLength: 3 },
      long: { type: "string", minLength: 40 },
      exact: { type: "string", minLength: 5, maxLength: 5 },
      empty: { type: "string", maxLength: 0 },
      when: { type: "string", format: "date-time" },
      id: { type: "string", format: "uuid" },
      mail: { type: "string", format: "email" },
    },
    required: ["short", "long", "exact", "empty", "when", "id", "mail"],
  },
  "arrays with bounds, tuples and unique items": {
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 4 },
      none: { type: "array", items: { type: "integer" }, maxItems: 0 },
      pair: { type: "array", prefixItems: [{ type: "integer" }, { type: "string" }], items: false },
      flags: { type: "array", items: { type: "boolean" }, uniqueItems: true, minItems: 2 },
      many: { type: "array", items: { type: "integer", minimum: 0, maximum: 9 }, minItems: 12 },
    },
    required: ["tags", "none", "pair", "flags", "many"],
  },
  "nullable via type lists": {
    type: "object",
    properties: { maybe: { type: ["string", "null"] }, only: { type: ["null"] }, num: { type: ["null", "number"] } },
    required: ["maybe", "only", "num"],
  },
  "anyOf and oneOf take the first branch": {
    type: "object",
    properties: {
      either: { anyOf: [{ type: "integer" }, { type: "string" }] },
      one: { oneOf: [{ type: "object", properties: { k: { const: "a" } }, required: ["k"] }, { type: "string" }] },
      nullable: { anyOf: [{ type: "null" }, { type: "string" }] },
    },
    required: ["either", "one", "nullable"],
  },
  "nested objects in arrays in objects": {
    type: "object",
    properties: {
      orders: {
        type: "array",
        minItems: 1,
        items: {
          type: "object",
          properties: {
            id: { type: "string" },
            lines: { type: "array", items: { type: "object", properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } }, required: ["sku", "qty"] } },
            address: { type: "object", properties: { city: { type: "string" }, zip: { type: "string", minLength: 5, maxLength: 5 } }, required: ["city", "zip"] },
          },
          required: ["id", "lines", "address"],
        },
      },
    },
    required: ["orders"],
  },
  "$ref to $defs": {
    $defs: { point: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"], additionalProperties: false } },
    type: "object",
    properties: { from: { $ref: "#/$defs/point" }, to: { $ref: "#/$defs/point" }, path: { type: "array", items: { $ref: "#/$defs/point" } } },
    required: ["from", "to", "path"],
  },
  "$ref to definitions (draft-07 style)": {
    definitions: { color: { type: "string", enum: ["red", "blue"] } },
    type: "array",
    items: { $ref: "#/definitions/color" },
    minItems: 1,
  },
  "a recursive tree through $ref": {
    $defs: { node: { type: "object", properties: { value: { type: "integer" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["value"] } },
    $ref: "#/$defs/node",
  },
  "recursion through the root": { type: "object", properties: { name: { type: "string" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } }, required: ["name"] },
  "required names not among the properties": { type: "object", properties: { a: { type: "string" } }, required: ["a", "b"], additionalProperties: { type: "integer" } },
  "empty and boolean schemas": { type: "object", properties: { anything: {}, yes: true }, required: ["anything", "yes"] },
  "a top-level array of strings": { type: "array", items: { type: "string" } },
  "a top-level scalar": { type: "integer", minimum: 3, maximum: 3 },
};

describe("jsonInstance: instances validate against their schema", () => {
  test.each(Object.entries(SCHEMAS))("%s", (_name, schema) => {
    const validate = ajv.compile(schema);
    for (let seed = 1; seed <= 60; seed++) {
      const instance = jsonInstance(schema, createPrng(seed));
      if (!validate(instance)) throw new Error(`seed ${seed}: ${JSON.stringify(instance)} fails: ${ajv.errorsText(validate.errors)}`);
    }
  });

  test("the same seed gives the same instance; other seeds vary", () => {
    const schema = SCHEMAS["nested objects in arrays in objects"];
    expect(jsonInstance(schema, createPrng(7))).toEqual(jsonInstance(schema, createPrng(7)));
    const distinct = new Set(Array.from({ length: 10 }, (_, seed) => JSON.stringify(jsonInstance(schema, createPrng(seed)))));
    expect(distinct.size).toBeGreaterThan(5);
  });
});

describe("jsonInstance: what it cannot honour is refused, naming the keyword and where", () => {
  test.each([
    ["pattern", { type: "object", properties: { id: { type: "string", pattern: "^[A-Z]{3}$" } }, required: ["id"] }, "`pattern`", "#/properties/id"],
    ["allOf", { allOf: [{ type: "object" }] }, "`allOf`", "#"],
    ["not", { not: { type: "string" } }, "`not`", "#"],
    ["a fractional multipleOf", { type: "number", multipleOf: 0.1 }, "multipleOf", "#"],
    ["an empty enum", { enum: [] }, "empty `enum`", "#"],
    ["the false schema", { type: "object", properties: { no: false }, required: ["no"] }, "`false`", "#/properties/no"],
    ["bounds that cross", { type: "integer", minimum: 5, maximum: 4 }, "minimum is above", "#"],
    ["no integer between the bounds", { type: "integer", exclusiveMinimum: 1, exclusiveMaximum: 2 }, "no integer", "#"],
    ["minLength above maxLength", { type: "string", minLength: 4, maxLength: 2 }, "`minLength`", "#"],
    ["an oversized array", { type: "array", minItems: 100000 }, "`minItems` above", "#"],
    ["too few distinct items", { type: "array", items: { type: "boolean" }, uniqueItems: true, minItems: 3 }, "distinct", "#"],
    ["a required property that may not exist", { type: "object", properties: {}, required: ["x"], additionalProperties: false }, "`x`", "#"],
    ["a $ref outside the document", { $ref: "https://example.com/schema.json" }, "outside", "#"],
    ["a $ref to nothing", { $ref: "#/$defs/missing" }, "resolves to nothing", "#"],
    ["required recursion without end", { $defs: { n: { type: "object", properties: { next: { $ref: "#/$defs/n" } }, required: ["next"] } }, $ref: "#/$defs/n" }, "deeper than", "#/$defs/n"],
  ])("%s", (_name, schema, reason, at) => {
    let error: unknown;
    try {
      jsonInstance(schema, createPrng(1));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UnsupportedSchemaError);
    expect((error as UnsupportedSchemaError).message).toContain(reason);
    expect((error as UnsupportedSchemaError).at).toBe(at);
  });
});
