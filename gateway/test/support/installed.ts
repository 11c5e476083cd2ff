import { spawnSync } from "node:child_process";

/** True when `command --version` runs (a Debian package of .ci/apt-packages is installed). */
export function isInstalled(command: string): boolean {
  return spawnSync(command, ["--version"]).status === 0;
}

/**
 * A suite that needs a real binary: in CI a missing one is a failure (CI installs .ci/apt-packages), locally a
 * skip that says what to install.
 */
export function describeWithBinary(command: string, aptPackage: string, name: string, fn: () => void): void {
  if (isInstalled(command) || process.env.CI) describe(name, fn);
  else describe.skip(`${name} (${command} not installed: apt-get install ${aptPackage})`, fn);
}
