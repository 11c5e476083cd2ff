import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** A process and its children (nginx: the master and its workers), as /proc lists them. */
function family(pid: number): number[] {
  const out = [pid];
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    for (const k of kids ? kids.split(/\s+/) : []) out.push(...family(Number(k)));
  } catch {
    /* gone, or not Linux */
  }
  return out;
}

/** CPU seconds (user + system) the process and its children have used so far: the process's own accounting. */
export function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of family(pid)) {
    try {
      // Fields after the command name (which may hold spaces): state is 3rd, utime 14th, stime 15th.
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(rest[11]) + Number(rest[12]);
    } catch {
      /* exited */
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** Resident memory now and at its peak (VmRSS, VmHWM) of the process and its children, in bytes. */
export function residentBytes(pid: number): { rss: number; peak: number } {
  let rss = 0;
  let peak = 0;
  for (const p of family(pid)) {
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
      rss += kib("VmRSS");
      peak += kib("VmHWM");
    } catch {
      /* exited */
    }
  }
  return { rss, peak };
}

/**
 * Core pinning: with two or more cores and `taskset` installed, the proxy under test gets core 0 to itself and
 * everything else (simulators, load generator, this process) shares core 1, so the proxy's figures are its own.
 */
export interface Pinning {
  /** Command prefix that runs a program on the proxy's core (empty when pinning is not possible). */
  proxy: string[];
  /** Command prefix for the rest: simulators. */
  rest: string[];
  /** How the run was pinned, for the report. */
  description: string;
}

export function pinning(): Pinning {
  const taskset = ["/usr/bin/taskset", "/bin/taskset"].find((p) => existsSync(p));
  if (!taskset || cpus().length < 2 || process.platform !== "linux") {
    return { proxy: [], rest: [], description: "not pinned (needs Linux, taskset and two cores): every process shares every core" };
  }
  // This process (the load generator) and its threads go to core 1 too.
  execFileSync(taskset, ["-a", "-pc", "1", String(process.pid)], { stdio: "ignore" });
  return {
    proxy: [taskset, "-c", "0"],
    rest: [taskset, "-c", "1"],
    description: "the proxy under test (gateway or nginx) pinned to core 0; simulators and the load generator pinned to core 1",
  };
}
