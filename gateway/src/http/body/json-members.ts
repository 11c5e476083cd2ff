/**
 * One iterative pass over a JSON body's bytes, before JSON.parse: how deep it nests (so nothing recursive ever
 * walks a body deeper than the limit), how many objects and arrays it holds (the main cost of the parsed form:
 * 4 MiB of `{}` would parse into about 56 MiB) and where each top-level member starts and ends (so the body can be
 * forwarded as the client's own bytes with only a few members replaced, instead of being re-serialized:
 * no stack risk, no precision lost on large integers, no growth from re-printed numbers).
 *
 * The scan trusts JSON.parse to reject invalid JSON afterwards; on valid JSON its ranges are exact, and on
 * invalid JSON it only has to terminate, which a single forward loop does.
 */

import type { JsonMember } from "../../context/admitted-body";

export interface JsonLimits {
  /** Nesting of objects and arrays. */
  maxDepth: number;
  /** Objects and arrays in the whole body: each costs tens of bytes once parsed, whatever its text costs. */
  maxContainers: number;
}

export type JsonScan = { ok: true; members: JsonMember[] } | { ok: false; exceeded: "depth" | "containers" };

/** JSON's structural bytes, all ASCII (also used by the answer scan, relay/answer-scanner.ts). */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

/** All structural characters are ASCII, so scanning UTF-8 bytes needs no decoding. */
export function scanJson(bytes: Uint8Array, limits: JsonLimits): JsonScan {
  const members: JsonMember[] = [];
  let depth = 0;
  let containers = 0;
  let inString = false;
  let rootIsObject = false;
  // Top level of the root object: where the current member began, and where its key ends.
  let memberStart = -1;
  let keyEnd = -1;
  let stringStart = -1;

  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) {
        inString = false;
        if (depth === 1 && rootIsObject && memberStart === stringStart) keyEnd = i + 1;
      }
      continue;
    }
    switch (b) {
      case QUOTE:
        inString = true;
        stringStart = i;
        if (depth === 1 && rootIsObject && memberStart < 0) memberStart = i;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (depth === 0) rootIsObject = b === OPEN_OBJECT;
        if (++depth > limits.maxDepth) return { ok: false, exceeded: "depth" };
        if (++containers > limits.maxContainers) return { ok: false, exceeded: "containers" };
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (depth === 1 && rootIsObject) closeMember(i);
        depth = Math.max(0, depth - 1);
        break;
      case COMMA:
        if (depth === 1 && rootIsObject) closeMember(i);
        break;
    }
  }
  return { ok: true, members };

  function closeMember(at: number): void {
    if (memberStart >= 0 && keyEnd > memberStart) {
      members.push({ rawKey: Buffer.from(bytes.buffer, bytes.byteOffset + memberStart, keyEnd - memberStart).toString("utf8"), start: memberStart, end: at });
    }
    memberStart = -1;
    keyEnd = -1;
  }
}

/** The member's key as a string (keys may be written with escapes, e.g. "mod\u0065l"). */
export function memberKey(m: JsonMember): string {
  if (!m.rawKey.includes("\\")) return m.rawKey.slice(1, -1);
  try {
    return JSON.parse(m.rawKey) as string;
  } catch {
    return m.rawKey;
  }
}

/**
 * The root object rebuilt from the client's bytes: every member whose key is in `replace` is dropped (all
 * duplicates of it too) and the replacement values, already JSON text, come first. Other members are copied
 * byte for byte.
 */
export function replaceMembers(bytes: Buffer, members: readonly JsonMember[], replace: Readonly<Record<string, string>>): Buffer {
  const parts: Buffer[] = [Buffer.from("{")];
  let first = true;
  const add = (part: Buffer) => {
    if (!first) parts.push(Buffer.from(","));
    parts.push(part);
    first = false;
  };
  for (const [key, json] of Object.entries(replace)) add(Buffer.from(`${JSON.stringify(key)}:${json}`));
  for (const m of members) if (!Object.hasOwn(replace, memberKey(m))) add(bytes.subarray(m.start, m.end));
  parts.push(Buffer.from("}"));
  return Buffer.concat(parts);
}
