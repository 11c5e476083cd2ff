import { readFileSync } from "node:fs";
import { ApiError } from "../../src/api/errors";
import { catalogueSamples } from "../support/error-catalogue";
import { GATEWAY_API_DOC, generatedDoc } from "../../../scripts/gateway-docs";

/** docs/gateway-api.md is the contract of the limits and errors: it must say what the code does. */
describe("docs/gateway-api.md", () => {
  const doc = readFileSync(GATEWAY_API_DOC, "utf8");
  const start = doc.indexOf("\n## Errors\n");
  const next = doc.indexOf("\n## ", start + 1);
  const errorsSection = doc.slice(start, next < 0 ? undefined : next);

  it("has the Limits table and memory bound generated from the code (run `npm run docs:gateway`)", () => {
    expect(doc).toBe(generatedDoc(doc));
  });

  it("lists every status and code of the error catalogue", () => {
    // Placeholder arguments: only status and code matter here (invalidRequest's code is its own argument).
    const made = catalogueSamples("m", "x", 1, "y", {});
    for (const e of made) {
      expect(e).toBeInstanceOf(ApiError);
      const row = errorsSection.split("\n").find((l) => l.startsWith(`| ${e.status} |`) && (e.code === null ? l.includes("| null |") : l.includes(`\`${e.code}\``)));
      if (!row) throw new Error(`no row for ${e.status} ${e.code} in the Errors section`);
    }
  });
});
