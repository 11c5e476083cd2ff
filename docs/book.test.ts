// The book holds together: every relative link in README.md and docs/ points at a file that exists, and every
// anchor at a heading of that file (GitHub's heading ids), so a renamed page or section cannot strand a reader.
import * as fs from "fs";
import * as path from "path";

const ROOT = path.resolve(__dirname, "..");

function pages(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => path.join(ROOT, "docs", f));
  return [path.join(ROOT, "README.md"), ...docs];
}

/** Markdown without fenced blocks and inline code, where link syntax is not a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading ids: lower case, punctuation but `-` and `_` dropped, spaces to `-`, repeats numbered. */
export function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (m[1] as string)
      .replace(/<[^>]+>/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

function links(file: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  prose(fs.readFileSync(file, "utf8"))
    .split("\n")
    .forEach((text, i) => {
      for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1] as string, line: i + 1 });
    });
  return out;
}

describe("the book's links", () => {
  test("README.md and the docs pages exist", () => {
    expect(pages().length).toBeGreaterThan(1);
  });

  test.each(pages().map((p) => [path.relative(ROOT, p), p] as const))("every relative link and anchor in %s resolves", (_name, file) => {
    const broken: string[] = [];
    for (const { target, line } of links(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [rel, anchor] = target.split("#") as [string, string | undefined];
      const resolved = rel === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(rel));
      if (!fs.existsSync(resolved)) {
        broken.push(`${line}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith(".md") && !headingIds(fs.readFileSync(resolved, "utf8")).has(anchor)) {
        broken.push(`${line}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("the heading ids follow GitHub's rule", () => {
    expect([...headingIds("# Quick start\n## Errors: 4xx & 5xx\n## `cluster:` keys\n## Errors: 4xx & 5xx\n")]).toEqual(["quick-start", "errors-4xx--5xx", "cluster-keys", "errors-4xx--5xx-1"]);
  });
});
