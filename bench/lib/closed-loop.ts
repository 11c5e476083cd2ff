import { Pool } from "undici";
import { percentile } from "./stats";

export interface RunResult {
  rps: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  errors: number;
}

export interface ClosedLoopOptions {
  /** Origin to load, e.g. http://127.0.0.1:8080. */
  base: string;
  path: string;
  body: string;
  /** `full`: until the last byte; `first-byte`: until the first chunk that carries generated text. */
  measure: "full" | "first-byte";
  seconds: number;
  concurrency: number;
  headers?: Record<string, string>;
}

/** Closed loop: `concurrency` workers send back-to-back POSTs for `seconds`; any non-200 counts as an error. */
export async function closedLoop(o: ClosedLoopOptions): Promise<RunResult> {
  const pool = new Pool(o.base, { connections: o.concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + o.seconds * 1000;
  const headers = { "content-type": "application/json", ...o.headers };
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: o.path, method: "POST", headers, body: o.body });
        if (o.measure === "first-byte") {
          let first: number | undefined;
          for await (const chunk of res.body) {
            if (first === undefined && String(chunk).includes('"content":"') && !String(chunk).includes('"content":""}')) first = performance.now();
          }
          latencies.push((first ?? performance.now()) - t0);
        } else {
          await res.body.dump();
          latencies.push(performance.now() - t0);
        }
        if (res.statusCode !== 200) errors++;
      } catch {
        errors++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}
