import { Writable } from "node:stream";
import { clientText } from "../../src/api/client-text";
import { LogSampler } from "../../src/observability/log-sampler";
import { capLine, createLogger, MAX_LOG_LINE_BYTES } from "../../src/observability/logger";

describe("clientText", () => {
  it.each([
    ["qwen3-8b", "qwen3-8b"],
    ["a\nb\rc\u0000d", "a\\u000ab\\u000dc\\u0000d"],
    ["\u001b[31mred\u001b[0m", "\\u001b[31mred\\u001b[0m"],
    ["x\u2028y\u202ez", "x\\u2028y\\u202ez"],
    ["lone \ud800 surrogate", "lone \\ud800 surrogate"],
    ["pair 😀 kept", "pair 😀 kept"],
  ])("escapes %j", (input, shown) => {
    expect(clientText(input)).toBe(shown);
  });

  it("bounds long values and says how long they were", () => {
    const out = clientText("m".repeat(1_048_576), 256);
    expect(out).toBe(`${"m".repeat(256)}…(1048576 characters)`);
  });

  it("does not cut a surrogate pair in half", () => {
    expect(clientText(`${"a".repeat(9)}😀`, 10)).toBe(`${"a".repeat(9)}…(11 characters)`);
  });
});

describe("log lines", () => {
  it("replaces a line over the limit with a valid short line keeping its head", () => {
    const line = `${JSON.stringify({ level: 30, msg: "request", model: "m".repeat(1_000_000) })}\n`;
    const capped = capLine(line);
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES);
    const parsed = JSON.parse(capped) as Record<string, unknown>;
    expect(parsed).toMatchObject({ level: 30, msg: "log line over the line limit, cut", lineBytes: Buffer.byteLength(line) });
    expect(capLine('{"level":30}\n')).toBe('{"level":30}\n');
  });

  it("the logger applies the cap to every line it writes", () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) });
    createLogger("info", sink).info({ model: "x".repeat(100_000) }, "request");
    expect(lines).toHaveLength(1);
    expect(Buffer.byteLength(lines[0]!)).toBeLessThanOrEqual(MAX_LOG_LINE_BYTES);
  });

  it("samples lines over the per-second budget and summarises what it dropped", () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (c: Buffer, _e, cb) => (lines.push(JSON.parse(c.toString()) as Record<string, unknown>), cb()) });
    const sampler = new LogSampler(3, createLogger("info", sink));
    const allowed = Array.from({ length: 10 }, () => sampler.allow("unauthenticated requests")).filter(Boolean).length;
    expect(allowed).toBe(3);
    sampler.stop();
    expect(lines.at(-1)).toMatchObject({ level: 40, suppressedLines: { "unauthenticated requests": 7 } });
  });

  it("keeps a budget per key, apart from the anonymous one", () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (c: Buffer, _e, cb) => (lines.push(JSON.parse(c.toString()) as Record<string, unknown>), cb()) });
    const sampler = new LogSampler(2, createLogger("info", sink));
    const count = (kind: string, budget: string | undefined, n: number) => Array.from({ length: n }, () => sampler.allow(kind, budget)).filter(Boolean).length;
    expect(count("key a", "key:a", 5)).toBe(2);
    expect(count("key b", "key:b", 5)).toBe(2); // a's flood does not silence b
    expect(count("anonymous", undefined, 5)).toBe(2);
    sampler.stop();
    expect(lines.at(-1)).toMatchObject({ suppressedLines: { "key a": 3, "key b": 3, anonymous: 3 } });
  });
});
