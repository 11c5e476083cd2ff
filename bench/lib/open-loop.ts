import { Pool } from "undici";
import { percentile } from "./stats";

export interface OpenLoopResult {
  /** Latency percentiles in milliseconds: to the last byte, or to the first body byte (`first-byte`). */
  p50: number;
  p99: number;
  sent: number;
  errors: number;
}

export interface OpenLoopOptions {
  base: string;
  path: string;
  body: string;
  ratePerSecond: number;
  seconds: number;
  /** `full`: until the last byte; `first-byte`: until the first byte of the body (an SSE stream's first event). */
  measure: "full" | "first-byte";
  headers?: Record<string, string>;
  /** Each answered request: when it was sent (wall clock, ms since the epoch) and its latency in ms. */
  onSample?(sentAtMs: number, latencyMs: number): void;
}

/**
 * Open loop at a fixed rate: requests start on a fixed schedule whether or not earlier ones finished, so a slow
 * answer cannot hide the requests that would have queued behind it. Latency counts from when the request was
 * sent (the load generator's own lateness in keeping the schedule is not the target's).
 */
export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const pool = new Pool(o.base, { connections: 256, pipelining: 1 });
  const headers = { "content-type": "application/json", ...o.headers };
  const latencies: number[] = [];
  let errors = 0;
  const interval = 1000 / o.ratePerSecond;
  const total = Math.round(o.ratePerSecond * o.seconds);
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  const one = async () => {
    const t0 = performance.now();
    try {
      const res = await pool.request({ path: o.path, method: "POST", headers, body: o.body });
      let first: number | undefined;
      for await (const chunk of res.body) {
        if (first === undefined && (chunk as Buffer).length > 0) first = performance.now();
      }
      const end = performance.now();
      if (res.statusCode !== 200) errors++;
      else {
        const ms = (o.measure === "first-byte" ? (first ?? end) : end) - t0;
        latencies.push(ms);
        o.onSample?.(performance.timeOrigin + t0, ms);
      }
    } catch {
      errors++;
    }
  };
  for (let i = 0; i < total; i++) {
    const scheduled = started + i * interval;
    const wait = scheduled - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(one());
  }
  await Promise.all(inflight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), sent: total, errors };
}
