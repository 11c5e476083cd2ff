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

/**
 * `promtool check rules` on a rule file, or `promtool test rules` on unit tests of it, in a scratch directory. Rules
 * are evaluated every `evaluationInterval` from 0 to the last evaluation time (a longer one for series of days).
 */
export function promtool(command: "check" | "test", rules: unknown, tests: readonly unknown[] = [], evaluationInterval = "1m"): PromtoolResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "promtool-"));
  try {
    fs.writeFileSync(path.join(dir, "rules.yml"), stringify(rules));
    fs.writeFileSync(path.join(dir, "tests.yml"), stringify({ rule_files: ["rules.yml"], evaluation_interval: evaluationInterval, tests }));
    const file = command === "check" ? "rules.yml" : "tests.yml";
    const r = spawnSync("promtool", [command, "rules", path.join(dir, file)], { encoding: "utf8", cwd: dir });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `promtool check config` on a Prometheus configuration as a pod would read it: every absolute path it names
 * (`*_file` fields, `rule_files`) is moved under a scratch root, where `files` (absolute path in the pod → content)
 * are written. A file the configuration names that `files` lacks is missing there, as it would be in the pod.
 */
export function promtoolCheckConfig(config: unknown, files: Readonly<Record<string, string>>): PromtoolResult {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "promtool-config-"));
  const rooted = (p: string) => (p.startsWith("/") ? path.join(root, p) : p);
  const relocate = (v: unknown, key?: string): unknown => {
    if (typeof v === "string") return key !== undefined && (key.endsWith("_file") || key === "rule_files") ? rooted(v) : v;
    if (Array.isArray(v)) return v.map((x) => relocate(x, key === "rule_files" ? key : undefined));
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, relocate(x, k)]));
    return v;
  };
  try {
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(rooted(file)), { recursive: true });
      fs.writeFileSync(rooted(file), content);
    }
    const configFile = path.join(root, "prometheus.yml");
    fs.writeFileSync(configFile, stringify(relocate(config)));
    const r = spawnSync("promtool", ["check", "config", configFile], { encoding: "utf8", cwd: root });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
