/**
 * Client-controlled strings (model names, paths, parameter names) are echoed in error messages and written to
 * logs. Both must stay small and unambiguous whatever the client sent: a 1 MiB model name must not become a
 * 1 MiB log line, and control or bidi characters must not make a line look like something else.
 */

/** Default bound for an echoed value: longer than any real model id or path. */
export const CLIENT_TEXT_MAX = 256;

/**
 * C0/C1 controls, line/paragraph separators, bidi overrides and isolates, BOM and lone surrogates (which are
 * not valid UTF-8): shown as \uXXXX.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A short, printable rendering of `value`: invisible characters escaped, cut at `max` characters with a note. */
export function clientText(value: string, max: number = CLIENT_TEXT_MAX): string {
  let head = value.length > max ? value.slice(0, max) : value;
  // Do not cut a surrogate pair in half (a lone surrogate would be escaped, not shown).
  if (head.length === max && /[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  const shown = head.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return value.length > head.length ? `${shown}…(${value.length} characters)` : shown;
}
