/**
 * A model server's non-streaming JSON answer, read piece by piece as it passes through the gateway: the answer
 * is relayed as the model server's own bytes, with the top-level members named in `replace` rewritten in place
 * (`model`: the served name becomes the catalog id) and the small members named in `capture` kept (`usage`, for
 * token accounting; `error`). Nothing else is held: an embeddings answer of 2,048 inputs × 4,096 dimensions is
 * about 180 MB of JSON floats, which the gateway passes on without ever holding more than one chunk of it.
 *
 * The scan trusts the model server for validity (small answers are parsed whole anyway, see relay/json.ts);
 * it only has to find top-level members exactly on valid JSON and to terminate on anything else.
 */

import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "../http/body/json-members";

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Keys longer than this are not among the few the gateway looks for: not kept while they arrive. */
const MAX_KEY_BYTES = 256;
/** A captured member larger than this is dropped (a `usage` object is about 100 bytes). */
const MAX_CAPTURE_BYTES = 64 * 1024;

export interface AnswerScanOptions {
  /** Top-level key -> its new value as JSON text; every occurrence is replaced in place. */
  replace?: Readonly<Record<string, string>>;
  /** Top-level keys whose values to keep (the last occurrence, as JSON.parse would). */
  capture?: readonly string[];
}

type Phase = "key" | "inKey" | "value";

export class AnswerScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private root: "none" | "object" | "other" = "none";
  private closed = false;
  private phase: Phase = "key";
  private keyParts: Buffer[] = [];
  private keyBytes = 0;
  /** Dropping the rest of a replaced member (after its key), until the member ends. */
  private dropping: string | undefined;
  private capturing: string | undefined;
  private captureParts: Buffer[] = [];
  private captureBytes = 0;
  private readonly captured = new Map<string, string>();
  private readonly replace: Readonly<Record<string, string>>;
  private readonly capture: ReadonlySet<string>;

  constructor(opts: AnswerScanOptions = {}) {
    this.replace = opts.replace ?? {};
    this.capture = new Set(opts.capture ?? []);
  }

  /** True once the root was seen to be something other than an object: not an answer the gateway can relay. */
  get notAnObject(): boolean {
    return this.root === "other";
  }

  /** True when the root object has been closed: the answer is whole. */
  get complete(): boolean {
    return this.root === "object" && this.closed;
  }

  /** A captured member's value, parsed (undefined if absent, too large or not JSON). */
  member(key: string): unknown {
    const text = this.captured.get(key);
    if (text === undefined) return undefined;
    try {
      return (JSON.parse(`{${text}}`) as Record<string, unknown>)[key];
    } catch {
      return undefined;
    }
  }

  /** Scans `chunk`; returns what to send in its place (the chunk itself when nothing in it was rewritten). */
  feed(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let emitFrom = this.dropping === undefined ? 0 : -1;
    let keyFrom = this.phase === "inKey" ? 0 : -1;
    let captureFrom = this.capturing === undefined ? -1 : 0;

    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.inString = false;
          if (this.depth === 1 && this.phase === "inKey") {
            this.addKeyBytes(chunk.subarray(keyFrom, i + 1));
            keyFrom = -1;
            const key = this.decodedKey();
            this.phase = "value";
            if (key !== undefined && Object.hasOwn(this.replace, key)) {
              // The key stays as sent; its value is dropped and the new one written when the member ends.
              out.push(chunk.subarray(emitFrom, i + 1));
              emitFrom = -1;
              this.dropping = key;
            }
            if (key !== undefined && this.capture.has(key)) {
              this.capturing = key;
              this.captureParts = [Buffer.concat(this.keyParts)];
              this.captureBytes = this.keyBytes;
              captureFrom = i + 1;
            }
          }
        }
        continue;
      }
      switch (b) {
        case QUOTE:
          this.inString = true;
          if (this.depth === 0) this.root = "other";
          else if (this.depth === 1 && this.phase === "key") {
            this.phase = "inKey";
            this.keyParts = [];
            this.keyBytes = 0;
            keyFrom = i;
          }
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          if (this.depth === 0) this.root = this.root === "none" && b === OPEN_OBJECT && !this.closed ? "object" : "other";
          this.depth++;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.depth === 1) {
            emitFrom = this.endMember(chunk, i, out, emitFrom, captureFrom);
            captureFrom = -1;
            this.closed = true;
          }
          if (this.depth > 0) this.depth--;
          break;
        case COMMA:
          if (this.depth === 1) {
            emitFrom = this.endMember(chunk, i, out, emitFrom, captureFrom);
            captureFrom = -1;
            this.phase = "key";
          }
          break;
        default:
          // Anything but whitespace outside the root (a bare value, text after the object) is not an object answer.
          if (this.depth === 0 && !WHITESPACE.has(b)) this.root = "other";
      }
    }
    if (keyFrom >= 0) this.addKeyBytes(chunk.subarray(keyFrom));
    if (captureFrom >= 0 && this.capturing !== undefined) this.addCaptureBytes(chunk.subarray(captureFrom));
    if (emitFrom >= 0) out.push(emitFrom === 0 ? chunk : chunk.subarray(emitFrom));
    return out;
  }

  /** A top-level member ends at `at` (a comma or the closing brace): finish its rewrite or capture. */
  private endMember(chunk: Buffer, at: number, out: Buffer[], emitFrom: number, captureFrom: number): number {
    if (this.capturing !== undefined) {
      this.addCaptureBytes(chunk.subarray(Math.max(0, captureFrom), at));
      if (this.captureBytes <= MAX_CAPTURE_BYTES) this.captured.set(this.capturing, Buffer.concat(this.captureParts).toString("utf8"));
      else this.captured.delete(this.capturing);
      this.capturing = undefined;
      this.captureParts = [];
    }
    if (this.dropping !== undefined) {
      out.push(Buffer.from(`:${this.replace[this.dropping]}`));
      this.dropping = undefined;
      return at;
    }
    return emitFrom;
  }

  private addKeyBytes(part: Buffer): void {
    if (this.keyBytes + part.length <= MAX_KEY_BYTES) this.keyParts.push(part);
    this.keyBytes += part.length;
  }

  private addCaptureBytes(part: Buffer): void {
    if (this.captureBytes + part.length <= MAX_CAPTURE_BYTES) this.captureParts.push(part);
    this.captureBytes += part.length;
  }

  private decodedKey(): string | undefined {
    if (this.keyBytes > MAX_KEY_BYTES) return undefined;
    const raw = Buffer.concat(this.keyParts).toString("utf8");
    try {
      return JSON.parse(raw) as string;
    } catch {
      return undefined;
    }
  }
}

/** The answer rewritten whole: for answers the gateway already holds. */
export function rewriteAnswer(bytes: Buffer, replace: Readonly<Record<string, string>>): Buffer {
  const parts = new AnswerScanner({ replace }).feed(bytes);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
