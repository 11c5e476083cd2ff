// docs/architecture.md against the repository: every dependency has its "why", the routing keys and defaults are the
// catalog schema's, and the relay benchmark the page quotes exists and compares the three clients it names.
import * as fs from "fs";
import * as path from "path";
import { RoutingSchema } from "../gateway/src/config/catalog";
import { REPO_ROOT } from "../infra/platform/charts";
import { codeSpans, readDoc } from "../infra/platform/docs-testing";

const page = readDoc("architecture.md");
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const section = (heading: string) => {
  const start = page.indexOf(`\n## ${heading}\n`);
  const end = page.indexOf("\n## ", start + 1);
  return page.slice(start, end === -1 ? undefined : end);
};

describe("docs/architecture.md", () => {
  test("says why for every dependency and development dependency", () => {
    const spans = codeSpans(section("Why each dependency was chosen"));
    const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)].filter((n) => !n.startsWith("@types/"));
    expect(names.filter((n) => !spans.has(n))).toEqual([]);
  });

  test("lists every routing key of the catalog with its default", () => {
    const defaults = RoutingSchema.parse({}) as Record<string, unknown>;
    const rows = section("The gateway's request path").split("\n");
    for (const [key, value] of Object.entries(defaults)) {
      const shown = typeof value === "string" ? `\`${value}\`` : String(value);
      expect({ key, row: rows.some((r) => r.startsWith(`| \`${key}\` | ${shown} |`)) }).toEqual({ key, row: true });
    }
  });

  test("quotes the relay benchmark that exists, for the clients it compares", () => {
    expect(pkg.scripts["bench:relay"]).toBe("tsx bench/relay-clients.ts");
    const bench = fs.readFileSync(path.join(REPO_ROOT, "bench", "relay-clients.ts"), "utf8");
    for (const client of ["undici request", "global fetch", "node:http"]) expect(bench).toContain(`"${client}"`);
    const at = page.indexOf("### The relay client, measured");
    const measured = page.slice(at, page.indexOf("\n#", at + 4));
    for (const client of ["undici `request`", "global `fetch`", "`node:http`"]) expect(measured).toContain(client);
    expect(measured).toMatch(/\d\.\d\d of the best\s+requests\/s/);
  });
});
