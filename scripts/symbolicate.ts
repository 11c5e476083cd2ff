// `npm run symbolicate -- <serve.js.map> < trace.txt`: maps a stack trace of the gateway bundle back to the
// TypeScript sources, offline. The production entrypoint runs without --enable-source-maps (its synchronous
// parse of the bundle's map, on the first stack trace, stalls the event loop for hundreds of ms); the map ships
// beside the bundle (dist/gateway/serve.js.map, /app/serve.js.map in the image) and is read here instead.
import { readFileSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import * as path from "node:path";

/** `at fn (/app/serve.js:123:45)` or `at /app/serve.js:123:45`: the bundle's file, line and column. */
const FRAME = /(\(?)([^\s()]*serve\.js):(\d+):(\d+)(\)?)/g;

/** Every `serve.js:line:col` in `text` replaced by `source.ts:line:col (name)` where the map knows it. */
export function symbolicate(text: string, map: SourceMapPayload): string {
  const sm = new SourceMap(map);
  return text.replace(FRAME, (whole, open: string, _file: string, line: string, col: string, close: string) => {
    // Stack traces count lines and columns from 1, source maps from 0.
    const entry = sm.findEntry(Number(line) - 1, Number(col) - 1) as Partial<{ originalSource: string; originalLine: number; originalColumn: number; name: string }>;
    if (!entry.originalSource) return whole;
    const source = entry.originalSource.replace(/^(\.\.\/)+/, "");
    const name = entry.name ? ` ${entry.name}` : "";
    return `${open}${source}:${entry.originalLine! + 1}:${entry.originalColumn! + 1}${name}${close}`;
  });
}

if (require.main === module) {
  const mapFile = process.argv[2];
  if (!mapFile) {
    process.stderr.write("usage: npm run symbolicate -- <serve.js.map> < trace.txt\n");
    process.exit(2);
  }
  const map = JSON.parse(readFileSync(path.resolve(mapFile), "utf8")) as SourceMapPayload;
  process.stdout.write(symbolicate(readFileSync(0, "utf8"), map));
}
