import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { parse as parseYaml } from "yaml";
import { applyExceptions } from "./known-exceptions";

/**
 * OpenAI's published OpenAPI document (openai/openai-openapi, OpenAPI 3.1), read at test time and compiled with Ajv
 * in JSON Schema 2020-12 mode: what a strict, schema-generated client accepts. The file is data from outside the
 * repository (`../shared/reference/openai-openapi/`, or `$OPENAI_OPENAPI`); it is never copied in.
 */

export const OPENAPI_FILE = process.env.OPENAI_OPENAPI ?? path.resolve(__dirname, "../../../../shared/reference/openai-openapi/openapi.yaml");

/** Why the document cannot be read here, or undefined when it can. */
export function openApiMissing(): string | undefined {
  if (existsSync(OPENAPI_FILE)) return undefined;
  return `OpenAI's OpenAPI document not found at ${OPENAPI_FILE}: set $OPENAI_OPENAPI or put openai/openai-openapi's openapi.yaml there`;
}

/**
 * A suite that needs the document. It is data from outside the repository, not a package CI installs, so it skips
 * with a warning wherever it is absent, in CI too.
 */
export function describeWithOpenApi(name: string, fn: () => void): void {
  const missing = openApiMissing();
  if (!missing) return describe(name, fn);
  console.warn(`${name}: skipped: ${missing}`);
  describe.skip(`${name} (skipped: ${missing})`, fn);
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const ID = "https://openapi.invalid/openai";

/**
 * OpenAPI keywords that JSON Schema 2020-12 does not define, rewritten to what they mean. The document is 3.1 but still
 * writes 3.0's `nullable: true` (Ajv's own support refuses it beside a `$ref`), and 2019-09's `$recursiveRef: "#"`,
 * meaning the component it sits in. `discriminator`, `x-*`, `example` only annotate: Ajv ignores them (strict off).
 */
function toJsonSchema(node: Json, component?: string): Json {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, component));
  if (node === null || typeof node !== "object") return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "nullable") continue;
    if (key === "$recursiveRef" && value === "#" && component) out.$ref = `#/components/schemas/${component}`;
    else out[key] = toJsonSchema(value, component);
  }
  return node.nullable === true ? { anyOf: [out, { type: "null" }] } : out;
}

/** `format`s of the document beyond ajv-formats: OpenAPI's numeric ones and OpenAI's `unixtime`. */
function addOpenApiFormats(ajv: Ajv2020): void {
  ajv.addFormat("unixtime", { type: "number", validate: (n: number) => Number.isFinite(n) && n >= 0 });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat("float", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat("binary", { type: "string", validate: () => true });
}

export interface OpenApi {
  /** `info.version` of the document. */
  version: string;
  /** The schema a 2xx answer of an operation must match, as a JSON pointer into the document. */
  responsePointer(apiPath: string, method: string, status?: number, media?: string): string;
  /** The schema of an error answer: the operation's own, if it declares one for the status, else `ErrorResponse`. */
  errorPointer(apiPath: string, method: string, status: number): string;
  /** The headers the operation declares for a status (e.g. 429's Retry-After), with their schema pointers. */
  declaredHeaders(apiPath: string, method: string, status: number): Record<string, string>;
  /** The member of `ResponseStreamEvent` for an event `type`. */
  streamEventPointer(type: string): string | undefined;
  /** Problems with `value` against the schema at `pointer`, one readable line each; empty when it conforms. */
  check(pointer: string, value: unknown): string[];
}

let cached: OpenApi | undefined;

/** The document, parsed and compiled once per test file (about 1 s to parse). */
export function loadOpenApi(): OpenApi {
  cached ??= build(parseYaml(readFileSync(OPENAPI_FILE, "utf8")) as JsonObject);
  return cached;
}

const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

function at(doc: Json, pointer: string): Json | undefined {
  let node: Json | undefined = doc;
  const rest = pointer.replace(/^#/, "");
  if (rest === "") return doc;
  for (const raw of rest.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    node = node !== null && typeof node === "object" ? (node as Record<string, Json>)[key] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

function build(raw: JsonObject): OpenApi {
  applyExceptions(raw);
  const components = raw.components as JsonObject;
  const schemas = Object.fromEntries(Object.entries(components.schemas as JsonObject).map(([name, s]) => [name, toJsonSchema(s, name)]));
  const doc: JsonObject = { $id: ID, paths: toJsonSchema(raw.paths ?? {}), components: { ...components, schemas } };

  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  addOpenApiFormats(ajv);
  ajv.addSchema(doc as object);
  const compiled = new Map<string, ValidateFunction>();

  /** `#/paths/...` of an operation's response for a status, following a `$ref` into `components/responses`. */
  function responseAt(apiPath: string, method: string, status: number): string | undefined {
    let pointer = `#/paths/${escapePointer(apiPath)}/${method.toLowerCase()}/responses/${status}`;
    const node = at(doc, pointer);
    if (node === undefined) return undefined;
    const ref = (node as JsonObject).$ref;
    if (typeof ref === "string") pointer = ref;
    return pointer;
  }

  const events = new Map<string, string>();
  const union = schemas.ResponseStreamEvent as JsonObject;
  for (const member of (union.anyOf ?? union.oneOf) as JsonObject[]) {
    const ref = member.$ref as string;
    const type = at(doc, `${ref}/properties/type`) as JsonObject | undefined;
    const name = (type?.enum as string[] | undefined)?.[0] ?? (type?.const as string | undefined);
    if (name) events.set(name, ref);
  }

  function compile(pointer: string): ValidateFunction {
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${ID}${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  }

  /** The schema a pointer names, through any chain of bare `$ref`s. */
  function deref(pointer: string): { pointer: string; schema: JsonObject } {
    let schema = (at(doc, pointer) ?? {}) as JsonObject;
    while (typeof schema.$ref === "string" && schema.$ref.startsWith("#/")) {
      pointer = schema.$ref;
      schema = (at(doc, pointer) ?? {}) as JsonObject;
    }
    return { pointer, schema };
  }

  /** The `type` values a union member declares (`enum` or `const` of its `type` property). */
  function typeTags(pointer: string): unknown[] {
    const { pointer: p, schema } = deref(pointer);
    const type = (schema.properties as JsonObject | undefined)?.type as JsonObject | undefined;
    if (type) return [...((type.enum as unknown[] | undefined) ?? []), ...("const" in type ? [type.const] : [])];
    return ((schema.allOf as Json[] | undefined) ?? []).flatMap((_, i) => typeTags(`${p}/allOf/${i}`));
  }

  /**
   * Why `value` fails the schema at `pointer`, narrowed to where it fails: a union is followed into the member its
   * `type` (or non-null-ness) selects, objects and arrays into the fields that fail, so that an error names a field
   * of one schema rather than every alternative's. Ajv's own errors are the fallback when nothing narrows them.
   */
  function explain(pointer: string, value: unknown, where: string): string[] {
    const validate = compile(pointer);
    if (validate(value)) return [];
    const { pointer: p, schema } = deref(pointer);
    const union = schema.oneOf ? "oneOf" : schema.anyOf ? "anyOf" : undefined;
    if (union) {
      const members = (schema[union] as Json[]).map((_, i) => `${p}/${union}/${i}`);
      const tag = value !== null && typeof value === "object" ? (value as Record<string, unknown>).type : undefined;
      const tagged = typeof tag === "string" ? members.filter((m) => typeTags(m).includes(tag)) : [];
      const nonNull = value === null ? [] : members.filter((m) => deref(m).schema.type !== "null");
      const chosen = tagged.length === 1 ? tagged : nonNull.length === 1 ? nonNull : [];
      // A member that passes alone means the union failed otherwise (oneOf matching twice): Ajv's errors say so.
      const inner = chosen.length === 1 ? explain(chosen[0]!, value, where) : [];
      if (inner.length) return inner;
    }
    const deeper: string[] = [];
    ((schema.allOf as Json[] | undefined) ?? []).forEach((_, i) => deeper.push(...explain(`${p}/allOf/${i}`, value, where)));
    const properties = schema.properties as JsonObject | undefined;
    if (properties && value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [key, v] of Object.entries(value)) {
        if (key in properties) deeper.push(...explain(`${p}/properties/${escapePointer(key)}`, v, `${where}/${key}`));
      }
    }
    if (schema.items && Array.isArray(value)) (value as unknown[]).forEach((v, i) => deeper.push(...explain(`${p}/items`, v, `${where}/${i}`)));
    // Once narrowed, only this schema's own rules on this value remain (its allOf members spoke for themselves).
    const ownRule = (e: ErrorObject) => e.instancePath === "" && !e.schemaPath.startsWith("#/allOf/") && ["required", "type", "additionalProperties", "enum", "const"].includes(e.keyword);
    const own = (validate.errors ?? []).filter((e) => !deeper.length || ownRule(e));
    return [...new Set([...deeper, ...describeErrors(own, value, where, p)])];
  }

  return {
    version: String((raw.info as JsonObject).version),
    responsePointer(apiPath, method, status = 200, media = "application/json") {
      const response = responseAt(apiPath, method, status);
      const pointer = `${response}/content/${escapePointer(media)}/schema`;
      if (!response || at(doc, pointer) === undefined) throw new Error(`the document declares no ${media} schema for ${method.toUpperCase()} ${apiPath} ${status}`);
      return pointer;
    },
    errorPointer(apiPath, method, status) {
      const response = responseAt(apiPath, method, status);
      const pointer = `${response}/content/application~1json/schema`;
      return response && at(doc, pointer) !== undefined ? pointer : "#/components/schemas/ErrorResponse";
    },
    declaredHeaders(apiPath, method, status) {
      const response = responseAt(apiPath, method, status);
      const headers = (response && (at(doc, `${response}/headers`) as JsonObject | undefined)) ?? {};
      return Object.fromEntries(Object.keys(headers).map((h) => [h.toLowerCase(), `${response}/headers/${escapePointer(h)}/schema`]));
    },
    streamEventPointer: (type) => events.get(type),
    check: (pointer, value) => explain(pointer, value, ""),
  };
}

/** Ajv's errors as lines naming where in the answer, the schema (pointer into the document, rule) and the value. */
function describeErrors(errors: ErrorObject[], value: unknown, where: string, schema: string): string[] {
  return errors.map((e) => {
    const found = at(value as Json, e.instancePath);
    const shown = found === undefined ? "(absent)" : JSON.stringify(found).slice(0, 160);
    const path = `${where}${e.instancePath}` || "/";
    return `${path}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}; schema ${schema} (${e.schemaPath.replace(ID, "")}); value ${shown}`;
  });
}
