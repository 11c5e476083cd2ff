// The gateway's floors as docs/architecture.md lists them are what `npm run lint` enforces (eslint.config.mjs):
// every folder of gateway/src is on one floor, and a file of one folder may import another folder exactly when
// that folder's floor is lower. Each import below is linted by the repository's own ESLint configuration.
import * as fs from "node:fs";
import * as path from "node:path";
import { codeSpans, readDoc, REPO_ROOT, run, section, tableWith } from "../support/doc-blocks";

const SRC = path.join(REPO_ROOT, "gateway", "src");
const rows = tableWith(section(readDoc("architecture.md"), "The gateway's request path"), "Floor");
/** Ground first: the folders of each numbered floor. */
const floors = rows.filter((r) => /^\d+$/.test(r.Floor as string)).map((r) => codeSpans(r.Folders as string).map((f) => f.replace(/\/$/, "")));
const top = codeSpans(rows.find((r) => r.Floor === "top")?.Folders ?? "");
const levelOf = new Map(floors.flatMap((folders, level) => folders.map((f) => [f, level] as const)));

/** A module of `folder` to import (any will do: the rule is about folders). */
function moduleOf(folder: string): string {
  const file = fs
    .readdirSync(path.join(SRC, folder))
    .filter((f) => f.endsWith(".ts"))
    .sort()[0]!;
  return `${folder}/${file.replace(/\.ts$/, "")}`;
}

interface LintCase {
  /** Where the importing file would be, under gateway/src. */
  file: string;
  code: string;
  refused: boolean;
  what: string;
}

/** The `boundaries/dependencies` messages ESLint gives each case, linted as if the file existed. */
async function lint(cases: LintCase[]): Promise<string[][]> {
  const script = `
    import { ESLint } from "eslint";
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = [];
    for (const c of JSON.parse(process.env.FLOOR_CASES)) {
      const [result] = await eslint.lintText(c.code, { filePath: c.file });
      const fatal = result.messages.find((m) => m.fatal);
      if (fatal) throw new Error(c.file + ": " + fatal.message);
      out.push(result.messages.filter((m) => m.ruleId === "boundaries/dependencies").map((m) => m.message));
    }
    console.log(JSON.stringify(out));`;
  const env = { ...process.env, FLOOR_CASES: JSON.stringify(cases.map((c) => ({ file: path.join(SRC, c.file), code: c.code }))) };
  const res = await run(process.execPath, ["--input-type=module", "-e", script], { env, timeoutMs: 110_000 });
  if (res.code !== 0) throw new Error(`eslint did not run: ${res.stderr}`);
  return JSON.parse(res.stdout) as string[][];
}

describe("the gateway's floors", () => {
  test("every folder of gateway/src is on exactly one floor, and the top floor is the composition root", () => {
    const folders = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    const onFloors = floors.flat();
    expect(floors.length).toBeGreaterThan(5);
    expect(onFloors.length).toBe(new Set(onFloors).size);
    expect([...onFloors, "cli"].sort()).toEqual(folders.sort());
    expect(top.sort()).toEqual(["app.ts", "cli/", "server.ts"]);
  });

  test("a folder may import the folders on lower floors and no other, type-only imports included; the root imports any", async () => {
    const folders = [...levelOf.keys()];
    const cases: LintCase[] = [];
    for (const from of folders) {
      for (const to of folders) {
        if (from === to) continue;
        const refused = levelOf.get(to)! >= levelOf.get(from)!;
        const target = `../${moduleOf(to)}`;
        cases.push({ file: `${from}/floor-check.ts`, code: `import * as target from "${target}";\nvoid target;\n`, refused, what: `${from}/ imports ${to}/` });
        if (refused) cases.push({ file: `${from}/floor-check.ts`, code: `import type * as target from "${target}";\nexport type T = typeof target;\n`, refused, what: `${from}/ imports types of ${to}/` });
      }
      // The composition root is above every floor: it may import each folder, none of them may import it.
      cases.push({ file: `floor-check.ts`, code: `import * as target from "./${moduleOf(from)}";\nvoid target;\n`, refused: false, what: `the root imports ${from}/` });
      cases.push({ file: `${from}/floor-check.ts`, code: `import * as target from "../server";\nvoid target;\n`, refused: true, what: `${from}/ imports server.ts` });
    }
    // Nothing of gateway/src imports the rest of the repository (local/ is the composition root of `npm start`).
    cases.push({ file: "upstream/floor-check.ts", code: `import * as target from "../../../local/fleet";\nvoid target;\n`, refused: true, what: "upstream/ imports local/" });

    const messages = await lint(cases);
    const wrong = cases.flatMap((c, i) => {
      const refused = messages[i]!.length > 0;
      return refused === c.refused ? [] : [`${c.what}: ${refused ? `refused (${messages[i]!.join("; ")})` : "allowed"}`];
    });
    expect(wrong).toEqual([]);
  }, 120_000);
});
