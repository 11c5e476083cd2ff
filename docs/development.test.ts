// docs/development.md against the repository: the scripts table is package.json's scripts (no more, no fewer), the
// layout table names every folder git tracks and nothing that does not exist, the Debian packages are those CI
// installs, and the CI steps are the commands .ci/run runs, in its order.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { codeSpans, readDoc, REPO_ROOT, section, tableWith } from "../gateway/test/support/doc-blocks";

const page = readDoc("development.md");
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
const ciRun = fs.readFileSync(path.join(REPO_ROOT, ".ci", "run"), "utf8");

/** Folders git tracks files in, as paths relative to the repository root (`gateway`, `gateway/src`, …). */
function trackedFolders(): Set<string> {
  const files = spawnSync("git", ["ls-files"], { cwd: REPO_ROOT, encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split("/");
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join("/"));
  }
  return folders;
}

describe("docs/development.md", () => {
  test("the scripts table has every npm script of package.json, and only those", () => {
    const rows = tableWith(section(page, "Scripts"), "Command");
    const named = rows.map((r) => {
      const spans = codeSpans(r.Command as string);
      expect(spans).toHaveLength(1);
      const m = /^npm (?:run (\S+)|(start|test))$/.exec(spans[0] as string);
      expect({ command: spans[0], form: m !== null }).toEqual({ command: spans[0], form: true });
      expect((r["What it does"] as string).length).toBeGreaterThan(10);
      return (m?.[1] ?? m?.[2]) as string;
    });
    expect(named.length).toBe(new Set(named).size);
    expect(named.sort()).toEqual(Object.keys(pkg.scripts).sort());
  });

  const layout = tableWith(section(page, "Layout"), "Path").map((r) => ({ paths: codeSpans(r.Path as string), what: r.What as string }));

  test("every path in the layout table exists", () => {
    const missing = layout.flatMap((r) => r.paths).filter((p) => !fs.existsSync(path.join(REPO_ROOT, p)));
    expect(missing).toEqual([]);
  });

  test("the layout table has every top-level folder and every folder of infra/, and names every folder of gateway/src/", () => {
    const folders = trackedFolders();
    const listed = new Set(layout.flatMap((r) => r.paths));
    const topLevel = [...folders].filter((f) => !f.includes("/"));
    expect(topLevel.length).toBeGreaterThan(8);
    expect(topLevel.filter((f) => !listed.has(`${f}/`))).toEqual([]);
    const infra = [...folders].filter((f) => /^infra\/[^/]+$/.test(f));
    expect(infra.filter((f) => !listed.has(`${f}/`))).toEqual([]);
    const gatewaySrc = layout.find((r) => r.paths.includes("gateway/src/"));
    const subfolders = [...folders].filter((f) => /^gateway\/src\/[^/]+$/.test(f)).map((f) => `${path.basename(f)}/`);
    expect(subfolders.length).toBeGreaterThan(5);
    expect(subfolders.filter((f) => !codeSpans(gatewaySrc?.what ?? "").includes(f))).toEqual([]);
  });

  test("the scripts/ row names every TypeScript script there", () => {
    const scripts = fs.readdirSync(path.join(REPO_ROOT, "scripts")).filter((f) => f.endsWith(".ts"));
    const row = layout.find((r) => r.paths.includes("scripts/"));
    expect(scripts.filter((f) => !codeSpans(row?.what ?? "").includes(f))).toEqual([]);
  });

  test("the Debian packages are the ones .ci/apt-packages lists, and their suites exist", () => {
    const rows = tableWith(section(page, "Tests"), "Package");
    const listed = fs
      .readFileSync(path.join(REPO_ROOT, ".ci", "apt-packages"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(rows.map((r) => codeSpans(r.Package as string)[0]).sort()).toEqual(listed.sort());
    const suites = rows.flatMap((r) => codeSpans(r.Suite as string));
    expect(suites.filter((s) => !fs.existsSync(path.join(REPO_ROOT, s)))).toEqual([]);
  });

  test("the CI steps are commands .ci/run runs, in its order", () => {
    const steps = codeSpans(section(page, "CI"))
      .filter((s) => s.startsWith("npm "))
      .map((s) => s.split("<")[0] as string);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    const at = steps.map((s) => ciRun.indexOf(s));
    expect(steps.filter((_s, i) => at[i] === -1)).toEqual([]);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});
