import type { Usage } from "./spec";

/** vLLM writes a chunk's `usage` as its last member (pydantic field order), compact. */
const USAGE_MEMBER = ',"usage":{';
const OPEN = 123; // {
const CLOSE = 125; // }

/**
 * The running usage vLLM puts on every chunk with `continuous_usage_stats`, cut out of the chunk's text without
 * parsing the chunk: the usage object is read (a few dozen bytes) and the rest is what a client that did not ask
 * for it gets. Inside JSON strings quotes are escaped, so `,"usage":{` can only be the member itself; the usage
 * object holds numbers and nested objects of numbers, no strings with braces. Undefined when there is none.
 */
export function cutUsage(data: string): { usage: Usage; rest: string } | undefined {
  const at = data.lastIndexOf(USAGE_MEMBER);
  if (at < 0) return undefined;
  const open = at + USAGE_MEMBER.length - 1;
  let depth = 0;
  let end = -1;
  for (let i = open; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) {
      end = i;
      break;
    }
  }
  if (end < 0) return undefined;
  let usage: unknown;
  try {
    usage = JSON.parse(data.slice(open, end + 1));
  } catch {
    return undefined;
  }
  return { usage: usage as Usage, rest: data.slice(0, at) + data.slice(end + 1) };
}

/** The usage-only chunk (`choices: []`) that ends a stream whose usage was asked for. */
export function isUsageOnly(data: string): boolean {
  return /"choices":\s*\[\s*\]/.test(data);
}
