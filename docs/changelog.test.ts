// CHANGELOG.md against the release the repository is at: its newest version is package.json's (which the gateway
// image's label and gateway_build_info carry), versions go down the page, and every version has the upgrade notes
// the upgrade procedure of operations.md sends operators to.
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../gateway/test/support/doc-blocks";

const changelog = fs.readFileSync(path.join(REPO_ROOT, "CHANGELOG.md"), "utf8");
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string };

/** Each `## X.Y.Z - YYYY-MM-DD` section: its version, date and body up to the next `## `. */
function releases(text: string): { version: string; date: string; body: string }[] {
  const parts = text.split(/^## /m).slice(1);
  return parts.flatMap((p) => {
    const m = /^(\d+\.\d+\.\d+) - (\d{4}-\d{2}-\d{2})\n/.exec(p);
    return m ? [{ version: m[1] as string, date: m[2] as string, body: p }] : [];
  });
}

const numeric = (v: string) => v.split(".").map(Number) as [number, number, number];
const newer = (a: string, b: string) => {
  const [x, y] = [numeric(a), numeric(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};

describe("CHANGELOG.md", () => {
  const all = releases(changelog);

  test("every second-level heading is Unreleased (first) or a version with its date", () => {
    const headings = [...changelog.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
    expect(headings[0]).toBe("Unreleased");
    expect(headings.slice(1)).toEqual(all.map((r) => `${r.version} - ${r.date}`));
    expect(all.length).toBeGreaterThan(0);
  });

  test("its newest version is package.json's", () => {
    expect(all[0]?.version).toBe(pkg.version);
  });

  test("versions and dates go down the page", () => {
    for (let i = 1; i < all.length; i++) {
      expect(newer(all[i - 1]!.version, all[i]!.version)).toBeGreaterThan(0);
      expect(all[i - 1]!.date >= all[i]!.date).toBe(true);
    }
  });

  test("every version has upgrade notes, with at least one item", () => {
    for (const r of all) expect({ version: r.version, notes: /^### Upgrade notes\n+[^#]*^- /m.test(r.body) }).toEqual({ version: r.version, notes: true });
  });
});
