// The real promtool for tests (Debian's `prometheus` package, in .ci/apt-packages): rule files checked, and unit tests
// on synthetic series (alerts that must and must not fire, expressions evaluated to expected samples).
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";

export const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;
/** Runs where promtool is installed; in CI it must be (the test then fails loudly if it is not). */
export const withPromtool = hasPromtool || process.env.CI ? test : test.skip;

export interface PromtoolResult {
  readonly status: number | null;
  readonly out: string;
}

/** `promtool check rules` on a rule file, or `promtool test rules` on unit tests of it, in a scratch directory. */
export function promtool(command: "check" | "test", rules: unknown, tests: readonly unknown[] = []): PromtoolResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "promtool-"));
  try {
    fs.writeFileSync(path.join(dir, "rules.yml"), stringify(rules));
    fs.writeFileSync(path.join(dir, "tests.yml"), stringify({ rule_files: ["rules.yml"], evaluation_interval: "1m", tests }));
    const file = command === "check" ? "rules.yml" : "tests.yml";
    const r = spawnSync("promtool", [command, "rules", path.join(dir, file)], { encoding: "utf8", cwd: dir });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
