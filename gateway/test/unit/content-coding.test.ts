import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { ApiError } from "../../src/api/errors";
import { charsetOf, checkCharset, checkContentEncoding, decodeContent } from "../../src/http/body/content-coding";

const LIMIT = 64 * 1024;
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).code;
  }
  return "ok";
};

describe("content coding", () => {
  const text = Buffer.from('{"model":"m"}');
  it.each([
    ["gzip", gzipSync(text)],
    ["x-gzip", gzipSync(text)],
    ["GZip", gzipSync(text)],
    ["deflate", deflateSync(text)],
    ["br", brotliCompressSync(text)],
    ["identity", text],
    [undefined, text],
  ])("decodes %s", (coding, body) => {
    expect(decodeContent(body, coding, LIMIT).toString()).toBe(text.toString());
  });

  it.each([
    ["gzip", gzipSync(Buffer.alloc(100 * LIMIT))],
    ["deflate", deflateSync(Buffer.alloc(100 * LIMIT))],
    ["br", brotliCompressSync(Buffer.alloc(100 * LIMIT))],
  ])("stops a %s bomb at the limit with 413", (coding, bomb) => {
    expect(bomb.length).toBeLessThan(LIMIT);
    expect(codeOf(() => decodeContent(bomb, coding, LIMIT))).toBe("request_too_large");
  });

  it.each(["gzip", "deflate", "br"])("answers corrupt %s with 400", (coding) => {
    expect(codeOf(() => decodeContent(Buffer.from("not compressed at all"), coding, LIMIT))).toBe("invalid_content_encoding");
    expect(codeOf(() => decodeContent(gzipSync(text).subarray(0, 12), coding, LIMIT))).toBe("invalid_content_encoding");
  });

  it("refuses unknown and stacked codings before reading, with 415", () => {
    for (const coding of ["zstd", "compress", "gzip, br", "br-unknown"]) {
      const err = checkContentEncoding(coding);
      expect(err?.status).toBe(415);
      expect(err?.code).toBe("unsupported_content_encoding");
    }
    expect(checkContentEncoding("gzip")).toBeUndefined();
  });

  it("accepts UTF-8 (and ASCII) only, reading quoted and odd charset parameters", () => {
    expect(charsetOf('application/json; Charset="UTF-8"')).toBe("utf-8");
    expect(checkCharset("application/json; charset=utf8")).toBeUndefined();
    expect(checkCharset("text/plain")).toBeUndefined();
    expect(checkCharset("application/json; charset=latin-9")?.code).toBe("unsupported_charset");
    expect(checkCharset("application/json; charset=")?.status).toBe(415);
  });
});
