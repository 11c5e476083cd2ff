import { memberKey, replaceMembers, scanJson, type JsonMember } from "../http/body/json-members";

/** Answers up to this size are fully parsed, to check they are JSON; larger ones are only scanned. */
const FULL_PARSE_BYTES = 1024 * 1024;
/** A model server's answer is trusted in depth and size; the scan only has to find its top-level members. */
const ANSWER_LIMITS = { maxDepth: 10_000, maxContainers: Number.POSITIVE_INFINITY };

/**
 * A model server's JSON answer, kept as bytes (outside the JavaScript heap): an embeddings answer for 2,048
 * inputs of a 4,096-dimension model is about 80 MB of JSON, which parsed would take most of the gateway's heap.
 * Only the small top-level members the gateway needs (`error`, `usage`) are parsed; `model` is spliced in.
 */
export class JsonAnswer {
  private constructor(
    readonly bytes: Buffer,
    private readonly members: JsonMember[],
  ) {}

  /** The answer, or undefined when it is not a JSON object. */
  static inspect(bytes: Buffer): JsonAnswer | undefined {
    const text = bytes.length <= FULL_PARSE_BYTES ? bytes.toString("utf8") : undefined;
    if (text !== undefined) {
      try {
        const value: unknown = JSON.parse(text);
        if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
      } catch {
        return undefined;
      }
    } else if (!/^\s*\{[\s\S]*\}\s*$/.test(bytes.subarray(0, 64).toString("latin1") + bytes.subarray(-64).toString("latin1"))) return undefined;
    const scan = scanJson(bytes, ANSWER_LIMITS);
    return scan.ok ? new JsonAnswer(bytes, scan.members) : undefined;
  }

  /** A top-level member, parsed (the last one, as JSON.parse would keep). */
  member(key: string): unknown {
    const m = this.members.findLast((x) => memberKey(x) === key);
    if (!m) return undefined;
    const text = this.bytes.subarray(m.start, m.end).toString("utf8");
    try {
      return JSON.parse(`{${text}}`)[key] as unknown;
    } catch {
      return undefined;
    }
  }

  /** The answer with `key` set to `json` (JSON text), every other byte as it was. */
  withMember(key: string, json: string): Buffer {
    return replaceMembers(this.bytes, this.members, { [key]: json });
  }
}
