// Test helpers for the suites that run a Job's shell script for real against a server on loopback.
import { spawn } from "child_process";
import * as net from "net";

export interface Exited {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command with exactly `env`, collecting its output; killed after `timeoutMs`. Async, unlike spawnSync: the
 * server the script talks to runs in the test's own process and must keep serving while the script runs.
 */
export function exec(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 100_000): Promise<Exited> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A loopback port nothing listens on (just freed): for a server to start on, or for a store that is unreachable. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
