import fc from "fast-check";
import { memberKey, replaceMembers, scanJson } from "../../src/http/body/json-members";

const limits = { maxDepth: 128, maxContainers: 100_000 };
const scan = (text: string, l = limits) => scanJson(Buffer.from(text), l);

describe("scanJson", () => {
  it.each([
    ["{}", 1, true],
    ['{"a":[[[1]]]}', 4, true],
    ['{"a":[[[1]]]}', 3, false],
    ['{"a":"[[[[[[["}', 1, true],
    ['{"a":"\\"[[[["}', 1, true],
  ])("%s within depth %d: %s", (text, maxDepth, ok) => {
    expect(scan(text, { maxDepth, maxContainers: 100 }).ok).toBe(ok);
  });

  it("refuses deep nesting without recursion (100,000 levels)", () => {
    const deep = `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    expect(scan(deep)).toEqual({ ok: false, exceeded: "depth" });
  });

  it("counts objects and arrays at all levels", () => {
    expect(scan(`{"a":[${"{},".repeat(9)}{}]}`, { maxDepth: 8, maxContainers: 12 }).ok).toBe(true);
    expect(scan(`{"a":[${"{},".repeat(10)}{}]}`, { maxDepth: 8, maxContainers: 12 })).toEqual({ ok: false, exceeded: "containers" });
  });

  it("finds top-level members, keys decoded, strings and escapes respected", () => {
    const text = ' { "model" : "m,}" , "mod\\u0065l":1, "x":{"model":[1,{"y":"}"}]} } ';
    const r = scan(text);
    if (!r.ok) throw new Error("scan failed");
    expect(r.members.map(memberKey)).toEqual(["model", "model", "x"]);
    expect(r.members.map((m) => text.slice(m.start, m.end).trim())).toEqual(['"model" : "m,}"', '"mod\\u0065l":1', '"x":{"model":[1,{"y":"}"}]}']);
  });

  it("terminates on any bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => void scanJson(bytes, limits)));
  });
});

describe("replaceMembers", () => {
  it("keeps every other member byte for byte: big integers, exponents, escapes", () => {
    const text = '{"model":"a","seed":123456789012345678901234567890,"t":1e20,"s":"\\u00e9\\ud800","model":"dup"}';
    const r = scan(text);
    if (!r.ok) throw new Error("scan failed");
    const out = replaceMembers(Buffer.from(text), r.members, { model: JSON.stringify("upstream/name") }).toString();
    expect(out).toBe('{"model":"upstream/name","seed":123456789012345678901234567890,"t":1e20,"s":"\\u00e9\\ud800"}');
  });

  it("equals parse-then-replace on generated objects", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 })), fc.string({ maxLength: 20 }), (obj, model) => {
        const text = JSON.stringify(obj, null, Math.random() < 0.5 ? 0 : 2);
        const r = scan(text);
        if (!r.ok) throw new Error("scan failed");
        const out = JSON.parse(replaceMembers(Buffer.from(text), r.members, { model: JSON.stringify(model), stream_options: '{"include_usage":true}' }).toString());
        const expected = { ...(JSON.parse(text) as Record<string, unknown>), model, stream_options: { include_usage: true } };
        expect(out).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
