import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../scripts/lib/processes";
import { describeWithBinary } from "./installed";

/** In CI a missing binary is a failure, locally a skip with a reason. */
export function describeWithPrometheus(name: string, fn: () => void): void {
  describeWithBinary("prometheus", "prometheus", name, fn);
}

export interface RunningPrometheus {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** A throwaway Prometheus on loopback scraping `targets` (host:port, path /metrics) every `intervalSeconds`. */
export async function startPrometheus(targets: string[], intervalSeconds = 1): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "prometheus-"));
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: `${intervalSeconds}s`, evaluation_interval: `${intervalSeconds}s` },
      scrape_configs: [{ job_name: "gateway", static_configs: [{ targets }] }],
    }),
  );
  const port = await freePort();
  const proc = spawn("prometheus", [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  await new Promise<void>((resolve, reject) => {
    proc.stderr!.on("data", (d: Buffer) => {
      log += d.toString();
      if (log.includes("Server is ready to receive web requests")) resolve();
    });
    proc.once("exit", (code) => reject(new Error(`prometheus exited ${code}: ${log.slice(-2000)}`)));
  });
  proc.stderr!.resume();
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = once(proc, "exit");
        proc.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
