/**
 * Loaded into the gateway under test (`node --import`) by `npm run bench:tail`: writes every garbage collection
 * and every stall of the event loop to the file $STALL_LOG, with wall-clock times, so that slow requests can be
 * matched with what the process was doing. A stall is a 2 ms timer firing at least 3 ms late; with it goes how
 * long the main thread ran meanwhile (process.threadCpuUsage): running means a long task or a collection on the
 * main thread, not running means the thread was not scheduled (the core was busy with something else).
 * Lines: `gc <start ms> <duration ms> <kind>` and `stall <start ms> <late ms> <ran ms>`.
 */
import { openSync, writeSync } from "node:fs";
import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";

const out = openSync(process.env.STALL_LOG ?? "/dev/null", "w");
const PERIOD_MS = 2;
const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak",
};
const wall = (t: number) => (performance.timeOrigin + t).toFixed(1);

new PerformanceObserver((list) => {
  for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    writeSync(out, `gc ${wall(e.startTime)} ${e.duration.toFixed(2)} ${KINDS[e.detail?.kind ?? -1] ?? "other"}\n`);
  }
}).observe({ entryTypes: ["gc"] });

let last = performance.now();
let lastCpu = process.threadCpuUsage();
const tick = () => {
  const now = performance.now();
  const cpu = process.threadCpuUsage();
  const late = now - last - PERIOD_MS;
  if (late >= 3) {
    const ranMs = (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000;
    writeSync(out, `stall ${wall(last + PERIOD_MS)} ${late.toFixed(2)} ${ranMs.toFixed(2)}\n`);
  }
  last = now;
  lastCpu = cpu;
  setTimeout(tick, PERIOD_MS).unref();
};
setTimeout(tick, PERIOD_MS).unref();
