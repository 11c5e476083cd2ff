import fc from "fast-check";
import { AnswerScanner, rewriteAnswer } from "../../src/relay/answer-scanner";

/** Feeds `text` to a scanner in pieces cut at `cuts` (byte offsets), as a socket would deliver it. */
function scanInPieces(text: string, cuts: number[], opts: ConstructorParameters<typeof AnswerScanner>[0]) {
  const bytes = Buffer.from(text);
  const scanner = new AnswerScanner(opts);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(...scanner.feed(bytes.subarray(from, p)));
    from = p;
  }
  return { scanner, text: Buffer.concat(out).toString("utf8") };
}

const answer = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
const cuts = fc.array(fc.nat(), { maxLength: 12 });

describe("streamed answer scan", () => {
  it("replaces `model` in place and keeps every other byte, however the answer is cut", () => {
    fc.assert(
      fc.property(answer, fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 }), cuts, fc.boolean(), (obj, model, usage, at, spaced) => {
        const input = { ...obj, model, usage };
        const text = spaced ? JSON.stringify(input, null, 2) : JSON.stringify(input);
        const { scanner, text: out } = scanInPieces(text, at, { replace: { model: '"served"' }, capture: ["usage"] });
        expect(JSON.parse(out)).toEqual({ ...JSON.parse(text), model: "served" });
        expect(scanner.member("usage")).toEqual(JSON.parse(text).usage);
        expect(scanner.complete).toBe(true);
        expect(scanner.notAnObject).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("passes an answer without the replaced key through unchanged, chunk for chunk", () => {
    fc.assert(
      fc.property(answer, cuts, (obj, at) => {
        delete (obj as Record<string, unknown>).model;
        const text = JSON.stringify(obj);
        expect(scanInPieces(text, at, { replace: { model: '"x"' } }).text).toBe(text);
      }),
    );
    const chunk = Buffer.from('{"a":1}');
    expect(new AnswerScanner({ replace: { model: '"x"' } }).feed(chunk)[0]).toBe(chunk); // no copy
  });

  it("replaces every copy of a repeated key, escaped spellings included, and leaves nested ones alone", () => {
    const text = '{"model":"a","data":[{"model":"inner"}],"mod\\u0065l" : "b" ,"x":"\\"model\\":"}';
    for (const at of [[], [3], [5, 9, 40], [10, 11, 12, 13, 14, 15, 16]]) {
      const out = scanInPieces(text, at, { replace: { model: '"served"' } }).text;
      expect(out).toBe('{"model":"served","data":[{"model":"inner"}],"mod\\u0065l":"served","x":"\\"model\\":"}');
    }
  });

  it("keeps the last copy of a captured member, drops one over 64 KiB", () => {
    const s = new AnswerScanner({ capture: ["usage", "big"] });
    s.feed(Buffer.from(`{"usage":{"total_tokens":1},"big":"${"x".repeat(70_000)}","usage":{"total_tokens":2}}`));
    expect(s.member("usage")).toEqual({ total_tokens: 2 });
    expect(s.member("big")).toBeUndefined();
  });

  it.each([
    ["[1,2]", true, false],
    ['"text"', true, false],
    ["42", true, false],
    ['{"a":1} {"b":2}', true, false],
    ['{"a":1', false, false],
    ['{"a":1}\n', false, true],
  ])("%s: not an object %s, complete %s", (text, notAnObject, complete) => {
    const s = new AnswerScanner();
    s.feed(Buffer.from(text));
    expect({ notAnObject: s.notAnObject, complete: s.complete }).toEqual({ notAnObject, complete });
  });

  it("rewrites an answer held whole", () => {
    expect(rewriteAnswer(Buffer.from('{"id":"1","model":"internal"}'), { model: '"public"' }).toString()).toBe('{"id":"1","model":"public"}');
  });
});
