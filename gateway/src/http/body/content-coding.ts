import { brotliDecompressSync, gunzipSync, inflateSync, type ZlibOptions } from "node:zlib";
import { ApiError, errors } from "../../api/errors";

type Decoder = (buf: Buffer, opts: ZlibOptions) => Buffer;

/** The codings clients use for request bodies; `x-gzip` is gzip's old name (RFC 9110 §8.4.1.3). */
const DECODERS: Record<string, Decoder> = {
  gzip: gunzipSync,
  "x-gzip": gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

function codingOf(header: string | undefined): string {
  return (header ?? "").trim().toLowerCase();
}

/**
 * Refuses a coding the gateway cannot decode before any body byte is read. One coding only: stacked codings
 * ("gzip, br") are legal but no client sends them, and each layer would multiply the work.
 */
export function checkContentEncoding(header: string | undefined): ApiError | undefined {
  const coding = codingOf(header);
  if (coding === "" || coding === "identity" || Object.hasOwn(DECODERS, coding)) return undefined;
  return errors.unsupportedContentEncoding(header ?? "");
}

export function isEncoded(header: string | undefined): boolean {
  const coding = codingOf(header);
  return coding !== "" && coding !== "identity";
}

/**
 * The body with its content coding removed. Decompression is one synchronous call capped by zlib's
 * `maxOutputLength`: a bomb stops at `limitBytes` of output (about 10 ms of CPU for 4 MiB), and only one
 * decompression window (up to 16 MiB for brotli) exists at any moment, however many clients send compressed
 * bodies at once.
 */
export function decodeContent(body: Buffer, header: string | undefined, limitBytes: number): Buffer {
  const coding = codingOf(header);
  const decode = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined;
  if (!decode) {
    const refusal = checkContentEncoding(header);
    if (refusal) throw refusal;
    return body;
  }
  try {
    return decode(body, { maxOutputLength: limitBytes });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw errors.bodyTooLarge(limitBytes);
    throw errors.corruptContentEncoding(coding === "x-gzip" ? "gzip" : coding);
  }
}

/** `charset=` of a Content-Type, lower-cased, if it has one. */
export function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? "");
  return m ? (m[1] ?? m[2] ?? "").toLowerCase() : undefined;
}

/** JSON is UTF-8 (RFC 8259 §8.1); ASCII is a subset of it. Anything else is refused before the body is read. */
export function checkCharset(contentType: string | undefined): ApiError | undefined {
  const charset = charsetOf(contentType);
  if (charset === undefined || charset === "utf-8" || charset === "utf8" || charset === "us-ascii") return undefined;
  return errors.unsupportedCharset(charset);
}
