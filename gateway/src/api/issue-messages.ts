import type { z } from "zod";
import { clientText } from "./client-text";

/**
 * One zod issue as a client-facing message in OpenAI's own wording ("Missing required parameter: 'model'.",
 * "Invalid type for 'messages[3].content': expected a string or an array, but got a number instead.") and a
 * code saying which kind of mistake it is. Values the client sent are shown only when short (numbers, bounded
 * strings); anything else is named by its type.
 */
/** Every code a validation error can carry, spelt as OpenAI spells its own (the type below holds the builders to it). */
export const VALIDATION_CODES = [
  "missing_required_parameter",
  "invalid_type",
  "invalid_value",
  "integer_below_min_value",
  "integer_above_max_value",
  "decimal_below_min_value",
  "decimal_above_max_value",
  "empty_array",
  "empty_string",
  "array_below_min_length",
  "array_above_max_length",
  "string_below_min_length",
  "string_above_max_length",
] as const;
export type ValidationCode = (typeof VALIDATION_CODES)[number];

export interface DescribedIssue {
  message: string;
  param: string | null;
  code: ValidationCode;
}

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** Longest echoed path segment: record keys (`logit_bias`, `metadata`) are the client's own strings. */
const SEGMENT_MAX = 64;
/** Longest echoed path: nesting is bounded by maxJsonDepth, but 128 levels of 64 characters are still 8 KiB. */
const PARAM_MAX = 256;

/**
 * `messages[0].content` style, the way OpenAI names nested params. Each segment is bounded and escaped (a key
 * may be 300 KB with newlines in it), and so is the whole path.
 */
export function formatParam(path: Path): string | null {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else {
      const text = clientText(String(seg), SEGMENT_MAX);
      out += out ? `.${text}` : text;
    }
    if (out.length > PARAM_MAX) break;
  }
  return out ? clientText(out, PARAM_MAX) : null;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  array: "an array",
  object: "an object",
  null: "null",
};

function expectedText(expected: string): string {
  return EXPECTED[expected] ?? expected;
}

/** How a JSON value is named in a message: its type, never its (possibly huge) content. */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a decimal";
  if (typeof value === "object") return "an object";
  return typeof value === "string" ? "a string" : `a ${typeof value}`;
}

function shown(value: unknown): string {
  if (typeof value === "string") return `'${clientText(value, 64)}'`;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeOf(value);
}

function listed(values: readonly unknown[]): string {
  const items = values.map((v) => (typeof v === "string" ? `'${clientText(v, 64)}'` : String(v)));
  return items.length <= 2 ? items.join(" and ") : `${items.slice(0, -1).join(", ")}, and ${items[items.length - 1]}`;
}

/** "a string", "a string or an array", "a string, an array or null". */
function alternatives(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

function describeSize(issue: Extract<Issue, { code: "too_small" | "too_big" }>, param: string): DescribedIssue & { param: string } {
  const small = issue.code === "too_small";
  const bound = Number(small ? (issue as { minimum: number | bigint }).minimum : (issue as { maximum: number | bigint }).maximum);
  const input = issue.input;
  if (issue.origin === "array" || issue.origin === "string") {
    const length = Array.isArray(input) || typeof input === "string" ? input.length : undefined;
    const kind = issue.origin === "array" ? "array" : "string";
    const code = small && length === 0 ? (`empty_${kind}` as const) : (`${kind}_${small ? "below_min" : "above_max"}_length` as const);
    const got = length === undefined ? "" : `, but got ${kind === "array" ? "an array" : "a string"} with length ${length} instead`;
    return {
      param,
      code,
      message: `Invalid '${param}': ${kind} too ${small ? "short" : "long"}. Expected ${kind === "array" ? "an array" : "a string"} with ${small ? "minimum" : "maximum"} length ${bound}${got}.`,
    };
  }
  const integer = typeof input === "number" && Number.isInteger(input);
  const op = small ? (issue.inclusive ? ">=" : ">") : issue.inclusive ? "<=" : "<";
  return {
    param,
    code: `${integer ? "integer" : "decimal"}_${small ? "below_min" : "above_max"}_value` as const,
    message: `Invalid '${param}': ${integer ? "integer" : "decimal"} ${small ? "below minimum" : "above maximum"} value. Expected a value ${op} ${bound}${typeof input === "number" ? `, but got ${input} instead` : ""}.`,
  };
}

/**
 * Of the forms a union accepts, the one the client most likely meant: the branch whose first issue lies
 * deepest (the value matched its outer shape), preferring a wrong value over a wrong type at equal depth.
 */
function closestBranch(branches: readonly (readonly Issue[])[]): Issue | undefined {
  let best: Issue | undefined;
  let bestScore = -1;
  for (const issues of branches) {
    const first = issues[0];
    if (!first) continue;
    const score = first.path.length * 2 + (first.code === "invalid_type" ? 0 : 1);
    if (score > bestScore) [best, bestScore] = [first, score];
  }
  return best;
}

export function describeIssue(issue: Issue, prefix: Path = []): DescribedIssue {
  const described = describe(issue, prefix);
  // An issue about the body as a whole names no parameter.
  return prefix.length + issue.path.length === 0 ? { ...described, param: null } : described;
}

function describe(issue: Issue, prefix: Path): DescribedIssue & { param: string } {
  const path = [...prefix, ...issue.path];
  const param = formatParam(path) ?? "body";
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return { param, code: "missing_required_parameter", message: `Missing required parameter: '${param}'.` };
      return {
        param,
        code: "invalid_type",
        message: `Invalid type for '${param}': expected ${expectedText(issue.expected)}, but got ${typeOf(issue.input)} instead.`,
      };
    case "too_small":
    case "too_big":
      return describeSize(issue, param);
    case "invalid_value":
      return {
        param,
        code: "invalid_value",
        message: `Invalid value for '${param}': ${shown(issue.input)}. Supported values are: ${listed(issue.values)}.`,
      };
    case "invalid_union": {
      if (issue.input === undefined) return { param, code: "missing_required_parameter", message: `Missing required parameter: '${param}'.` };
      const branches = issue.errors;
      const wrongTypeEverywhere = branches.length > 0 && branches.every((b) => b.length === 1 && b[0]!.code === "invalid_type" && b[0]!.path.length === 0);
      if (wrongTypeEverywhere) {
        const expected = [...new Set(branches.map((b) => expectedText((b[0] as { expected: string }).expected)))];
        return {
          param,
          code: "invalid_type",
          message: `Invalid type for '${param}': expected ${alternatives(expected)}, but got ${typeOf(issue.input)} instead.`,
        };
      }
      const closest = closestBranch(branches);
      if (closest) return describe(closest, path);
      return { param, code: "invalid_value", message: `Invalid '${param}': does not match any accepted form.` };
    }
    default:
      return { param, code: "invalid_value", message: `Invalid '${param}': ${issue.message}.` };
  }
}
