import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { once } from "node:events";
import { openSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { IMAGE_NODE_FLAGS } from "../../gateway/src/config/memory-bound";

export const ROOT = join(__dirname, "..", "..");
/** `node --import tsx` rather than the tsx launcher: signals (SIGTERM, SIGKILL) reach the server process itself. */
const NODE_TSX = [process.execPath, "--import", "tsx"] as const;

export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

/**
 * A TypeScript script as its own process; resolves with its first stdout line that parses as JSON. `prefix` runs
 * it through another command that execs it (`taskset -c 1`: pinned to a core).
 */
export async function spawnScript(script: string, args: string[], prefix: readonly string[] = []): Promise<{ ready: Record<string, unknown>; proc: ChildProcess }> {
  const argv = [...prefix, ...NODE_TSX, script, ...args];
  const proc = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split("\n")) {
        try {
          const parsed: unknown = JSON.parse(line);
          if (parsed && typeof parsed === "object") {
            proc.stdout!.off("data", onData);
            resolve(parsed as Record<string, unknown>);
            return;
          }
        } catch {
          /* not a complete JSON line yet */
        }
      }
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  proc.stdout!.resume();
  return { ready, proc };
}

/** A simulator as its own process; resolves with its URL once it prints its listening line. */
export async function spawnSimulator(args: string[], prefix: readonly string[] = []): Promise<{ url: string; proc: ChildProcess }> {
  const { ready, proc } = await spawnScript("simulator/src/cli.ts", args, prefix);
  return { url: String(ready.url), proc };
}

/** The production gateway entry point as its own process (under tsx); request logs go to /dev/null (still produced). */
export async function spawnGateway(
  env: Record<string, string>,
  port?: number,
): Promise<{ url: string; port: number; metricsUrl: string; proc: ChildProcess }> {
  port ??= await freePort();
  const metricsPort = await freePort();
  // The image's Node flags (heap caps), so the soak's memory figures behave as production's.
  const proc = spawn(NODE_TSX[0], [...IMAGE_NODE_FLAGS, ...NODE_TSX.slice(1), "gateway/src/cli/serve.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), GATEWAY_METRICS_PORT: String(metricsPort), GATEWAY_HOST: "127.0.0.1" },
    stdio: ["ignore", openSync("/dev/null", "w"), "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error("gateway did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, port, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, proc };
}

export async function stopAll(procs: ChildProcess[]): Promise<void> {
  await Promise.all(
    procs.map(async (p) => {
      if (p.exitCode !== null || p.signalCode !== null) return;
      const exited = once(p, "exit");
      p.kill("SIGTERM");
      await exited;
    }),
  );
}

/**
 * Spawns `command args` with its soft open-file limit raised to `limit`, or to the hard limit if that is
 * refused (root may raise both). Through sh only for `ulimit`; `exec` keeps the pid and signals the command's.
 */
export function spawnWithFileLimit(limit: number, command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const script = `ulimit -n ${limit} 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"`;
  return spawn("sh", ["-c", script, "sh", command, ...args], options);
}
