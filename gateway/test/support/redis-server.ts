import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { freePort } from "../../../scripts/lib/processes";
import { describeWithBinary } from "./installed";

/** In CI a missing binary is a failure, locally a skip with a reason. */
export function describeWithRedis(name: string, fn: () => void): void {
  describeWithBinary("redis-server", "redis-server", name, fn);
}

export interface RunningRedis {
  url: string;
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** A throwaway redis-server on loopback: no persistence, its own port. */
export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  const launch = async () => {
    const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      let out = "";
      proc.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("Ready to accept connections")) resolve();
      });
      proc.once("exit", (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
    });
    proc.stdout!.resume();
    return proc;
  };
  const r: RunningRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    proc: await launch(),
    stop: async () => {
      if (r.proc.exitCode !== null || r.proc.signalCode !== null) return;
      const exited = once(r.proc, "exit");
      r.proc.kill("SIGKILL");
      await exited;
    },
    restart: async () => {
      await r.stop();
      r.proc = await launch();
    },
  };
  return r;
}
