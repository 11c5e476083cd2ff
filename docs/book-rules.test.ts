// The book's standing rules: docs/*.md stay under a size budget (lean pages, repeats folded into one place and
// linked), and the operator pages speak to operators: no references to the product spec, no test provenance, no
// notes about the machines the repository is built on (those belong in development.md or benchmarks.md).
import * as fs from "fs";
import * as path from "path";

const DOCS = __dirname;
// Under 300,000 (#29): it had grown to 358,000 with each feature's pages. The dashboards' and alerts' references are
// generated from their definitions, each procedure is written once (a command repeated across pages fails below),
// history and restated tables went. A new page pays for itself by trims elsewhere.
const BUDGET_BYTES = 300_000;
const OPERATOR_PAGES = ["quickstart.md", "operations.md", "configuration.md", "lifecycle.md", "models.md", "monitoring.md", "troubleshooting.md", "exposure.md", "capacity.md"];
/** Pages being rewritten elsewhere: their rules are skipped, not dropped, until the rewrite lands. */
const PENDING_REWRITE = new Set<string>([]);

/** What an operator page must not say, in its prose (code blocks and inline code are commands and names, not prose). */
const FORBIDDEN: readonly { what: string; pattern: RegExp }[] = [
  { what: "a reference to the spec", pattern: /\bspec\b/i },
  { what: "a test file", pattern: /\.test\.ts\b|\bgateway\/test\/|\bjest\b/i },
  { what: "test provenance", pattern: /\b(tested|verified) (here|in|by|against|on)\b|\ba test (keeps|checks|fails|holds)\b|\btests? (check|checks|keep|keeps)\b/i },
  { what: "a build-machine note", pattern: /\bbuild[- ]machines?\b|\b(on|of) (this|these) (development )?machines?\b|\bthe (npm )?mirror here\b/i },
];

/**
 * The commands of a page's shell blocks, each line as an operator would type it (a trailing comment dropped). Short
 * lines (`pulumi up`, `cd …`), variable set-ups and port-forwards are the glue of a procedure, not one: left out.
 */
function commands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```(?:bash|sh|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1] as string);
  return blocks
    .flatMap((b) => b.split("\n"))
    .map((l) => l.replace(/\s+#\s.*$/, "").trim())
    .filter((l) => l.length >= 40 && !l.startsWith("#") && !/^(export\s+)?[A-Z_][A-Z0-9_]*=/.test(l) && !/\bport-forward\b/.test(l));
}

/** Prose of a Markdown page: without fenced blocks, inline code, HTML comments and link targets. */
function prose(markdown: string): string {
  return markdown
    .replace(/^\s*```[\s\S]*?^\s*```/gm, "")
    .replace(/`[^`\n]*`/g, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/\]\([^)]*\)/g, "]");
}

describe("the book's rules", () => {
  const pages = fs.readdirSync(DOCS).filter((f) => f.endsWith(".md"));

  test(`docs/*.md total under ${BUDGET_BYTES.toLocaleString("en-US")} bytes`, () => {
    const sizes = Object.fromEntries(pages.map((p) => [p, fs.statSync(path.join(DOCS, p)).size]));
    const total = Object.values(sizes).reduce((a, b) => a + b, 0);
    expect({ total, under: total < BUDGET_BYTES, sizes }).toMatchObject({ under: true });
  });

  test("each command is written on one page: another page links to it", () => {
    const where = new Map<string, Set<string>>();
    for (const p of pages) for (const c of commands(fs.readFileSync(path.join(DOCS, p), "utf8"))) where.set(c, (where.get(c) ?? new Set()).add(p));
    const repeated = [...where].filter(([, on]) => on.size > 1).map(([c, on]) => `${[...on].sort().join(", ")}: ${c}`);
    expect(repeated).toEqual([]);
  });

  test("the command filter keeps procedures and drops glue", () => {
    const page = "```bash\npulumi up\nLD=$(pulumi config get platform:labelDomain)\npulumi config set --secret monitoring:s3Password x   # the store's\n```";
    expect(commands(page)).toEqual(["pulumi config set --secret monitoring:s3Password x"]);
  });

  test("the operator pages exist", () => {
    expect(OPERATOR_PAGES.filter((p) => !pages.includes(p))).toEqual([]);
  });

  describe.each(OPERATOR_PAGES.map((p) => [p] as const))("%s speaks to operators", (page) => {
    const run = PENDING_REWRITE.has(page) ? test.skip : test;
    run.each(FORBIDDEN.map((f) => [f.what, f.pattern] as const))("no %s", (_what, pattern) => {
      const lines = prose(fs.readFileSync(path.join(DOCS, page), "utf8")).split("\n");
      expect(lines.filter((l) => pattern.test(l))).toEqual([]);
    });
  });

  test("the prose filter keeps prose and drops code", () => {
    expect(prose("see the spec\n```bash\njest\n```\nrun `x.test.ts` [a](b.test.ts)")).toBe("see the spec\n\nrun  [a]");
    expect(FORBIDDEN[0]?.pattern.test("the spec's removal")).toBe(true);
    expect(FORBIDDEN[2]?.pattern.test("Tested against a real Prometheus")).toBe(true);
    expect(FORBIDDEN[2]?.pattern.test("a test keeps the three equal")).toBe(true);
  });
});
