import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildSync } from "esbuild";
import { symbolicate } from "../../../scripts/symbolicate";

// The production entrypoint runs without --enable-source-maps; a trace from its logs is mapped offline.
describe("symbolicate", () => {
  it("maps a bundle's stack frames back to the TypeScript source", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "symbolicate-"));
    fs.writeFileSync(path.join(dir, "boom.ts"), "export function boom(): never {\n  // a comment\n  throw new Error(\"boom\");\n}\n");
    fs.writeFileSync(path.join(dir, "main.ts"), 'import { boom } from "./boom";\ntry { boom(); } catch (e) { console.log((e as Error).stack); }\n');
    buildSync({ entryPoints: [path.join(dir, "main.ts")], outfile: path.join(dir, "serve.js"), bundle: true, platform: "node", sourcemap: "linked", logLevel: "silent" });
    const trace = execFileSync(process.execPath, [path.join(dir, "serve.js")], { encoding: "utf8" });
    expect(trace).toMatch(/serve\.js:\d+:\d+/);
    const mapped = symbolicate(trace, JSON.parse(fs.readFileSync(path.join(dir, "serve.js.map"), "utf8")));
    expect(mapped).toMatch(/boom\.ts:3:\d+/);
    expect(mapped).not.toMatch(/serve\.js:\d+/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
